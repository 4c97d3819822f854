// topk: the k largest entries of x along `axis` (a router picking the top-2
// experts): two outputs, the values and their indices, each x with the axis
// cut to k. Domain = x's shape with the axis unsplittable (each device needs
// a whole row to select from); one comparison per element of x.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  v.axis = node.normalise_axis("axis", node.node().axis.value_or(-1), x.size());
  v.k = node.required(node.node().k, "k");
  if (v.k > x[static_cast<size_t>(v.axis)])
    node.fail("k", "expected at most the axis' " + std::to_string(x[static_cast<size_t>(v.axis)]) + " entries of '" +
                       node.node().inputs[0] + "' " + shape_to_string(x) + ", got " + std::to_string(v.k));
  Shape out = x;
  out[static_cast<size_t>(v.axis)] = v.k;
  v.outputs = {out, out};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, 1, 2);
  m.splittable[static_cast<size_t>(v.axis)] = 0;
  return m;
}

}  // namespace

OpDefinition topk() {
  return OpDefinition("topk", OpKind::TopK).fields({"k"}, {"axis"}).infers(infer).models(model)
      .works(describe_one_per_element);
}

}  // namespace pase::ops
