// scatter_nd: ONNX ScatterND without reduction (PyTorch's `x[idx] = y`,
// `index_put_`). data (rank r), indices (leading dims L, then a last dim of
// k ≤ r coordinates) and updates (L, then data's last r − k dims) → data
// with the slices the indices address replaced by the updates. Domain =
// data's shape with its first k dims unsplittable (an index may point
// anywhere in them); data follows the domain, the updates' last r − k dims
// follow data's, and the indices and the updates' leading dims are never
// split. One operation per output element (the copy, and the writes), as
// scatter.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& data = node.input(0);
  const Shape& indices = node.input(1);
  if (indices.empty() || indices.back() < 1 || indices.back() > static_cast<int64_t>(data.size()))
    node.fail("inputs[1]", "indices '" + node.node().inputs[1] + "' " + shape_to_string(indices) +
                               " must end in a count of 1 to " + std::to_string(data.size()) +
                               " coordinates into data '" + node.node().inputs[0] + "' " + shape_to_string(data));
  const auto k = static_cast<size_t>(indices.back());
  Shape expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.begin() + static_cast<std::ptrdiff_t>(k), data.end());
  if (node.input(2) != expected)
    node.fail("inputs[2]", "shape mismatch: updates '" + node.node().inputs[2] + "' are " + shape_to_string(node.input(2)) +
                               " but indices " + shape_to_string(indices) + " into data " + shape_to_string(data) +
                               " need " + shape_to_string(expected));
  v.k = static_cast<int64_t>(k);
  return same_shape_output(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& data = v.inputs[0].shape;
  VertexModel m = shape_domain(v.kind, data, 3, 1);
  const auto k = static_cast<size_t>(v.k);
  for (size_t d = 0; d < k; ++d) m.splittable[d] = 0;
  m.inputs[1] = SplitMap(v.inputs[1].shape.size());
  const size_t leading = v.inputs[2].shape.size() - (data.size() - k);
  m.inputs[2] = SplitMap(leading);
  for (size_t d = k; d < data.size(); ++d) m.inputs[2].push_back({static_cast<int>(d)});
  return m;
}

}  // namespace

OpDefinition scatter_nd() {
  return OpDefinition("scatter_nd", OpKind::ScatterNd).inputs(3, 3).infers(infer).models(model)
      .works(describe_one_per_element);
}

}  // namespace pase::ops
