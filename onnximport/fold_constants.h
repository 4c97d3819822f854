#pragma once
// Shapes of every tensor: ONNX shape inference (with data propagation),
// alternated with the constant evaluator until neither learns anything new.
// Folded shape arithmetic is replaced by initializers, so ONNX then sees
// Reshape targets and Slice bounds as constants.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "base/shape.h"
#include "onnximport/constant_value.h"

namespace pase {

/// What is known about the model's tensors, by ONNX tensor name.
struct TensorFacts {
  std::map<std::string, Shape> shapes;          ///< static shapes only
  std::map<std::string, ConstantValue> values;  ///< small constants (shape arithmetic, attributes-as-inputs)

  [[nodiscard]] const Shape* shape(const std::string& name) const;          ///< nullptr if unknown
  [[nodiscard]] const ConstantValue* value(const std::string& name) const;  ///< nullptr if not constant
};

/// A re-batching: the batch size the model was exported with, and the one asked for.
struct BatchChange {
  int64_t from = 0, to = 0;
};

/// Infers shapes and folds constants in place; `source` names the file in
/// errors. With `batch`, a constant Reshape target that starts with the
/// exported batch size where its input now has the new one (a trace that
/// baked `x.view(b, ...)`) is rewritten to the new size; one that cannot be
/// rewritten so is an error that says so.
[[nodiscard]] TensorFacts infer_shapes_and_constants(onnx::ModelProto& model, const std::string& source,
                                                     std::optional<BatchChange> batch = std::nullopt);

}  // namespace pase
