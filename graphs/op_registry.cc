#include "graphs/op_registry.h"

#include <algorithm>

#include "graphs/check.h"
#include "graphs/ops/ops.h"

namespace pase {
namespace {

// The table: one line per op family.
const std::vector<OpDefinition>& definitions() {
  static const std::vector<OpDefinition> table = {
      ops::fc(),          ops::einsum(),       ops::matmul(),    ops::embedding(), ops::conv2d(),
      ops::pool2d(),      ops::elementwise(),  ops::norm(),      ops::batchnorm(), ops::softmax(),
      ops::softmax_xent(), ops::reduce_mean(), ops::concat(),    ops::split(),     ops::reshape(),
      ops::ravel(),       ops::transpose(),    ops::stack(),     ops::unstack(),   ops::lstm(),
  };
  return table;
}

// Kind -> definition, checked once: every kind defined exactly once.
const std::vector<const OpDefinition*>& by_kind() {
  static const std::vector<const OpDefinition*> index = [] {
    std::vector<const OpDefinition*> out;
    for (const OpDefinition& op : definitions()) {
      size_t k = static_cast<size_t>(op.kind);
      if (out.size() <= k) out.resize(k + 1, nullptr);
      PASE_ASSERT(out[k] == nullptr, op.name, out[k]->name);
      out[k] = &op;
    }
    return out;
  }();
  return index;
}

}  // namespace

const OpDefinition& op_definition(OpKind kind) {
  const auto& index = by_kind();
  size_t k = static_cast<size_t>(kind);
  PASE_ASSERT(k < index.size() && index[k] != nullptr, k, index.size());
  return *index[k];
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

VertexModel build_vertex_model(const Vertex& vertex) {
  const OpDefinition& op = op_definition(vertex.kind);
  PASE_ASSERT(op.model != nullptr, op.name);
  return op.model(vertex);
}

}  // namespace pase
