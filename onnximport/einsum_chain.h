#pragma once
// How any Einsum numpy accepts (but diagonals) becomes pase vertices: a
// letter only one operand has and the output lacks is summed out first, by
// a reduce_mean over that operand (a sum costs what a mean does, as ONNX
// ReduceSum); then the operands are contracted pairwise from the left
// (numpy's unoptimised order), each intermediate keeping exactly the letters
// a later operand or the output still needs, the last giving the output. A
// single operand is summed and then transposed into the output's order.
#include <cstdint>
#include <string>
#include <vector>

#include "onnximport/einsum_shape.h"

namespace pase {

/// One vertex of a lowered Einsum.
struct EinsumStep {
  enum class Kind { Sum, Contract, Transpose };
  Kind kind = Kind::Contract;
  /// Operand j of the Einsum as j, the result of step s as -1 - s.
  std::vector<int> inputs;
  std::string term;              ///< the letters of its result
  std::string equation;          ///< Contract: "A,B->O"
  std::vector<int64_t> axes;     ///< Sum: the summed axes of its input
  std::vector<int64_t> perm;     ///< Transpose: out[i] = in[perm[i]]
  int operand = 0;               ///< Sum: the operand it sums; Contract: the right operand
};

/// The steps for `terms`, the last giving the output; none when the output
/// is the single operand as it is. Throws std::invalid_argument with a
/// one-line reason for what pase cannot represent: a letter repeated within
/// one term (a diagonal), a scalar operand or output, and an operand or
/// intermediate that sums to a scalar.
[[nodiscard]] std::vector<EinsumStep> plan_einsum(const EinsumTerms& terms);

}  // namespace pase
