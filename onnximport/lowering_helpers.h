#pragma once
// Small facts the lowerings share (internal to the importer): which pase ops
// take a pointwise count or price their own affine, which ONNX ops fold into
// one, and how an einsum step is spelled.
#include <string>

#include "base/shape.h"

namespace pase {

/// "einsum", or "contraction" for an equation without an m- or an n-letter.
[[nodiscard]] const char* contraction_op(const std::string& equation);

/// Whether a pase op can absorb a following activation into its `pointwise` count.
[[nodiscard]] bool takes_pointwise(const std::string& op);

/// Whether a pase op's price already covers a scale and bias applied to its output.
[[nodiscard]] bool prices_own_affine(const std::string& op);

/// The pointwise count a unary ONNX op folds into its producer (0 for
/// Identity and Cast, 1 for an activation), or -1 for any other op.
[[nodiscard]] int pointwise_count(const std::string& op);

/// "[128, 3, 227, 227]".
[[nodiscard]] std::string join_shape(const Shape& shape);

}  // namespace pase
