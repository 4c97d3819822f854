// transpose by `perm`: output dimension i is input dimension perm[i];
// data movement only.
#include <algorithm>

#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  const std::vector<int64_t>& perm = node.required(node.node().perm, "perm");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = sorted.size() == x.size();
  for (size_t d = 0; is_permutation && d < sorted.size(); ++d) is_permutation = sorted[d] == static_cast<int64_t>(d);
  if (!is_permutation)
    node.fail("perm", "expected a permutation of 0.." + std::to_string(x.size() - 1) + ", got " + shape_to_string(perm));
  Shape out;
  for (int64_t p : perm) {
    v.perm.push_back(static_cast<int>(p));
    out.push_back(x[p]);
  }
  v.outputs = {out};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  VertexModel m = shape_domain(v.kind, v.inputs[0].shape, 1, 1);
  SplitMap out;
  for (int p : v.perm) out.push_back({p});
  m.outputs = {out};
  return m;
}

}  // namespace

OpDefinition transpose() {
  return OpDefinition("transpose", OpKind::Transpose).fields({"perm"}).infers(infer).models(model);
}

}  // namespace pase::ops
