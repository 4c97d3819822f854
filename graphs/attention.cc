#include "graphs/attention.h"

namespace pase {
namespace {

// The vertices that read any output of each vertex.
std::vector<std::vector<int>> readers(const Graph& graph) {
  std::vector<std::vector<int>> out(graph.vertices.size());
  for (const TensorEdge& e : graph.edges) out[static_cast<size_t>(e.src)].push_back(e.dst);
  return out;
}

bool einsum_of_activations(const Vertex& v) {
  if (v.kind != OpKind::Einsum || v.inputs.size() != 2) return false;
  for (const VertexInput& input : v.inputs)
    if (input.source.vertex < 0) return false;
  return true;
}

}  // namespace

std::vector<char> attention_scores(const Graph& graph) {
  const std::vector<std::vector<int>> read_by = readers(graph);
  std::vector<char> scores(graph.vertices.size(), 0);
  for (size_t s = 0; s < graph.vertices.size(); ++s) {
    const Vertex& softmax = graph.vertices[s];
    if (softmax.kind != OpKind::Softmax || softmax.inputs.size() != 1) continue;
    const int l = softmax.inputs[0].source.vertex;
    if (l < 0 || !einsum_of_activations(graph.vertices[static_cast<size_t>(l)])) continue;
    if (read_by[static_cast<size_t>(l)].size() != 1 || read_by[s].empty()) continue;
    bool applied = true;
    for (int c : read_by[s]) applied = applied && graph.vertices[static_cast<size_t>(c)].kind == OpKind::Einsum;
    if (!applied) continue;
    scores[s] = 1;
    scores[static_cast<size_t>(l)] = 1;
  }
  return scores;
}

void set_fused_attention(Graph& graph, bool fused) {
  const std::vector<char> scores = attention_scores(graph);
  for (size_t v = 0; v < graph.vertices.size(); ++v) graph.vertices[v].fused_scores = fused && scores[v];
}

}  // namespace pase
