#include "graphs/op_registry.h"

#include <algorithm>

#include "base/check.h"
#include "graphs/ops/ops.h"
#include "graphs/sequence_parallel.h"

namespace pase {
namespace {

// Indexed by OpKind: the table of graphs/ops/op_list.h. Each definition
// must state the kind of its own line.
const std::vector<OpDefinition>& definitions() {
  static const std::vector<OpDefinition> table = [] {
    std::vector<OpDefinition> list = {
#define PASE_OP(kind, definition) ops::definition(),
#include "graphs/ops/op_list.h"
#undef PASE_OP
    };
    for (size_t k = 0; k < list.size(); ++k) PASE_ASSERT(static_cast<size_t>(list[k].kind) == k, list[k].name, k);
    return list;
  }();
  return table;
}

}  // namespace

const OpDefinition& op_definition(OpKind kind) {
  const std::vector<OpDefinition>& table = definitions();
  size_t k = static_cast<size_t>(kind);
  PASE_ASSERT(k < table.size(), k, table.size());
  return table[k];
}

const OpDefinition* find_op(const std::string& name) {
  for (const OpDefinition& op : definitions())
    if (op.in_files && op.name == name) return &op;
  return nullptr;
}

const std::vector<std::string>& known_ops() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const OpDefinition& op : definitions())
      if (op.in_files) list.push_back(op.name);
    std::sort(list.begin(), list.end());
    return list;
  }();
  return names;
}

bool op_takes_field(const OpDefinition& op, const std::string& field) {
  auto listed = [&](const std::vector<std::string>& fields) {
    return std::find(fields.begin(), fields.end(), field) != fields.end();
  };
  return listed(op.required_fields) || listed(op.optional_fields);
}

int batch_dimension(const Vertex& vertex, const VertexModel& model) {
  RoleDim role = op_definition(vertex.kind).roles.batch_dim;
  return role ? role(vertex, model) : 0;  // conv/pool "b", fc's first dim, embedding 'a', shape-domain ops
}

VertexModel build_vertex_model(const Vertex& vertex) {
  const OpDefinition& op = op_definition(vertex.kind);
  PASE_ASSERT(op.model != nullptr, op.name);
  VertexModel model = op.model(vertex);
  // Whether the step updates the GEMM's B operand (the calibrated model prices
  // the optimizer's pass over it); the ops' own builders need not know.
  model.work.weight_operand =
      !model.work.m.empty() && (!model.weights.empty() || (vertex.inputs.size() > 1 && vertex.inputs[1].parameter));
  model.recompute = vertex.recompute;
  model.zero = vertex.zero;
  model.fused_scores = vertex.fused_scores;
  model.sequence_parallel = vertex.sequence_parallel;
  if (vertex.sequence_parallel == SequenceParallel::ScatterOutput) scatter_output_over_sequence(vertex, model);
  return model;
}

}  // namespace pase
