#pragma once
// Parsing and classifying two-operand einsum equations ("bhlk,bhmk->bhlm",
// "te,etd->td", "se,sc->sec").
#include <string>

namespace pase {

/// Letters of `A,B->O` sorted into the roles the GEMM cost needs.
struct EinsumSpec {
  std::string lhs, rhs, out;
  std::string domain;     ///< output letters in order, then reduction letters (order of first use in lhs)
  std::string batch;      ///< in lhs, rhs and out
  std::string reduction;  ///< in lhs and rhs, not out
  std::string m_letters;  ///< only in lhs (and out)
  std::string n_letters;  ///< only in rhs (and out)
};

/// Parses an equation; throws std::invalid_argument with a one-line reason.
[[nodiscard]] EinsumSpec parse_einsum(const std::string& equation);

}  // namespace pase
