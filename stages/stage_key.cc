#include "stages/stage_key.h"

#include <map>
#include <string>

#include "costmodel/model_key.h"
#include "graphs/vertex_model.h"

namespace pase {

StageKeys::StageKeys(const Graph& graph) : graph_(graph) {
  std::map<std::string, int64_t> kinds;
  std::map<std::string, int> last_reader;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const Vertex& vertex = graph.vertices[v];
    std::string key = model_key(build_vertex_model(vertex));
    key.append(reinterpret_cast<const char*>(&vertex.cutoff), sizeof vertex.cutoff);
    kind_.push_back(kinds.try_emplace(std::move(key), static_cast<int64_t>(kinds.size())).first->second);
    std::vector<std::string> weights = vertex.weight_names;
    for (const PointwiseWeight& weight : vertex.pointwise_weights) weights.push_back(weight.name);
    for (const VertexInput& input : vertex.inputs)
      if (input.parameter) weights.push_back(input.ref);
    std::vector<int> before;
    for (const std::string& name : weights) {
      auto [at, fresh] = last_reader.try_emplace(name, static_cast<int>(v));
      before.push_back(fresh ? -1 : at->second);
      at->second = static_cast<int>(v);
    }
    weight_before_.push_back(std::move(before));
  }
}

std::vector<int64_t> StageKeys::key(int begin, int end) const {
  std::vector<int64_t> key;
  for (int v = begin; v < end; ++v) {
    key.push_back(kind_[static_cast<size_t>(v)]);
    // Inputs: from inside the range (how far back, which port), or read from before it.
    for (const VertexInput& input : graph_.vertices[static_cast<size_t>(v)].inputs) {
      if (input.source.vertex >= begin) key.push_back((v - input.source.vertex) * 1024 + input.source.port);
      else if (input.source.vertex >= 0) key.push_back(-1);
    }
    // A weight read again inside the range (a tied weight) is held once.
    for (int before : weight_before_[static_cast<size_t>(v)]) key.push_back(before >= begin ? v - before : -2);
    key.push_back(-3);
  }
  return key;
}

std::vector<std::pair<int, int>> StageKeys::repeated_reads() const {
  std::vector<std::pair<int, int>> reads;
  for (size_t v = 0; v < weight_before_.size(); ++v)
    for (int before : weight_before_[v])
      if (before >= 0) reads.push_back({static_cast<int>(v), before});
  return reads;
}

}  // namespace pase
