#include "onnximport/einsum_chain.h"

#include <stdexcept>

namespace pase {
namespace {

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

void check_distinct(const std::string& term, const std::string& what) {
  for (size_t i = 0; i < term.size(); ++i)
    if (term.find(term[i], i + 1) != std::string::npos)
      throw std::invalid_argument(what + " '" + term + "' repeats letter '" + std::string(1, term[i]) +
                                  "' (a diagonal, which pase does not model)");
}

}  // namespace

std::vector<EinsumStep> plan_einsum(const EinsumTerms& terms) {
  const std::vector<std::string>& operands = terms.operands;
  const size_t n = operands.size();
  for (size_t j = 0; j < n; ++j) {
    check_distinct(operands[j], "operand " + std::to_string(j));
    if (operands[j].empty())
      throw std::invalid_argument("operand " + std::to_string(j) + " is a scalar, which pase does not model");
  }
  check_distinct(terms.output, "the output");
  if (terms.output.empty()) throw std::invalid_argument("its output is a scalar, which pase does not model");
  std::vector<EinsumStep> steps;
  auto last_ref = [&steps] { return -1 - static_cast<int>(steps.size() - 1); };
  // Operand j after summing out the letters nothing else reads.
  std::vector<int> ref(n);
  std::vector<std::string> term(n);
  for (size_t j = 0; j < n; ++j) {
    std::string kept;
    std::vector<int64_t> axes;
    for (size_t d = 0; d < operands[j].size(); ++d) {
      const char c = operands[j][d];
      bool needed = has(terms.output, c);
      for (size_t o = 0; o < n && !needed; ++o) needed = o != j && has(operands[o], c);
      if (needed) kept += c;
      else axes.push_back(static_cast<int64_t>(d));
    }
    ref[j] = static_cast<int>(j);
    term[j] = operands[j];
    if (axes.empty()) continue;
    if (kept.empty())
      throw std::invalid_argument("operand " + std::to_string(j) + " '" + operands[j] +
                                  "' sums to a scalar, which pase does not model");
    EinsumStep sum;
    sum.kind = EinsumStep::Kind::Sum;
    sum.inputs = {static_cast<int>(j)};
    sum.term = kept;
    sum.axes = axes;
    sum.operand = static_cast<int>(j);
    steps.push_back(sum);
    ref[j] = last_ref();
    term[j] = kept;
  }
  if (n == 1) {
    // Every letter left is the output's: at most a transpose remains.
    if (term[0] == terms.output) return steps;
    EinsumStep t;
    t.kind = EinsumStep::Kind::Transpose;
    t.inputs = {ref[0]};
    t.term = terms.output;
    for (char c : terms.output) t.perm.push_back(static_cast<int64_t>(term[0].find(c)));
    steps.push_back(t);
    return steps;
  }
  int current = ref[0];
  std::string letters = term[0];
  for (size_t j = 1; j < n; ++j) {
    std::string result;
    if (j + 1 == n) {
      result = terms.output;
    } else {
      std::string needed = terms.output;
      for (size_t o = j + 1; o < n; ++o) needed += term[o];
      for (char c : letters + term[j])
        if (has(needed, c) && !has(result, c)) result += c;
      if (result.empty())
        throw std::invalid_argument("the contraction of operands 0 to " + std::to_string(j) +
                                    " sums to a scalar, which pase does not model");
    }
    EinsumStep step;
    step.kind = EinsumStep::Kind::Contract;
    step.inputs = {current, ref[j]};
    step.term = result;
    step.equation = letters + "," + term[j] + "->" + result;
    step.operand = static_cast<int>(j);
    steps.push_back(step);
    current = last_ref();
    letters = result;
  }
  return steps;
}

}  // namespace pase
