// norm (layer norm over `axis`, default −1) and batchnorm (norm over axis 0):
// 16 operations per element, and the all-reduces of the statistics when the
// normalised axis or the others are split.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer_norm(const NodeContext& node, Vertex v) {
  v.axis = node.normalise_axis("axis", node.node().axis.value_or(-1), node.input(0).size());
  return same_shape_output(std::move(v));
}

std::vector<Vertex> infer_batchnorm(const NodeContext&, Vertex v) {
  v.axis = 0;
  return same_shape_output(std::move(v));
}

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, 1, 1);
  m.work.axis = v.axis;
  return m;
}

void describe(const VertexModel& m, const int32_t* c, LayerWork& work) {
  const int axis = m.work.axis;
  const double elements = domain_elements(m, c);
  const double x_axis = per_device(m, c, axis);
  double others = 1;
  for (int d = 0; d < static_cast<int>(m.domain.size()); ++d)
    if (d != axis) others *= c[d];
  work.pointwise = 16 * elements;
  work.all_reduces.add({elements / x_axis, static_cast<double>(c[axis]), 4});
  work.all_reduces.add({x_axis, others, 4});
}

}  // namespace

OpDefinition norm() {
  return OpDefinition("norm", OpKind::Norm).fields({}, {"axis"}).infers(infer_norm).models(model).works(describe);
}

OpDefinition batchnorm() {
  return OpDefinition("batchnorm", OpKind::Batchnorm).infers(infer_batchnorm).models(model).works(describe);
}

}  // namespace pase::ops
