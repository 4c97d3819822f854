// Reductions: ReduceMean and ReduceSum, Softmax and LogSoftmax.
#include "onnximport/lowerings/lowerings.h"

#include "onnximport/onnx_model.h"

namespace pase {

void Lowerer::lower_reduce_mean(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  const Shape& in = shape_of(node, node.input(0));
  // ReduceSum costs what ReduceMean does (the all-reduce of the partial
  // sums); it takes its axes as an input from opset 13, ReduceMean from 18
  // (unless rewritten to the attribute for the linked library: newer_opsets.h).
  const bool axes_input = node.input_size() > 1 && !node.input(1).empty();
  std::optional<std::vector<int64_t>> axes = axes_input ? input_ints(node, 1) : ints_attribute(node, "axes");
  std::vector<int64_t> all;
  if (!axes || axes->empty()) {
    for (size_t d = 0; d < in.size(); ++d) all.push_back(static_cast<int64_t>(d));
    axes = all;
  }
  NodeV1& n = emit(node, "reduce_mean", {ref_of(node, node.input(0)).ref}, {node.output(0)});
  n.axes = *axes;
  n.keepdims = int_attribute(node, "keepdims", 1) != 0;
}

void Lowerer::lower_softmax(const onnx::NodeProto& node, const std::vector<int>& slots) {
  NodeV1& n = emit(node, "softmax", {ref_of(node, node.input(slots[0])).ref}, {node.output(0)});
  n.axis = int_attribute(node, "axis", opset_ >= 13 ? -1 : 1);
}

std::vector<LoweringEntry> reduction_lowerings() {
  return {
      {"ReduceMean", &Lowerer::lower_reduce_mean},
      {"ReduceSum", &Lowerer::lower_reduce_mean},
      {"Softmax", &Lowerer::lower_softmax},
      {"LogSoftmax", &Lowerer::lower_softmax}};
}

}  // namespace pase
