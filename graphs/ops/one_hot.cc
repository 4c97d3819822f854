// one_hot: ONNX OneHot of an index tensor (a MoE router's expert and
// capacity-slot masks): indices I → I with a new axis of `depth` entries at
// `axis` (default -1, the last), 1 at each index and 0 elsewhere. Domain =
// the output's shape, every dimension splittable: a device holding a block
// of the depth axis writes the ones that fall in its block, so no exchange
// is needed. The indices follow the other dimensions. One operation per
// output element (a mask op is cheap elementwise work).
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& indices = node.input(0);
  const int64_t depth = node.required(node.node().depth, "depth");
  v.axis = node.normalise_axis("axis", node.node().axis.value_or(-1), indices.size() + 1);
  Shape out = indices;
  out.insert(out.begin() + v.axis, depth);
  v.outputs = {node.checked("depth", out)};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.outputs[0], 1, 1);
  m.inputs[0].erase(m.inputs[0].begin() + v.axis);  // the indices have no depth axis
  return m;
}

}  // namespace

OpDefinition one_hot() {
  return OpDefinition("one_hot", OpKind::OneHot).fields({"depth"}, {"axis"}).infers(infer).models(model)
      .works(describe_one_per_element);
}

}  // namespace pase::ops
