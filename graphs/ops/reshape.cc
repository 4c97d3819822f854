// reshape becomes two vertices joined by a 1-D tensor: `NAME/ravel` (domain
// = the input's shape) flattens, `NAME` (domain = the target shape)
// unravels. Both accept only row-major contiguous configurations, so the
// flat tensor's split is well defined; neither does work of its own.
#include <numeric>
#include <optional>

#include "base/check.h"
#include "base/checked_math.h"
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

// The target shape with its one -1 resolved, or the node's error.
Shape resolve_target(const NodeContext& node, const Shape& requested, int64_t total) {
  Shape target = requested;
  int unknown = -1;
  int64_t known = 1;
  bool too_many = false;  // the known sizes alone hold more than `total`: no -1 can make up for it
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == -1) {
      if (unknown >= 0) node.fail("shape", "at most one size may be -1");
      unknown = static_cast<int>(d);
    } else if (!too_many) {
      std::optional<int64_t> next = checked_mul(known, target[d]);
      too_many = !next || *next > total;
      if (!too_many) known = *next;
    }
  }
  if (unknown >= 0 && !too_many && total % known == 0) target[unknown] = total / known;
  auto product = checked_product(target);
  if (!product || *product != total)
    node.fail("shape", "shape mismatch: " + shape_to_string(requested) + " does not hold the " + std::to_string(total) +
                           " elements of '" + node.node().inputs[0] + "' " + shape_to_string(node.input(0)));
  return target;
}

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const std::optional<int64_t> total_or_none = checked_product(node.input(0));
  PASE_ASSERT(total_or_none.has_value(), shape_to_string(node.input(0)));  // every shape's product was checked
  const int64_t total = *total_or_none;
  Shape target = resolve_target(node, node.required(node.node().shape, "shape"), total);
  Vertex ravel = v;
  ravel.name = v.name + "/ravel";
  ravel.kind = OpKind::Ravel;
  ravel.outputs = {{total}};
  VertexInput flat;
  flat.ref = ravel.name;
  flat.source = {kPreviousVertex, 0};
  flat.shape = {total};
  v.inputs = {flat};
  v.outputs = {target};
  return lowered_to(std::move(ravel), std::move(v));
}

std::vector<int> all_dims(size_t rank) {
  std::vector<int> all(rank);
  std::iota(all.begin(), all.end(), 0);
  return all;
}

VertexModel model_ravel(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  VertexModel m = shape_domain(v.kind, x, 1, 1);
  m.contiguous_only = true;
  m.outputs = {{all_dims(x.size())}};
  return m;
}

VertexModel model_unravel(const Vertex& v) {
  const Shape& y = v.outputs[0];
  VertexModel m = shape_domain(v.kind, y, 1, 1);
  m.contiguous_only = true;
  m.inputs = {{all_dims(y.size())}};
  return m;
}

}  // namespace

OpDefinition reshape() {
  return OpDefinition("reshape", OpKind::Unravel).fields({"shape"}).infers(infer).models(model_unravel);
}

OpDefinition ravel() { return OpDefinition("ravel", OpKind::Ravel).internal().models(model_ravel); }

}  // namespace pase::ops
