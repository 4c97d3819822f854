// elementwise: any number of same-shape operands; domain = the shape,
// (1 + pointwise) operations per element.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  node.expect_same_shapes(1, "elementwise operands must have the same shape");
  return same_shape_output(std::move(v));
}

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, v.inputs.size(), 1);
  m.work.pointwise = static_cast<double>(v.pointwise);
  return m;
}

void describe(const VertexModel& m, const int32_t* c, LayerWork& work) {
  work.pointwise = (1.0 + m.work.pointwise) * domain_elements(m, c);
}

}  // namespace

OpDefinition elementwise() {
  return OpDefinition("elementwise", OpKind::Elementwise).fields({}, {"pointwise"}).inputs(1, SIZE_MAX).infers(infer)
      .models(model).works(describe);
}

}  // namespace pase::ops
