// expand: x broadcast numpy-style to `shape` (ONNX Expand: LLaMA's
// grouped-query attention repeats each key/value head this way). Domain =
// `shape`; x's dimensions follow the output dimensions they line up with
// (right-aligned), and one it is broadcast along is never split: each device
// holds x whole along it. Data movement only, which edges price.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  const Shape out = node.checked("shape", node.required(node.node().shape, "shape"));
  bool fits = x.size() <= out.size();
  for (size_t d = 0; fits && d < x.size(); ++d) {
    int64_t target = out[out.size() - x.size() + d];
    fits = x[d] == target || x[d] == 1;
  }
  if (!fits)
    node.fail("shape", "cannot broadcast '" + node.node().inputs[0] + "' " + shape_to_string(x) + " to " +
                           shape_to_string(out) + " (each dimension, right-aligned, must match or be 1)");
  v.outputs = {out};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  const Shape& out = v.outputs[0];
  VertexModel m = shape_domain(v.kind, out, 1, 1);
  const size_t offset = out.size() - x.size();
  SplitMap map(x.size());
  for (size_t d = 0; d < x.size(); ++d)
    if (x[d] == out[offset + d]) map[d] = {static_cast<int>(offset + d)};
  m.inputs = {map};
  return m;
}

}  // namespace

OpDefinition expand() {
  return OpDefinition("expand", OpKind::Expand).fields({"shape"}).infers(infer).models(model);
}

}  // namespace pase::ops
