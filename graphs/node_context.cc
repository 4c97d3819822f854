#include "graphs/node_context.h"

#include "base/checked_math.h"
#include "base/error.h"

namespace pase {

void NodeContext::fail(const std::string& field, const std::string& message) const {
  std::string where = source_ + ": node '" + node_.name + "'";
  if (!field.empty()) where += ": field '" + field + "'";
  throw InputError(where + ": " + message);
}

int NodeContext::normalise_axis(const std::string& field, int64_t axis, size_t rank, bool allow_end) const {
  int64_t limit = static_cast<int64_t>(rank) + (allow_end ? 1 : 0);
  int64_t a = axis < 0 ? axis + limit : axis;
  if (a < 0 || a >= limit)
    fail(field, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(a);
}

void NodeContext::expect_rank(size_t input, size_t rank, const std::string& what) const {
  const Shape& shape = in_[input];
  if (shape.size() != rank)
    fail("inputs[" + std::to_string(input) + "]", "'" + node_.inputs[input] + "' has shape " + shape_to_string(shape) +
                                                      "; op '" + node_.op + "' needs rank " + std::to_string(rank) + " (" +
                                                      what + ")");
}

void NodeContext::expect_same_shapes(size_t from, const std::string& what) const {
  for (size_t j = from; j < in_.size(); ++j)
    if (in_[j] != in_[0])
      fail("inputs[" + std::to_string(j) + "]", "shape mismatch: '" + node_.inputs[j] + "' is " + shape_to_string(in_[j]) +
                                                    " but '" + node_.inputs[0] + "' is " + shape_to_string(in_[0]) + " (" +
                                                    what + ")");
}

namespace {

[[noreturn]] void overflow(const NodeContext& node, const std::string& field, int64_t a, const char* op, int64_t b) {
  node.fail(field, "size arithmetic overflows 64 bits: " + std::to_string(a) + " " + op + " " + std::to_string(b));
}

}  // namespace

int64_t NodeContext::add(const std::string& field, int64_t a, int64_t b) const {
  std::optional<int64_t> result = checked_add(a, b);
  if (!result) overflow(*this, field, a, "+", b);
  return *result;
}

int64_t NodeContext::sub(const std::string& field, int64_t a, int64_t b) const {
  std::optional<int64_t> result = checked_sub(a, b);
  if (!result) overflow(*this, field, a, "-", b);
  return *result;
}

int64_t NodeContext::mul(const std::string& field, int64_t a, int64_t b) const {
  std::optional<int64_t> result = checked_mul(a, b);
  if (!result) overflow(*this, field, a, "*", b);
  return *result;
}

Shape NodeContext::checked(const std::string& field, const Shape& shape) const {
  for (int64_t s : shape)
    if (s <= 0) fail(field, "inferred shape " + shape_to_string(shape) + " has a non-positive size");
  if (!checked_product(shape)) fail(field, "inferred shape " + shape_to_string(shape) + " has more than 2^63 elements");
  return shape;
}

void NodeContext::check_weight(const std::string& field, const Shape& weight) const {
  if (!checked_product(weight)) fail(field, "weight shape " + shape_to_string(weight) + " has more than 2^63 elements");
}

int64_t NodeContext::window_extent(const std::string& field, int64_t in, int64_t window, int64_t pad,
                                   int64_t stride) const {
  const int64_t padded = add("padding", in, mul("padding", 2, pad));
  const int64_t span = sub(field, padded, window);
  if (span < 0)
    fail(field, "window " + std::to_string(window) + " is larger than the padded input " + std::to_string(padded));
  return span / stride + 1;
}

}  // namespace pase
