// norm (layer norm over `axis`, default −1) and batchnorm (norm over axis 0):
// 16 operations per element, and the all-reduces of the statistics when the
// normalised axis or the others are split. rmsnorm (RMSNorm over `axis`,
// default −1): a layer norm without the mean, so 12 operations per element and
// half the all-reduces (one statistic, one parameter gradient).
//
// Each takes an optional `pointwise` count: activations applied to its output
// (a ReLU after a batchnorm, as ResNets run it). The paper's formulas have no
// pointwise term, so this `pase` price leaves it out (docs/formats.md's
// cost model, exactly); the calibrated model prices it as memory traffic.
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
  m.work.pointwise = static_cast<double>(v.pointwise);
  return m;
}

// `per_element` operations per element; `times` all-reduces of the per-row
// statistics over the normalised axis's split, and `times` of the per-feature
// parameter gradients over the other dimensions' splits.
void describe_normalization(const VertexModel& m, const int32_t* c, LayerWork& work, double per_element, double times) {
  const int axis = m.work.axis;
  const double elements = domain_elements(m, c);
  const double x_axis = per_device(m, c, axis);
  double others = 1;
  for (int d = 0; d < static_cast<int>(m.domain.size()); ++d)
    if (d != axis) others *= c[d];
  work.pointwise = per_element * elements;
  work.all_reduces.add({elements / x_axis, static_cast<double>(c[axis]), times, "norm statistics"});
  work.all_reduces.add({x_axis, others, times, "norm parameter-gradient", true});
}

void describe(const VertexModel& m, const int32_t* c, LayerWork& work) { describe_normalization(m, c, work, 16, 4); }

// y = x·rsqrt(mean(x²))·γ. Forward: x², the sum, the scaling, γ (4 per
// element); backward: γ·dy, its product with x and that sum, then s·γ·dy,
// x times the row's correction, the difference (6), and dγ's product and
// accumulation (2): 12 in all where norm counts 16. One statistic per row
// each way (the sum of squares; the sum of γ·dy·x) where norm has two (mean
// and variance; two sums), and one parameter gradient (dγ) where norm has two
// (dγ, dβ): 2 all-reduces of each kind where norm has 4.
void describe_rms(const VertexModel& m, const int32_t* c, LayerWork& work) { describe_normalization(m, c, work, 12, 2); }

}  // namespace

OpDefinition norm() {
  return OpDefinition("norm", OpKind::Norm).fields({}, {"axis", "pointwise"}).infers(infer_norm).models(model)
      .works(describe);
}

OpDefinition rmsnorm() {
  return OpDefinition("rmsnorm", OpKind::RmsNorm).fields({}, {"axis", "pointwise"}).infers(infer_norm).models(model)
      .works(describe_rms);
}

OpDefinition batchnorm() {
  return OpDefinition("batchnorm", OpKind::Batchnorm).fields({}, {"pointwise"}).infers(infer_batchnorm).models(model)
      .works(describe);
}

}  // namespace pase::ops
