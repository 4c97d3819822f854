#include "graphs/einsum.h"

#include <cctype>
#include <stdexcept>

namespace pase {
namespace {

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

void check_term(const std::string& term, const std::string& what) {
  if (term.empty()) throw std::invalid_argument(what + " has no letters");
  for (size_t i = 0; i < term.size(); ++i) {
    if (!std::isalpha(static_cast<unsigned char>(term[i])))
      throw std::invalid_argument(what + " has '" + std::string(1, term[i]) + "'; only letters name dimensions");
    if (term.find(term[i], i + 1) != std::string::npos)
      throw std::invalid_argument(what + " repeats letter '" + std::string(1, term[i]) + "' (diagonals are not supported)");
  }
}

}  // namespace

EinsumSpec parse_contraction(const std::string& equation) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  auto arrow = eq.find("->");
  if (arrow == std::string::npos) throw std::invalid_argument("expected 'A,B->O', missing '->'");
  std::string inputs = eq.substr(0, arrow);
  EinsumSpec spec;
  spec.out = eq.substr(arrow + 2);
  auto comma = inputs.find(',');
  if (comma == std::string::npos || inputs.find(',', comma + 1) != std::string::npos)
    throw std::invalid_argument("expected exactly two operands 'A,B->O'");
  spec.lhs = inputs.substr(0, comma);
  spec.rhs = inputs.substr(comma + 1);
  check_term(spec.lhs, "first operand");
  check_term(spec.rhs, "second operand");
  check_term(spec.out, "output");
  for (char c : spec.out)
    if (!has(spec.lhs, c) && !has(spec.rhs, c))
      throw std::invalid_argument("output letter '" + std::string(1, c) + "' appears in no operand");
  for (const std::string* term : {&spec.lhs, &spec.rhs})
    for (char c : *term)
      if (!has(spec.out, c) && !(has(spec.lhs, c) && has(spec.rhs, c)))
        throw std::invalid_argument("letter '" + std::string(1, c) +
                                    "' appears in one operand only and not in the output (summing it out alone is not supported)");
  for (char c : spec.out) {
    bool in_lhs = has(spec.lhs, c), in_rhs = has(spec.rhs, c);
    if (in_lhs && in_rhs) spec.batch += c;
    else if (in_lhs) spec.m_letters += c;
    else spec.n_letters += c;
  }
  for (char c : spec.lhs)
    if (has(spec.rhs, c) && !has(spec.out, c)) spec.reduction += c;
  // Any of the four groups may be empty here: "te,etd->td" has no m letter
  // (its GEMMs are matrix-vector products), "se,sc->sec" no reduction letter
  // (an outer product per s), "ab,ab->ab" only batch letters. The GEMM cost
  // then reads 1 for an empty group's extent and split (docs/formats.md).
  spec.domain = spec.out + spec.reduction;
  return spec;
}

bool is_gemm_einsum(const EinsumSpec& spec) { return !spec.m_letters.empty() && !spec.n_letters.empty(); }

EinsumSpec parse_einsum(const std::string& equation) {
  EinsumSpec spec = parse_contraction(equation);
  // The graph format's contract: tools that know only the format read an
  // einsum as a GEMM with both an m and an n side. Equations without one are
  // the `contraction` extension op's.
  if (!is_gemm_einsum(spec))
    throw std::invalid_argument(
        "needs at least one letter only in the first operand and one only in the second (a GEMM's m and n); got m='" +
        spec.m_letters + "', n='" + spec.n_letters + "'");
  return spec;
}

}  // namespace pase
