// Index ops: ArgMax and ArgMin, TopK, OneHot, CumSum, ScatterElements and
// ScatterND.
#include "onnximport/lowerings/lowerings.h"

#include "onnximport/onnx_model.h"

namespace pase {

void Lowerer::lower_argmax(const onnx::NodeProto& node, const std::vector<int>& slots) {
  NodeV1& n = emit(node, "argmax", {ref_of(node, node.input(slots[0])).ref}, {node.output(0)});
  n.axis = int_attribute(node, "axis", 0);
  n.keepdims = int_attribute(node, "keepdims", 1) != 0;
}

void Lowerer::lower_topk(const onnx::NodeProto& node, const std::vector<int>& slots) {
  std::optional<std::vector<int64_t>> k = input_ints(node, 1);
  if (slots != std::vector<int>{0} || !k || k->size() != 1) return unsupported(node, "k is not a constant");
  NodeV1& n = emit(node, "topk", {ref_of(node, node.input(0)).ref}, {node.output(0), node.output(1)});
  n.k = k->front();
  n.axis = int_attribute(node, "axis", -1);
}

void Lowerer::lower_one_hot(const onnx::NodeProto& node, const std::vector<int>& slots) {
  std::optional<std::vector<int64_t>> depth = input_ints(node, 1);
  if (slots != std::vector<int>{0} || !depth || depth->size() != 1)
    return unsupported(node, "its depth or values are computed from the data");
  NodeV1& n = emit(node, "one_hot", {ref_of(node, node.input(0)).ref}, {node.output(0)});
  n.depth = depth->front();
  n.axis = int_attribute(node, "axis", -1);
}

void Lowerer::lower_cumsum(const onnx::NodeProto& node, const std::vector<int>& slots) {
  std::optional<std::vector<int64_t>> axis = input_ints(node, 1);
  if (slots != std::vector<int>{0} || !axis || axis->size() != 1) return unsupported(node, "its axis is not a constant");
  NodeV1& n = emit(node, "cumsum", {ref_of(node, node.input(0)).ref}, {node.output(0)});
  n.axis = axis->front();
}

void Lowerer::lower_scatter_elements(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  if (string_attribute(node, "reduction", "none") != "none") return unsupported(node, "a reduction");
  if (!is_active(node.input(1)) || !is_active(node.input(2)))
    return unsupported(node, "indices or updates that are constants");
  std::vector<std::string> inputs;
  if (is_active(node.input(0))) inputs.push_back(ref_of(node, node.input(0)).ref);
  inputs.push_back(ref_of(node, node.input(1)).ref);
  inputs.push_back(ref_of(node, node.input(2)).ref);
  NodeV1& n = emit(node, "scatter", inputs, {node.output(0)});
  if (inputs.size() == 2) n.shape = shape_of(node, node.output(0));
  n.axis = int_attribute(node, "axis", 0);
}

void Lowerer::lower_scatter_nd(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  // Indices (and data or updates) may be constants: external tensors of their shapes.
  if (string_attribute(node, "reduction", "none") != "none") return unsupported(node, "a reduction");
  emit(node, "scatter_nd",
       {ref_of(node, node.input(0)).ref, ref_of(node, node.input(1)).ref, ref_of(node, node.input(2)).ref},
       {node.output(0)});
}

std::vector<LoweringEntry> index_lowerings() {
  return {
      {"ArgMax", &Lowerer::lower_argmax},
      {"ArgMin", &Lowerer::lower_argmax},
      {"TopK", &Lowerer::lower_topk},
      {"OneHot", &Lowerer::lower_one_hot},
      {"CumSum", &Lowerer::lower_cumsum},
      {"ScatterElements", &Lowerer::lower_scatter_elements},
      {"ScatterND", &Lowerer::lower_scatter_nd}};
}

}  // namespace pase
