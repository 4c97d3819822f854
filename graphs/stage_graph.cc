#include "graphs/stage_graph.h"

#include <algorithm>
#include <set>
#include <utility>

#include "graphs/recompute.h"

namespace pase {

Graph stage_graph(const Graph& graph, int begin, int end) { return stage_graph(graph, {{begin, end}}); }

Graph stage_graph(const Graph& graph, const std::vector<std::pair<int, int>>& ranges) {
  Graph stage;
  stage.name = graph.name;
  stage.source = graph.source;
  stage.replaced = graph.replaced;
  std::vector<int> position(graph.vertices.size(), -1);  // each vertex's index in the stage, -1 outside it
  int next = 0;
  for (const auto& [begin, end] : ranges)
    for (int v = begin; v < end; ++v) position[static_cast<size_t>(v)] = next++;
  std::set<std::string> read;
  for (const auto& [begin, end] : ranges)
    for (int v = begin; v < end; ++v) {
      Vertex vertex = graph.vertices[static_cast<size_t>(v)];
      for (VertexInput& input : vertex.inputs) {
        if (input.source.vertex >= 0) {
          const int at = position[static_cast<size_t>(input.source.vertex)];
          if (at < 0) input.source = TensorSource{};  // from another stage
          else input.source.vertex = at;
        }
        if (input.source.vertex < 0) read.insert(input.ref);
      }
      for (const std::string& name : vertex.weight_names) read.insert(name);
      for (const PointwiseWeight& weight : vertex.pointwise_weights) read.insert(weight.name);
      stage.vertices.push_back(std::move(vertex));
    }
  for (const TensorEdge& edge : graph.edges) {
    const int src = position[static_cast<size_t>(edge.src)], dst = position[static_cast<size_t>(edge.dst)];
    if (src >= 0 && dst >= 0) stage.edges.push_back({src, edge.src_port, dst, edge.dst_port});
  }
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
