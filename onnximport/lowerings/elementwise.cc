// Elementwise ops: binary arithmetic, comparisons and logic as elementwise
// vertices (a weight operand a bias or scale of its producer); activations
// and Dropout folded into their producer's pointwise count.
#include "onnximport/lowerings/lowerings.h"

#include <algorithm>
#include "onnximport/lowering_helpers.h"
#include "onnximport/onnx_model.h"

namespace pase {

void Lowerer::lower_binary(const onnx::NodeProto& node, const std::vector<int>& slots) {
  const Shape& out = shape_of(node, node.output(0));
  if (slots.size() == 1) {
    const std::string& x = node.input(slots[0]);
    if (shape_of(node, x) != out) {
      // A constant widens the activation (a [b, s, 1] scale times a
      // [b, s, d] constant): the broadcast, then the operation.
      return emit_expand_then_elementwise(node, ref_of(node, x), out);
    }
    // A bias, scale or constant applied to one activation: pointwise work of
    // its producer, which also lists the bias or scale among its weights.
    Ref in = ref_of(node, x);
    if (!is_one_of(node.op_type(), {"Add", "Sub", "Mul", "Div"})) return fold(node.output(0), in, 1);
    std::vector<std::string> others;
    for (int k = 0; k < node.input_size(); ++k)
      if (k != slots[0] && !node.input(k).empty()) others.push_back(node.input(k));
    if (in.node < 0) {
      // No single-output layer produces `x` (a graph input, an output of a
      // split): a bias or scale gets a vertex of its own that lists it,
      // costed as the elementwise op it is.
      auto is_weight = [&](const std::string& t) { return as_pointwise_weight(t, out, std::nullopt).has_value(); };
      if (std::any_of(others.begin(), others.end(), is_weight)) {
        emit(node, "elementwise", {in.ref}, {node.output(0)});
        for (const std::string& t : others) add_pointwise_weight(last_node(), t, std::nullopt);
        return;
      }
    }
    for (const std::string& t : others) add_pointwise_weight(in.node, t, std::nullopt);
    const bool own_affine = in.node >= 0 && prices_own_affine(result_.graph.nodes[in.node].op) &&
                            std::all_of(others.begin(), others.end(), [&](const std::string& t) {
                              return as_pointwise_weight(t, out, std::nullopt).has_value();
                            });
    return fold(node.output(0), in, own_affine ? 0 : 1);
  }
  // Activations broadcast against each other (a bias [s, d] computed from
  // the data, a squeeze-excitation scale [b, c, 1, 1]): one elementwise
  // vertex over the output. A constant operand must not widen the output.
  std::vector<std::string> inputs;
  Shape broadcast;
  for (int slot : slots) {
    const Shape& in = shape_of(node, node.input(slot));
    if (in.size() > broadcast.size()) broadcast.insert(broadcast.begin(), in.size() - broadcast.size(), 1);
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t& b = broadcast[broadcast.size() - in.size() + d];
      b = b == 1 ? in[d] : b;
    }
    inputs.push_back(ref_of(node, node.input(slot)).ref);
  }
  if (broadcast != out) return unsupported(node, "a constant operand broadcasts the activations to " + join_shape(out));
  emit(node, "elementwise", inputs, {node.output(0)});
}

void Lowerer::emit_expand_then_elementwise(const onnx::NodeProto& node, const Ref& x, const Shape& out) {
  NodeV1 e;
  e.name = unique_name(node.name() + "/expand");
  e.op = "expand";
  e.inputs = {x.ref};
  e.shape = out;
  e.outputs = std::vector<Shape>{out};
  result_.graph.nodes.push_back(e);
  emit(node, "elementwise", {e.name}, {node.output(0)});
}

void Lowerer::lower_pointwise(const onnx::NodeProto& node, const std::vector<int>& slots) {
  if (slots.size() != 1 || slots[0] != 0) return unsupported(node, "");
  const std::string& x = node.input(0);
  if (shape_of(node, node.output(0)) != shape_of(node, x)) return unsupported(node, "changes the shape");
  fold(node.output(0), ref_of(node, x), pointwise_count(node.op_type()));
}

void Lowerer::lower_cast_like(const onnx::NodeProto& node, const std::vector<int>& slots) {
  // Input 1 gives only the type: a cast of input 0, which costs nothing.
  if (slots.empty() || slots[0] != 0) return unsupported(node, "casts a constant like an activation");
  fold(node.output(0), ref_of(node, node.input(0)), 0);
}

void Lowerer::lower_dropout(const onnx::NodeProto& node, const std::vector<int>& slots) {
  if (node.output_size() > 1 && is_used(node.output(1))) return unsupported(node, "its mask output is used");
  fold(node.output(0), ref_of(node, node.input(slots[0])), drops_nothing(node) ? 0 : 1);
}

bool Lowerer::drops_nothing(const onnx::NodeProto& node) const {
  if (const onnx::AttributeProto* ratio = find_attribute(node, "ratio")) return ratio->f() == 0.0f;
  if (node.input_size() < 2 || node.input(1).empty()) return false;
  const ConstantValue* ratio = facts_.value(node.input(1));
  return ratio != nullptr && ratio->data.size() == 1 && ratio->data[0] == 0.0;
}

std::vector<LoweringEntry> elementwise_lowerings() {
  return {
      {"Add", &Lowerer::lower_binary},
      {"Sub", &Lowerer::lower_binary},
      {"Mul", &Lowerer::lower_binary},
      {"Div", &Lowerer::lower_binary},
      {"Pow", &Lowerer::lower_binary},
      {"Max", &Lowerer::lower_binary},
      {"Min", &Lowerer::lower_binary},
      {"Sum", &Lowerer::lower_binary},
      {"Mod", &Lowerer::lower_binary},
      {"Where", &Lowerer::lower_binary},
      {"Equal", &Lowerer::lower_binary},
      {"Less", &Lowerer::lower_binary},
      {"Greater", &Lowerer::lower_binary},
      {"LessOrEqual", &Lowerer::lower_binary},
      {"GreaterOrEqual", &Lowerer::lower_binary},
      {"And", &Lowerer::lower_binary},
      {"Or", &Lowerer::lower_binary},
      {"Xor", &Lowerer::lower_binary},
      {"Not", &Lowerer::lower_binary},
      {"Identity", &Lowerer::lower_pointwise},
      {"Cast", &Lowerer::lower_pointwise},
      {"CastLike", &Lowerer::lower_cast_like},
      {"Relu", &Lowerer::lower_pointwise},
      {"LeakyRelu", &Lowerer::lower_pointwise},
      {"Sigmoid", &Lowerer::lower_pointwise},
      {"Tanh", &Lowerer::lower_pointwise},
      {"Erf", &Lowerer::lower_pointwise},
      {"Gelu", &Lowerer::lower_pointwise},
      {"Elu", &Lowerer::lower_pointwise},
      {"Selu", &Lowerer::lower_pointwise},
      {"Softplus", &Lowerer::lower_pointwise},
      {"Softsign", &Lowerer::lower_pointwise},
      {"HardSigmoid", &Lowerer::lower_pointwise},
      {"HardSwish", &Lowerer::lower_pointwise},
      {"Exp", &Lowerer::lower_pointwise},
      {"Log", &Lowerer::lower_pointwise},
      {"Sqrt", &Lowerer::lower_pointwise},
      {"Neg", &Lowerer::lower_pointwise},
      {"Abs", &Lowerer::lower_pointwise},
      {"Reciprocal", &Lowerer::lower_pointwise},
      {"Clip", &Lowerer::lower_pointwise},
      {"Sin", &Lowerer::lower_pointwise},
      {"Cos", &Lowerer::lower_pointwise},
      {"Mish", &Lowerer::lower_pointwise},
      {"Celu", &Lowerer::lower_pointwise},
      {"ThresholdedRelu", &Lowerer::lower_pointwise},
      {"Floor", &Lowerer::lower_pointwise},
      {"Ceil", &Lowerer::lower_pointwise},
      {"Round", &Lowerer::lower_pointwise},
      {"Sign", &Lowerer::lower_pointwise},
      {"IsNaN", &Lowerer::lower_pointwise},
      {"IsInf", &Lowerer::lower_pointwise},
      {"Dropout", &Lowerer::lower_dropout}};
}

}  // namespace pase
