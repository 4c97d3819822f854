// slice: x with one axis cut to `shape[axis]` of its entries, taken with any
// start and step (ONNX Slice with a step, Swin's patch merging
// `x[..., 0::2, 0::2, :]`); `shape` is the output. Domain = the output's
// shape; the input follows it except along the axis, which is never split
// (which entries a device's block needs depends on the start and step).
// Data movement only, which edges price.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  const Shape out = node.checked("shape", node.required(node.node().shape, "shape"));
  v.axis = node.normalise_axis("axis", node.required(node.node().axis, "axis"), x.size());
  bool fits = out.size() == x.size();
  for (size_t d = 0; fits && d < x.size(); ++d)
    fits = d == static_cast<size_t>(v.axis) ? out[d] <= x[d] : out[d] == x[d];
  if (!fits)
    node.fail("shape", "expected '" + node.node().inputs[0] + "' " + shape_to_string(x) + " with axis " +
                           std::to_string(v.axis) + " cut to at most " + std::to_string(x[static_cast<size_t>(v.axis)]) +
                           ", got " + shape_to_string(out));
  v.outputs = {out};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.outputs[0], 1, 1);
  m.inputs[0][static_cast<size_t>(v.axis)].clear();
  m.splittable[static_cast<size_t>(v.axis)] = 0;
  return m;
}

}  // namespace

OpDefinition slice() {
  return OpDefinition("slice", OpKind::Slice).fields({"axis", "shape"}).infers(infer).models(model);
}

}  // namespace pase::ops
