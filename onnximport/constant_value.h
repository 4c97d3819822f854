#pragma once
// Small constant tensors and an evaluator for the shape arithmetic that
// exporters emit (Shape -> Gather -> Concat -> Reshape, Slice bounds, ...).
// Values are doubles: integers stay exact below 2^53, far beyond any shape.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "base/shape.h"

namespace pase {

/// Largest constant the evaluator materialises; bigger ones are weights, not shape arithmetic.
constexpr int64_t kMaxConstantElements = 1 << 16;

/// A constant tensor: ONNX element type, dims and row-major values.
struct ConstantValue {
  int32_t type = onnx::TensorProto::INT64;
  Shape dims;
  std::vector<double> data;
};

/// The values of an initializer or Constant tensor; nullopt when it has no data, is too big or of an odd type.
[[nodiscard]] std::optional<ConstantValue> constant_from_tensor(const onnx::TensorProto& tensor);

/// An initializer holding `value`.
[[nodiscard]] onnx::TensorProto constant_to_tensor(const ConstantValue& value, const std::string& name);

/// What the evaluator may ask about a tensor: its value or its static shape (nullptr when unknown).
struct ConstantLookup {
  std::function<const ConstantValue*(const std::string&)> value;
  std::function<const Shape*(const std::string&)> shape;
};

/// A node the ONNX spec does not allow (an axis out of range or repeated, a
/// perm that is no permutation, an index out of range); what() names the
/// problem, and the caller adds the file and the node.
class InvalidConstantNode : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The outputs of `node` when it is shape arithmetic whose inputs are known;
/// nullopt otherwise (including results too big to materialise). Throws
/// InvalidConstantNode for a node that breaks the ONNX spec.
[[nodiscard]] std::optional<std::vector<ConstantValue>> evaluate_constant_node(const onnx::NodeProto& node,
                                                                              const ConstantLookup& lookup, int64_t opset);

}  // namespace pase
