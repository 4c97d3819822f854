// Data movement: reshapes, transposes, concatenation, splits, slices and
// gathers (an embedding when the table is a weight, also at a router's ids).
#include "onnximport/lowerings/lowerings.h"

#include "onnximport/onnx_model.h"

namespace pase {

void Lowerer::lower_reshape(const onnx::NodeProto& node, const std::vector<int>& slots) {
  const std::string& op = node.op_type();
  if (op == "Expand" && slots[0] != 0) return unsupported(node, "");
  if (slots.size() != 1 || slots[0] != 0) return unsupported(node, "its target shape depends on the data");
  const std::string& x = node.input(0);
  const Shape& out = shape_of(node, node.output(0));
  if (out == shape_of(node, x)) return alias(node.output(0), ref_of(node, x));
  NodeV1& n = emit(node, op == "Expand" ? "expand" : "reshape", {ref_of(node, x).ref}, {node.output(0)});
  n.shape = out;
}

void Lowerer::lower_tile(const onnx::NodeProto& node, const std::vector<int>& slots) {
  // repeat_interleave as the TorchScript exporter writes it (grouped-query
  // attention's keys): Unsqueeze, then Tile along the new size-1 axis, which
  // is the copy an Expand makes.
  if (slots != std::vector<int>{0}) return unsupported(node, "its repeats depend on the data");
  const Shape& in = shape_of(node, node.input(0));
  const Shape& out = shape_of(node, node.output(0));
  if (in.size() != out.size()) return unsupported(node, "changes the rank");
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != out[d] && in[d] != 1) return unsupported(node, "repeats an axis longer than 1");
  if (out == in) return alias(node.output(0), ref_of(node, node.input(0)));
  NodeV1& n = emit(node, "expand", {ref_of(node, node.input(0)).ref}, {node.output(0)});
  n.shape = out;
}

void Lowerer::lower_transpose(const onnx::NodeProto& node, const std::vector<int>& slots) {
  const std::string& x = node.input(slots[0]);
  int64_t rank = static_cast<int64_t>(shape_of(node, x).size());
  std::vector<int64_t> perm = ints_attribute(node, "perm").value_or(std::vector<int64_t>{});
  if (perm.empty())
    for (int64_t d = rank; d-- > 0;) perm.push_back(d);
  bool identity = true;
  for (int64_t d = 0; d < static_cast<int64_t>(perm.size()); ++d) identity = identity && perm[d] == d;
  if (identity) return alias(node.output(0), ref_of(node, x));
  NodeV1& n = emit(node, "transpose", {ref_of(node, x).ref}, {node.output(0)});
  n.perm = perm;
}

void Lowerer::lower_concat(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  std::vector<std::string> inputs;
  for (const std::string& in : node.input()) inputs.push_back(ref_of(node, in).ref);
  if (inputs.size() == 1) return alias(node.output(0), ref_of(node, node.input(0)));
  NodeV1& n = emit(node, "concat", inputs, {node.output(0)});
  n.axis = int_attribute(node, "axis", 0);
}

void Lowerer::lower_split(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  const Shape& in = shape_of(node, node.input(0));
  int64_t axis = int_attribute(node, "axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(in.size());
  std::vector<int64_t> parts;
  for (const std::string& out : node.output()) parts.push_back(shape_of(node, out).at(static_cast<size_t>(axis)));
  if (parts.size() == 1) return alias(node.output(0), ref_of(node, node.input(0)));
  std::vector<std::string> outs(node.output().begin(), node.output().end());
  NodeV1& n = emit(node, "split", {ref_of(node, node.input(0)).ref}, outs);
  n.axis = axis;
  n.parts = parts;
}

void Lowerer::lower_slice(const onnx::NodeProto& node, const std::vector<int>& slots) {
  // Not a step-1 cut (those join a split, see find_groups): a strided Slice of one axis.
  const std::string& x = node.input(slots[0]);
  const Shape& in = shape_of(node, x);
  const Shape& out = shape_of(node, node.output(0));
  std::vector<int64_t> cut;
  for (size_t d = 0; d < in.size() && d < out.size(); ++d)
    if (in[d] != out[d]) cut.push_back(static_cast<int64_t>(d));
  if (slots != std::vector<int>{0} || in.size() != out.size() || cut.size() > 1)
    return unsupported(node, "cuts more than one axis with a step");
  if (cut.empty()) return alias(node.output(0), ref_of(node, x));
  NodeV1& n = emit(node, "slice", {ref_of(node, x).ref}, {node.output(0)});
  n.axis = cut[0];
  n.shape = out;
}

void Lowerer::lower_gather(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  bool table_active = is_active(node.input(0));
  if (!table_active && data_input_behind(node.input(1))) {
    const Shape& table = shape_of(node, node.input(0));
    const Shape& ids = shape_of(node, node.input(1));
    if (table.size() != 2 || ids.size() != 2 || int_attribute(node, "axis", 0) != 0)
      return unsupported(node, "embedding needs a [vocab, dim] table and [batch, sequence] ids");
    NodeV1& n = emit(node, "embedding", {ref_of(node, node.input(1)).ref}, {node.output(0)});
    n.vocab = table[0];
    n.dim = table[1];
    name_weight(n, node.input(0));
    return;
  }
  if (!table_active) return unsupported(node, "embedding ids must be a graph input");
  unsupported(node, "gathers along a computed or multi-element index");
}

// GatherND of a weight at computed ids: a mixture of experts as today's
// exporter writes Hugging Face's `batched_mm` experts, each (token, choice)
// pair reading its routed expert's whole matrix, W[e] of W [E, a, b] at ids
// [N, 1]. That is an embedding of E rows of a·b (the one-hot of the ids
// times the table), whose [N, 1, a·b] output is viewed as [N, a, b].
void Lowerer::lower_gather_nd(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  const std::string& table = node.input(0);
  const std::string& ids = node.input(1);
  if (is_active(table)) return unsupported(node, "gathers from a computed tensor");
  if (int_attribute(node, "batch_dims", 0) != 0) return unsupported(node, "has batch_dims");
  const Shape& weight = shape_of(node, table);
  const Shape& index = shape_of(node, ids);
  if (weight.size() < 2 || index.size() != 2 || index[1] != 1)
    return unsupported(node, "expects a weight of rank 2 or more gathered along its first axis at ids [N, 1]");
  int64_t row = 1;
  for (size_t d = 1; d < weight.size(); ++d) row *= weight[d];
  NodeV1& gathered = emit(node, "embedding", {ref_of(node, ids).ref}, {});
  gathered.vocab = weight[0];
  gathered.dim = row;
  gathered.outputs = std::vector<Shape>{{index[0], 1, row}};
  name_weight(gathered, table);
  NodeV1& viewed = emit(node, "reshape", {gathered.name}, {node.output(0)});
  viewed.shape = shape_of(node, node.output(0));
}

std::vector<LoweringEntry> data_movement_lowerings() {
  return {
      {"Reshape", &Lowerer::lower_reshape},
      {"Flatten", &Lowerer::lower_reshape},
      {"Squeeze", &Lowerer::lower_reshape},
      {"Unsqueeze", &Lowerer::lower_reshape},
      {"Expand", &Lowerer::lower_reshape},
      {"Tile", &Lowerer::lower_tile},
      {"Transpose", &Lowerer::lower_transpose},
      {"Concat", &Lowerer::lower_concat},
      {"Split", &Lowerer::lower_split},
      {"Slice", &Lowerer::lower_slice},
      {"Gather", &Lowerer::lower_gather},
      {"GatherND", &Lowerer::lower_gather_nd}};
}

}  // namespace pase
