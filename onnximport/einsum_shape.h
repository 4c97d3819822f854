#pragma once
// The output shape of an ONNX Einsum: ONNX 1.12's shape inference gives only
// its rank, and every shape after an einsum (MoE experts, attention written
// as einsums) depends on it.
#include <optional>
#include <string>
#include <vector>

#include "graphs/shape.h"

namespace pase {

/// The output shape of `equation` over operands of shapes `inputs`; nullopt
/// for what it does not handle (an ellipsis). Throws std::invalid_argument
/// with a one-line reason for an equation that contradicts the shapes.
[[nodiscard]] std::optional<Shape> einsum_output_shape(const std::string& equation, const std::vector<Shape>& inputs);

}  // namespace pase
