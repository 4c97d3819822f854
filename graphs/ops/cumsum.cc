// cumsum: ONNX CumSum along `axis` (a MoE token's position in its expert's
// queue): x → x, each entry the sum of those before it (or up to it) along
// the axis. Domain = x's shape with the axis unsplittable: a scan carries
// its running total from one entry to the next, so a device needs the whole
// axis (splitting it would need an exchange of partial sums that this cost
// does not price). One addition per element.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  v.axis = node.normalise_axis("axis", node.required(node.node().axis, "axis"), node.input(0).size());
  return same_shape_output(std::move(v));
}

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, 1, 1);
  m.splittable[static_cast<size_t>(v.axis)] = 0;
  return m;
}

}  // namespace

OpDefinition cumsum() {
  return OpDefinition("cumsum", OpKind::CumSum).fields({"axis"}).infers(infer).models(model)
      .works(describe_one_per_element);
}

}  // namespace pase::ops
