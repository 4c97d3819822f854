// pool2d: x = (b, c, h, w), window (R, S). Domain (b, c, ho, wo), all
// splittable; a pass over the elements plus the halo a spatial split
// exchanges, measured on the input's height and width.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  node.expect_rank(0, 4, "batch, channels, height, width");
  const Shape& x = node.input(0);
  v.window = node.required(node.node().window, "window");
  v.stride = node.node().stride.value_or(HeightWidth{1, 1});
  v.padding = node.node().padding.value_or(HeightWidth{0, 0});
  auto [ho, wo] = window_output(node, "window", x, v.window, v.padding, v.stride);
  v.outputs = {node.checked("window", {x[0], x[1], ho, wo})};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  VertexModel m = shape_domain(v.kind, v.outputs[0], 1, 1);
  m.letters = "bchw";
  m.work.in_h = static_cast<double>(x[2]);
  m.work.in_w = static_cast<double>(x[3]);
  m.work.window_r = static_cast<double>(v.window.h);
  m.work.window_s = static_cast<double>(v.window.w);
  return m;
}

void describe(const VertexModel& m, const int32_t* c, LayerWork& work) {
  const WorkParams& s = m.work;
  work.pointwise = domain_elements(m, c);
  double h = s.in_h / c[2], w = s.in_w / c[3];
  double grown_h = h + (c[2] > 1 ? s.window_r : 0.0), grown_w = w + (c[3] > 1 ? s.window_s : 0.0);
  double used = 1;
  for (size_t d = 0; d < m.domain.size(); ++d) used *= c[d];
  work.has_halo = true;
  work.halo = {per_device(m, c, 0), per_device(m, c, 1), grown_h * grown_w - h * w, used};
}

}  // namespace

OpDefinition pool2d() {
  return OpDefinition("pool2d", OpKind::Pool2d).fields({"window"}, {"stride", "padding"}).infers(infer).models(model)
      .works(describe);
}

}  // namespace pase::ops
