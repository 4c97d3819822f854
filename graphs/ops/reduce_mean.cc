// reduce_mean over `axes` (keepdims optional): the partial sums are
// all-reduced among the devices that split the reduced axes.
#include <algorithm>
#include <set>

#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  const std::vector<int64_t>& listed = node.required(node.node().axes, "axes");
  std::set<int> axes;
  for (int64_t axis : listed) {
    int normalised = node.normalise_axis("axes", axis, x.size());
    if (!axes.insert(normalised).second) node.fail("axes", "axis " + std::to_string(axis) + " is listed twice");
  }
  if (axes.empty()) node.fail("axes", "expected at least one axis");
  v.axes.assign(axes.begin(), axes.end());
  v.keepdims = node.node().keepdims.value_or(false);
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!axes.count(static_cast<int>(d))) out.push_back(x[d]);
    else if (v.keepdims) out.push_back(1);
  }
  if (out.empty()) out = {1};
  v.outputs = {out};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  VertexModel m = shape_domain(v.kind, x, 1, 1);
  SplitMap out;
  for (size_t d = 0; d < x.size(); ++d) {
    bool reduced = std::find(v.axes.begin(), v.axes.end(), static_cast<int>(d)) != v.axes.end();
    if (!reduced) out.push_back({static_cast<int>(d)});
    else if (v.keepdims) out.push_back({});
  }
  if (out.empty()) out.push_back({});
  m.outputs = {out};
  m.work.axes = v.axes;
  return m;
}

void describe(const VertexModel& m, const int32_t* c, LayerWork& work) {
  double reduced = 1;
  for (int d : m.work.axes) reduced *= c[d];
  work.all_reduces.add({domain_elements(m, c), reduced, 1, "partial-sum"});
}

}  // namespace

OpDefinition reduce_mean() {
  return OpDefinition("reduce_mean", OpKind::ReduceMean).fields({"axes"}, {"keepdims"}).infers(infer).models(model)
      .works(describe);
}

}  // namespace pase::ops
