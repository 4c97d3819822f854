#include "graphs/sequence_parallel.h"

#include <algorithm>

#include "graphs/megatron_layout.h"
#include "graphs/op_registry.h"

namespace pase {
namespace {

bool maps_dimension(const SplitMap& map, int dim) {
  return std::any_of(map.begin(), map.end(),
                     [dim](const std::vector<int>& dims) { return std::find(dims.begin(), dims.end(), dim) != dims.end(); });
}

bool is_weight_dimension(const Vertex& vertex, const VertexModel& model, int dim) {
  for (const WeightTensor& weight : model.weights)
    if (maps_dimension(weight.split, dim)) return true;
  for (size_t j = 0; j < vertex.inputs.size() && j < model.inputs.size(); ++j)
    if (vertex.inputs[j].parameter && maps_dimension(model.inputs[j], dim)) return true;
  return false;
}

bool has_weight(const Vertex& vertex, const VertexModel& model) {
  if (!model.weights.empty()) return true;
  return std::any_of(vertex.inputs.begin(), vertex.inputs.end(), [](const VertexInput& in) { return in.parameter; });
}

// The input the layer's activations arrive on: its first that is no weight.
const SplitMap* activation_input(const Vertex& vertex, const VertexModel& model) {
  for (size_t j = 0; j < vertex.inputs.size() && j < model.inputs.size(); ++j)
    if (!vertex.inputs[j].parameter) return &model.inputs[j];
  return nullptr;
}

// The op's own tensor-parallel role (what a ScatterOutput GEMM's output follows).
int op_tensor_parallel_dimension(const Vertex& vertex, const VertexModel& model) {
  const RoleDim role = op_definition(vertex.kind).roles.tensor_parallel_dim;
  return role ? role(vertex, model) : -1;
}

}  // namespace

int sequence_dimension(const Vertex& vertex, const VertexModel& model, const SplitMap& map, int tensor_parallel) {
  const int batch = batch_dimension(vertex, model);
  for (size_t t = 0; t < map.size(); ++t) {
    if (map[t].size() != 1) continue;
    const int dim = map[t][0];
    if (dim != batch && dim != tensor_parallel && model.domain[static_cast<size_t>(dim)] > 1 &&
        !is_weight_dimension(vertex, model, dim))
      return static_cast<int>(t);
  }
  return -1;
}

SequenceParallel sequence_parallel_role(const Graph& graph, int v, const VertexModel& model) {
  const Vertex& vertex = graph.vertices[static_cast<size_t>(v)];
  const int tp = megatron_tensor_dimension(graph, v, model);
  if (tp < 0 || !has_weight(vertex, model) || model.outputs.empty()) return SequenceParallel::None;
  const SplitMap& output = model.outputs[0];
  if (!maps_dimension(output, tp) && tp == op_tensor_parallel_dimension(vertex, model))
    return sequence_dimension(vertex, model, output, tp) >= 0 ? SequenceParallel::ScatterOutput : SequenceParallel::None;
  const SplitMap* input = activation_input(vertex, model);
  if (input && !maps_dimension(*input, tp) && sequence_dimension(vertex, model, *input, tp) >= 0)
    return SequenceParallel::GatherInput;
  return SequenceParallel::None;
}

void scatter_output_over_sequence(const Vertex& vertex, VertexModel& model) {
  const int tp = op_tensor_parallel_dimension(vertex, model);
  if (tp < 0 || model.outputs.empty()) return;
  const int t = sequence_dimension(vertex, model, model.outputs[0], tp);
  if (t >= 0) model.outputs[0][static_cast<size_t>(t)].push_back(tp);
}

void set_sequence_parallel(Graph& graph) {
  std::vector<SequenceParallel> roles(graph.vertices.size());
  for (size_t v = 0; v < roles.size(); ++v) {
    Vertex plain = graph.vertices[v];
    plain.sequence_parallel = SequenceParallel::None;
    roles[v] = sequence_parallel_role(graph, static_cast<int>(v), build_vertex_model(plain));
  }
  for (size_t v = 0; v < roles.size(); ++v) graph.vertices[v].sequence_parallel = roles[v];
}

const char* sequence_parallel_name(SequenceParallel role) {
  switch (role) {
    case SequenceParallel::ScatterOutput: return "scatter_output";
    case SequenceParallel::GatherInput: return "gather_input";
    case SequenceParallel::None: break;
  }
  return "";
}

}  // namespace pase
