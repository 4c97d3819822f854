// Normalizations: BatchNormalization, LayerNormalization, and a LayerNorm
// or RMSNorm decomposed into primitives (norm_pattern.h).
#include "onnximport/lowerings/lowerings.h"

#include "onnximport/onnx_model.h"

namespace pase {

void Lowerer::lower_norm(const onnx::NodeProto& node, const NormMatch& m) {
  Shape in = shape_of(node, m.input);
  int64_t rank = static_cast<int64_t>(in.size());
  if (m.axis != -1 && m.axis != rank - 1) {
    // Not a last-axis norm: lower the pieces one by one instead.
    for (int n : m.nodes) absorbed_.erase(n);
    norms_.erase(m.first);
    return lower(m.first);
  }
  NodeV1 n;
  n.name = node.name();
  emitted_names_.insert(n.name);
  n.op = "norm";
  n.inputs = {ref_of(node, m.input).ref};
  n.outputs = std::vector<Shape>{in};
  refs_[m.output] = Ref{n.name, static_cast<int>(result_.graph.nodes.size()), {}};
  result_.graph.nodes.push_back(n);
}

void Lowerer::lower_batchnorm(const onnx::NodeProto& node, const std::vector<int>& slots) {
  for (int k = 1; k < node.output_size(); ++k)
    if (is_used(node.output(k)) && is_active(node.output(k))) return unsupported(node, "its running statistics are used");
  emit(node, "batchnorm", {ref_of(node, node.input(slots[0])).ref}, {node.output(0)});
  for (int k = 1; k <= 2 && k < node.input_size(); ++k) add_pointwise_weight(last_node(), node.input(k), 1);  // scale, B
}

void Lowerer::lower_layernorm(const onnx::NodeProto& node, const std::vector<int>& slots) {
  const std::string& x = node.input(slots[0]);
  int64_t rank = static_cast<int64_t>(shape_of(node, x).size());
  int64_t axis = int_attribute(node, "axis", -1);
  if (axis != -1 && axis != rank - 1) return unsupported(node, "normalises more than the last axis");
  NodeV1& n = emit(node, "norm", {ref_of(node, x).ref}, {node.output(0)});
  n.axis = -1;
  for (int k = 1; k <= 2 && k < node.input_size(); ++k) add_pointwise_weight(last_node(), node.input(k), std::nullopt);
}

std::vector<LoweringEntry> normalization_lowerings() {
  return {
      {"BatchNormalization", &Lowerer::lower_batchnorm},
      {"LayerNormalization", &Lowerer::lower_layernorm}};
}

}  // namespace pase
