// softmax over `axis` (default 1), and softmax_xent: the loss, a softmax
// over the last dimension with a cross-entropy. softmax takes an optional
// `pointwise` count (dropout on attention probabilities), which, as for the
// normalizations, only the calibrated model prices: the paper's formula has
// no pointwise term.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer_softmax(const NodeContext& node, Vertex v) {
  v.axis = node.normalise_axis("axis", node.node().axis.value_or(1), node.input(0).size());
  return same_shape_output(std::move(v));
}

std::vector<Vertex> infer_xent(const NodeContext&, Vertex v) { return same_shape_output(std::move(v)); }

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, 1, 1);
  m.work.axis = v.axis;
  m.work.pointwise = static_cast<double>(v.pointwise);
  return m;
}

// 4 operations per element and one per element per class; the maxima and
// sums along a split axis are all-reduced.
void describe_softmax(const VertexModel& m, const int32_t* c, LayerWork& work) {
  const int axis = m.work.axis;
  const double elements = domain_elements(m, c);
  const double f = elements / per_device(m, c, axis);
  const double d_axis = static_cast<double>(m.domain[axis]);
  const double group = static_cast<double>(c[axis]);
  work.pointwise = 4 * elements + elements * d_axis;
  work.all_reduces.add({f, group, 2, "softmax max and sum"});
  work.all_reduces.add({f * d_axis, group, 1, "softmax row"});
}

// When the classes are split, each row's loss and gradient scalars cross the split twice.
void describe_xent(const VertexModel& m, const int32_t* c, LayerWork& work) {
  const int last = static_cast<int>(m.domain.size()) - 1;
  const double elements = domain_elements(m, c);
  const double beta = elements / per_device(m, c, last);
  work.pointwise = 4 * elements + 2 * beta;
  if (c[last] > 1) work.transfers.add({beta, static_cast<double>(c[last]), 2, "loss scalars"});
}

}  // namespace

OpDefinition softmax() {
  return OpDefinition("softmax", OpKind::Softmax).fields({}, {"axis", "pointwise"}).infers(infer_softmax)
      .models(model).works(describe_softmax);
}

OpDefinition softmax_xent() {
  return OpDefinition("softmax_xent", OpKind::SoftmaxXent).infers(infer_xent).models(model).works(describe_xent);
}

}  // namespace pase::ops
