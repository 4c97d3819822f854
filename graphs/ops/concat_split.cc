// concat and split along an axis that stays unsplit; they only move data,
// which the edges price.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer_concat(const NodeContext& node, Vertex v) {
  const std::vector<Shape>& in = node.inputs();
  v.axis = node.normalise_axis("axis", node.required(node.node().axis, "axis"), in[0].size());
  Shape out = in[0];
  for (size_t j = 1; j < in.size(); ++j) {
    bool fits = in[j].size() == in[0].size();
    for (size_t d = 0; fits && d < in[0].size(); ++d)
      if (static_cast<int>(d) != v.axis && in[j][d] != in[0][d]) fits = false;
    if (!fits)
      node.fail("inputs[" + std::to_string(j) + "]",
                "shape mismatch: '" + node.node().inputs[j] + "' is " + shape_to_string(in[j]) + " but '" +
                    node.node().inputs[0] + "' is " + shape_to_string(in[0]) + " (they may differ only on axis " +
                    std::to_string(v.axis) + ")");
    out[v.axis] = node.add("inputs[" + std::to_string(j) + "]", out[v.axis], in[j][v.axis]);
  }
  v.outputs = {node.checked("inputs", out)};
  return lowered_to(std::move(v));
}

std::vector<Vertex> infer_split(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  v.axis = node.normalise_axis("axis", node.required(node.node().axis, "axis"), x.size());
  std::vector<int64_t> sizes = node.required(node.node().parts, "parts");
  const int64_t extent = x[v.axis];
  if (sizes.empty()) node.fail("parts", "expected a count or a list of sizes, got []");
  if (node.node().parts_is_count) {
    int64_t count = sizes[0];
    if (extent % count != 0)
      node.fail("parts", "axis " + std::to_string(v.axis) + " has size " + std::to_string(extent) +
                             ", which does not split into " + std::to_string(count) + " equal parts");
    if (count > 4096) node.fail("parts", "at most 4096 parts, got " + std::to_string(count));
    sizes.assign(static_cast<size_t>(count), extent / count);
  } else {
    int64_t total = 0;
    for (int64_t part : sizes) total = node.add("parts", total, part);
    if (total != extent)
      node.fail("parts", "sizes add up to " + std::to_string(total) + " but axis " + std::to_string(v.axis) + " has size " +
                             std::to_string(extent));
  }
  for (int64_t part : sizes) {
    Shape out = x;
    out[v.axis] = part;
    v.outputs.push_back(out);
  }
  return lowered_to(std::move(v));
}

VertexModel model_concat(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, v.inputs.size(), 1);
  m.splittable[v.axis] = 0;
  return m;
}

VertexModel model_split(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, 1, v.outputs.size());
  m.splittable[v.axis] = 0;
  return m;
}

}  // namespace

int batch_beside_axis(const Vertex& v, const VertexModel& m) { return v.axis == 0 && m.domain.size() > 1 ? 1 : 0; }

OpDefinition concat() {
  return OpDefinition("concat", OpKind::Concat).fields({"axis"}).inputs(1, SIZE_MAX).infers(infer_concat)
      .models(model_concat).batch_role(batch_beside_axis);
}

OpDefinition split() {
  return OpDefinition("split", OpKind::Split).fields({"parts", "axis"}).infers(infer_split).models(model_split)
      .batch_role(batch_beside_axis);
}

}  // namespace pase::ops
