// elementwise: any number of operands that broadcast numpy-style to one
// output (a bias [b, s, d] + [s, d], a squeeze-excitation scale
// [b, c, 1, 1] · [b, c, h, w]); domain = the output shape, (1 + pointwise)
// operations per output element. An operand's dimension follows the output
// dimension it lines up with (right-aligned); one it is broadcast along (size
// 1 where the output is larger, or missing) is never split: every device
// holds it whole along that dimension.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  Shape out;
  for (const Shape& in : node.inputs())
    if (in.size() > out.size()) out.insert(out.begin(), in.size() - out.size(), 1);
  for (size_t j = 0; j < node.inputs().size(); ++j) {
    const Shape& in = node.input(j);
    const size_t offset = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t& o = out[offset + d];
      if (in[d] == o || in[d] == 1) continue;
      if (o != 1)
        node.fail("inputs[" + std::to_string(j) + "]", "shape mismatch: '" + node.node().inputs[j] + "' is " +
                                                        shape_to_string(in) + " but '" + node.node().inputs[0] + "' is " +
                                                        shape_to_string(node.input(0)) +
                                                        " (elementwise operands must have the same shape or broadcast)");
      o = in[d];
    }
  }
  v.outputs = {out};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& out = v.outputs[0];
  VertexModel m = shape_domain(v.kind, out, v.inputs.size(), 1);
  for (size_t j = 0; j < v.inputs.size(); ++j) {
    const Shape& in = v.inputs[j].shape;
    const size_t offset = out.size() - in.size();
    SplitMap map(in.size());
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] == out[offset + d]) map[d] = {static_cast<int>(offset + d)};
    m.inputs[j] = map;
  }
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
