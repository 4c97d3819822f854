// conv2d: x = (b, c, h, w), filter (N, c, R, S). Domain "bchwrsn" =
// (b, c, ho, wo, R, S, N) with ho and wo unsplittable; a GEMM with
// m = b·ho·wo, n = N, k = c·R·S.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  node.expect_rank(0, 4, "batch, channels, height, width");
  const Shape& x = node.input(0);
  v.filter = node.required(node.node().filter, "filter");
  if (v.filter.size() != 4) node.fail("filter", "expected 4 sizes (N, C, R, S), got " + std::to_string(v.filter.size()));
  if (v.filter[1] != x[1])
    node.fail("filter", "shape mismatch: filter has " + std::to_string(v.filter[1]) + " input channels but '" +
                            node.node().inputs[0] + "' has " + std::to_string(x[1]) + " (shape " + shape_to_string(x) + ")");
  v.stride = node.node().stride.value_or(HeightWidth{1, 1});
  v.padding = node.node().padding.value_or(HeightWidth{0, 0});
  auto [ho, wo] = window_output(node, "filter", x, {v.filter[2], v.filter[3]}, v.padding, v.stride);
  v.outputs = {node.checked("filter", {x[0], v.filter[0], ho, wo})};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  const Shape& y = v.outputs[0];
  VertexModel m;
  m.kind = v.kind;
  m.letters = "bchwrsn";
  m.domain = {x[0], x[1], y[2], y[3], v.filter[2], v.filter[3], v.filter[0]};
  m.splittable = {1, 1, 0, 0, 1, 1, 1};
  m.inputs = {{{0}, {1}, {2}, {3}}};
  m.outputs = {{{0}, {6}, {2}, {3}}};
  m.weights = {{"filter", v.filter, {{6}, {1}, {4}, {5}}}};
  m.work.m = {0, 2, 3};
  m.work.n = {6};
  m.work.k = {1, 4, 5};
  m.work.pointwise = static_cast<double>(v.pointwise);
  return m;
}

}  // namespace

OpDefinition conv2d() {
  return OpDefinition("conv2d", OpKind::Conv2d).fields({"filter"}, {"stride", "padding", "pointwise", "weights"}).infers(infer)
      .models(model).works(describe_gemm);
}

}  // namespace pase::ops
