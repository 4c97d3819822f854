#include "graphs/stage_graph.h"

#include <algorithm>
#include <set>
#include <utility>

#include "graphs/recompute.h"

namespace pase {

Graph stage_graph(const Graph& graph, int begin, int end) {
  Graph stage;
  stage.name = graph.name;
  stage.source = graph.source;
  stage.replaced = graph.replaced;
  std::set<std::string> read;
  for (int v = begin; v < end; ++v) {
    Vertex vertex = graph.vertices[static_cast<size_t>(v)];
    for (VertexInput& input : vertex.inputs) {
      if (input.source.vertex >= 0 && input.source.vertex < begin) input.source = TensorSource{};  // from an earlier stage
      else if (input.source.vertex >= begin) input.source.vertex -= begin;
      if (input.source.vertex < 0) read.insert(input.ref);
    }
    for (const std::string& name : vertex.weight_names) read.insert(name);
    for (const PointwiseWeight& weight : vertex.pointwise_weights) read.insert(weight.name);
    stage.vertices.push_back(std::move(vertex));
  }
  for (const TensorEdge& edge : graph.edges)
    if (edge.src >= begin && edge.dst < end && edge.dst >= begin)
      stage.edges.push_back({edge.src - begin, edge.src_port, edge.dst - begin, edge.dst_port});
  for (const std::string& name : graph.parameters)
    if (read.count(name)) stage.parameters.push_back(name);
  for (const auto& [name, shape] : graph.checkpoint_shapes)
    if (read.count(name)) stage.checkpoint_shapes.emplace(name, shape);
  return stage;
}

std::vector<int> stage_starts(const Graph& graph) {
  const std::vector<char> boundary = block_boundaries(graph);
  std::vector<int> starts = {0};
  const int n = static_cast<int>(graph.vertices.size());
  for (int v = 1; v < n; ++v)
    if (boundary[static_cast<size_t>(v - 1)]) starts.push_back(v);
  starts.push_back(n);
  return starts;
}

uint64_t crossing_elements(const Graph& graph, int cut) {
  std::set<std::pair<int, int>> crossing;
  for (const TensorEdge& edge : graph.edges)
    if (edge.src < cut && edge.dst >= cut) crossing.insert({edge.src, edge.src_port});
  uint64_t elements = 0;
  for (const auto& [vertex, port] : crossing) {
    uint64_t count = 1;
    for (int64_t extent : graph.vertices[static_cast<size_t>(vertex)].outputs[static_cast<size_t>(port)])
      count *= static_cast<uint64_t>(extent);
    elements += count;
  }
  return elements;
}

}  // namespace pase
