// scatter: ONNX ScatterElements along `axis`. Inputs (indices, updates), of
// one shape, write into a tensor of `shape` that is otherwise zero (a MoE
// router's [tokens, experts] gate matrix from its top-k), or (data, indices,
// updates) into an activation `data`. Domain = the output's shape with the
// axis unsplittable (an index may point anywhere along it); the indices and
// updates follow the other dimensions. One operation per output element (the
// fill or copy, and the writes).
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const bool has_data = node.inputs().size() == 3;
  const size_t first = has_data ? 1 : 0;
  const Shape& indices = node.input(first);
  if (node.input(first + 1) != indices)
    node.fail("inputs[" + std::to_string(first + 1) + "]", "shape mismatch: updates '" + node.node().inputs[first + 1] +
                                                               "' are " + shape_to_string(node.input(first + 1)) +
                                                               " but indices '" + node.node().inputs[first] + "' are " +
                                                               shape_to_string(indices));
  Shape out;
  if (has_data) {
    out = node.input(0);
  } else {
    out = node.checked("shape", node.required(node.node().shape, "shape"));
  }
  if (out.size() != indices.size())
    node.fail(has_data ? "inputs[0]" : "shape", "expected rank " + std::to_string(indices.size()) + " (the indices'), got " +
                                                    shape_to_string(out));
  v.axis = node.normalise_axis("axis", node.node().axis.value_or(0), out.size());
  for (size_t d = 0; d < out.size(); ++d)
    if (d != static_cast<size_t>(v.axis) && indices[d] > out[d])
      node.fail("inputs[" + std::to_string(first) + "]", "indices " + shape_to_string(indices) + " exceed the output " +
                                                             shape_to_string(out) + " in dimension " + std::to_string(d));
  v.outputs = {out};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  const size_t inputs = v.inputs.size();
  VertexModel m = shape_domain(v.kind, v.outputs[0], inputs, 1);
  const size_t axis = static_cast<size_t>(v.axis);
  m.splittable[axis] = 0;
  // Indices and updates: their own dimensions, smaller than the output's
  // where they cover part of it; those are never split.
  for (size_t j = inputs == 3 ? 1 : 0; j < inputs; ++j)
    for (size_t d = 0; d < m.inputs[j].size(); ++d)
      if (v.inputs[j].shape[d] != v.outputs[0][d]) m.inputs[j][d].clear();
  return m;
}

}  // namespace

OpDefinition scatter() {
  return OpDefinition("scatter", OpKind::Scatter).fields({}, {"shape", "axis"}).inputs(2, 3).infers(infer).models(model)
      .works(describe_one_per_element);
}

}  // namespace pase::ops
