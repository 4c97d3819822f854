// stack (a new dimension of size = the number of inputs) and unstack (one
// output per index of an unsplit axis); data movement only.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer_stack(const NodeContext& node, Vertex v) {
  node.expect_same_shapes(1, "stacked tensors must have the same shape");
  const Shape& x = node.input(0);
  v.axis = node.normalise_axis("axis", node.node().axis.value_or(0), x.size(), /*allow_end=*/true);
  Shape out = x;
  out.insert(out.begin() + v.axis, static_cast<int64_t>(node.inputs().size()));
  v.outputs = {node.checked("inputs", out)};
  return lowered_to(std::move(v));
}

std::vector<Vertex> infer_unstack(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  v.axis = node.normalise_axis("axis", node.node().axis.value_or(0), x.size());
  if (x.size() < 2) node.fail("inputs[0]", "unstack needs rank >= 2, got " + shape_to_string(x));
  if (x[v.axis] > 4096)
    node.fail("axis", "unstack gives at most 4096 outputs, axis has size " + std::to_string(x[v.axis]));
  Shape out = x;
  out.erase(out.begin() + v.axis);
  v.outputs.assign(static_cast<size_t>(x[v.axis]), out);
  return lowered_to(std::move(v));
}

// All but the stacked axis: how the smaller tensors follow the domain.
SplitMap without_axis(size_t rank, int axis) {
  SplitMap map;
  for (size_t d = 0; d < rank; ++d)
    if (static_cast<int>(d) != axis) map.push_back({static_cast<int>(d)});
  return map;
}

VertexModel model_stack(const Vertex& v) {
  Shape domain = v.inputs[0].shape;
  domain.insert(domain.begin() + v.axis, 1);
  VertexModel m = shape_domain(v.kind, domain, v.inputs.size(), 1);
  m.inputs.assign(v.inputs.size(), without_axis(domain.size(), v.axis));
  return m;
}

VertexModel model_unstack(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  VertexModel m = shape_domain(v.kind, x, 1, v.outputs.size());
  m.splittable[v.axis] = 0;
  m.outputs.assign(v.outputs.size(), without_axis(x.size(), v.axis));
  return m;
}

}  // namespace

OpDefinition stack() {
  return OpDefinition("stack", OpKind::Stack).fields({}, {"axis"}).inputs(1, SIZE_MAX).infers(infer_stack)
      .models(model_stack).batch_role(batch_beside_axis);
}

OpDefinition unstack() {
  return OpDefinition("unstack", OpKind::Unstack).fields({}, {"axis"}).infers(infer_unstack).models(model_unstack)
      .batch_role(batch_beside_axis);
}

}  // namespace pase::ops
