#pragma once
// ONNX Einsum equations as numpy reads them: `...` expanded from the
// operands' ranks, an implicit output written out, and the output's shape
// (ONNX 1.12's shape inference gives only its rank, and every shape after an
// einsum, such as a MoE's dispatch and experts, depends on it).
#include <string>
#include <vector>

#include "base/shape.h"

namespace pase {

/// An equation with every operand's and the output's letters explicit.
struct EinsumTerms {
  std::vector<std::string> operands;  ///< one letter per dimension of each operand
  std::string output;
};

/// Expands `equation` over operands of `ranks`: each `...` becomes letters
/// the equation does not use, one per dimension it covers, lined up from the
/// right across operands (numpy's broadcasting); an implicit output is the
/// ellipsis letters, then the letters used once, in alphabetical order.
/// Throws std::invalid_argument with a one-line reason.
[[nodiscard]] EinsumTerms expand_einsum(const std::string& equation, const std::vector<size_t>& ranks);

/// The output shape of `equation` over operands of shapes `inputs`; a letter
/// of size 1 broadcasts against a larger one. Throws std::invalid_argument
/// with a one-line reason for an equation that contradicts the shapes.
[[nodiscard]] Shape einsum_output_shape(const std::string& equation, const std::vector<Shape>& inputs);

}  // namespace pase
