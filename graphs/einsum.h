#pragma once
// Parsing and classifying two-operand einsum equations ("bhlk,bhmk->bhlm",
// "se,sc->sec"), and the general contractions of the `contraction` op
// ("te,etd->td", "bk,k->b", "ab,ab->ab").
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

/// Parses an `einsum` equation, which the graph format requires to have at
/// least one m- and one n-letter; throws std::invalid_argument with a
/// one-line reason.
[[nodiscard]] EinsumSpec parse_einsum(const std::string& equation);

/// Parses a `contraction` equation, in which any letter group may be empty;
/// throws std::invalid_argument with a one-line reason.
[[nodiscard]] EinsumSpec parse_contraction(const std::string& equation);

/// True when the spec has an m- and an n-letter, so `einsum` can carry it.
[[nodiscard]] bool is_gemm_einsum(const EinsumSpec& spec);

}  // namespace pase
