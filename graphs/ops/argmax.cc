// argmax: ONNX ArgMax or ArgMin along `axis` (a MoE router's top-1 and
// top-2 expert): x → the position of the extreme entry of each row, without
// the axis (size 1 with `keepdims`). Domain = x's shape with the axis
// unsplittable, as topk's: each device needs whole rows to select from. One
// comparison per element of x.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  v.axis = node.normalise_axis("axis", node.required(node.node().axis, "axis"), x.size());
  v.keepdims = node.node().keepdims.value_or(false);
  Shape out = x;
  if (v.keepdims) out[static_cast<size_t>(v.axis)] = 1;
  else out.erase(out.begin() + v.axis);
  if (out.empty()) node.fail("axis", "the only axis of '" + node.node().inputs[0] + "' " + shape_to_string(x) +
                                         " leaves a scalar; set keepdims");
  v.outputs = {out};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, 1, 1);
  const auto axis = static_cast<size_t>(v.axis);
  m.splittable[axis] = 0;
  if (v.keepdims) m.outputs[0][axis].clear();
  else m.outputs[0].erase(m.outputs[0].begin() + v.axis);
  return m;
}

}  // namespace

OpDefinition argmax() {
  return OpDefinition("argmax", OpKind::ArgMax).fields({"axis"}, {"keepdims"}).infers(infer).models(model)
      .works(describe_one_per_element);
}

}  // namespace pase::ops
