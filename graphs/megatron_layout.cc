#include "graphs/megatron_layout.h"

#include "graphs/op_registry.h"

namespace pase {
namespace {

// Whether every reader of v's outputs is a loss (and there is one).
bool read_only_by_loss(const Graph& graph, int v) {
  bool read = false;
  for (const TensorEdge& edge : graph.edges) {
    if (edge.src != v) continue;
    if (graph.vertices[static_cast<size_t>(edge.dst)].kind != OpKind::SoftmaxXent) return false;
    read = true;
  }
  return read;
}

}  // namespace

int megatron_tensor_dimension(const Graph& graph, int v, const VertexModel& model) {
  const Vertex& vertex = graph.vertices[static_cast<size_t>(v)];
  const BaselineRoles& roles = op_definition(vertex.kind).roles;
  if (roles.tensor_parallel_dim) return roles.tensor_parallel_dim(vertex, model);
  if (vertex.kind == OpKind::Fc && roles.owt_dim && read_only_by_loss(graph, v)) return roles.owt_dim(vertex, model);
  return -1;
}

}  // namespace pase
