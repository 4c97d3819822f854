// conv2d: x = (b, C, h, w), filter (N, C/G, R, S) with G `groups`, taps
// `dilation` apart.
//
// groups = 1: domain "bchwrsn" = (b, C, ho, wo, R, S, N) with ho and wo
// unsplittable; one GEMM with m = b·ho·wo, n = N, k = C·R·S.
//
// groups > 1 (grouped; depthwise when G = C): domain "bgchwrsn" =
// (b, G, C/G, ho, wo, R, S, N/G), G independent GEMMs (batch G) with
// m = b·ho·wo, n = N/G, k = (C/G)·R·S. The channel dimension of x is
// (G, C/G) flattened with G outer, the output's (G, N/G). A split counts
// equal contiguous blocks of a tensor dimension, which splitting G gives;
// splitting C/G or N/G while G is not fully split would give each device
// strided pieces of the channel dimension, so those two are unsplittable:
// groups are the channel parallelism (nothing is lost for depthwise, where
// both are 1).
//
// `weight_layout` "ncr" lists the filter as a 1-D convolution holds it,
// [N, C/G, R] (S = 1); the default "ncrs" is [N, C/G, R, S].
//
// Dilation changes only the output size (a window of (R−1)·d + 1); the
// work is the same R·S taps.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

enum GroupedDim { kB = 0, kG, kC, kH, kW, kR, kS, kN };

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  node.expect_rank(0, 4, "batch, channels, height, width");
  const Shape& x = node.input(0);
  v.filter = node.required(node.node().filter, "filter");
  if (v.filter.size() != 4) node.fail("filter", "expected 4 sizes (N, C, R, S), got " + std::to_string(v.filter.size()));
  v.groups = node.node().groups.value_or(1);
  if (x[1] % v.groups != 0 || v.filter[0] % v.groups != 0)
    node.fail("groups", "expected a divisor of the input channels (" + std::to_string(x[1]) + ") and of the filters (" +
                            std::to_string(v.filter[0]) + "), got " + std::to_string(v.groups));
  if (v.filter[1] != x[1] / v.groups)
    node.fail("filter", "shape mismatch: filter has " + std::to_string(v.filter[1]) + " input channels but '" +
                            node.node().inputs[0] + "' has " + std::to_string(x[1]) + " (shape " + shape_to_string(x) + ")" +
                            (v.groups > 1 ? " in " + std::to_string(v.groups) + " groups" : ""));
  v.weight_layout = node.node().weight_layout.value_or("ncrs");
  if (v.weight_layout == "ncr" && v.filter[3] != 1)
    node.fail("weight_layout", "\"ncr\" (a 1-D convolution's filter) needs a filter of width 1, got " +
                                   shape_to_string(v.filter));
  v.stride = node.node().stride.value_or(HeightWidth{1, 1});
  v.padding = node.node().padding.value_or(HeightWidth{0, 0});
  v.dilation = node.node().dilation.value_or(HeightWidth{1, 1});
  // The dilated window, (R − 1)·d + 1 (checked: both come from the file).
  const HeightWidth reach{node.add("dilation", node.mul("dilation", v.filter[2] - 1, v.dilation.h), 1),
                          node.add("dilation", node.mul("dilation", v.filter[3] - 1, v.dilation.w), 1)};
  auto [ho, wo] = window_output(node, "filter", x, reach, v.padding, v.stride);
  v.outputs = {node.checked("filter", {x[0], v.filter[0], ho, wo})};
  return lowered_to(std::move(v));
}

// A 1-D convolution's filter is held [N, C/G, R]: the same elements as the
// [N, C/G, R, 1] filter over the unit width.
void drop_unit_width(const Vertex& v, VertexModel& m) {
  if (v.weight_layout != "ncr") return;
  m.weights[0].shape.pop_back();
  m.weights[0].split.pop_back();
}

VertexModel model(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  const Shape& y = v.outputs[0];
  VertexModel m;
  m.kind = v.kind;
  m.work.pointwise = static_cast<double>(v.pointwise);
  // The input's height and width (the domain holds the output's): the
  // calibrated model prices moving the input between memory layouts.
  m.work.in_h = static_cast<double>(x[2]);
  m.work.in_w = static_cast<double>(x[3]);
  if (v.groups == 1) {
    m.letters = "bchwrsn";
    m.domain = {x[0], x[1], y[2], y[3], v.filter[2], v.filter[3], v.filter[0]};
    m.splittable = {1, 1, 0, 0, 1, 1, 1};
    m.inputs = {{{0}, {1}, {2}, {3}}};
    m.outputs = {{{0}, {6}, {2}, {3}}};
    m.weights = {{"filter", v.filter, {{6}, {1}, {4}, {5}}}};
    drop_unit_width(v, m);
    m.work.m = {0, 2, 3};
    m.work.n = {6};
    m.work.k = {1, 4, 5};
    return m;
  }
  const int64_t g = v.groups;
  m.letters = "bgchwrsn";
  m.domain = {x[0], g, x[1] / g, y[2], y[3], v.filter[2], v.filter[3], v.filter[0] / g};
  m.splittable = {1, 1, 0, 0, 0, 1, 1, 0};
  m.inputs = {{{kB}, {kG, kC}, {kH}, {kW}}};
  m.outputs = {{{kB}, {kG, kN}, {kH}, {kW}}};
  m.weights = {{"filter", v.filter, {{kG, kN}, {kC}, {kR}, {kS}}}};
  drop_unit_width(v, m);
  m.work.batch = {kG};
  m.work.m = {kB, kH, kW};
  m.work.n = {kN};
  m.work.k = {kC, kR, kS};
  return m;
}

int batch_dim(const Vertex&, const VertexModel&) { return kB; }

}  // namespace

OpDefinition conv2d() {
  return OpDefinition("conv2d", OpKind::Conv2d)
      .fields({"filter"}, {"stride", "padding", "dilation", "groups", "pointwise", "weights", "weight_layout"})
      .infers(infer)
      .models(model)
      .works(describe_gemm)
      .batch_role(batch_dim);
}

}  // namespace pase::ops
