#include "onnximport/einsum_shape.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

namespace pase {
namespace {

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// The dimensions `term` gives to its `...`: none without one.
size_t ellipsis_rank(const std::string& equation, const std::string& term, size_t rank, size_t operand) {
  const size_t dots = term.find("...");
  const size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
  if (dots == std::string::npos ? letters != rank : letters > rank)
    throw std::invalid_argument("equation '" + equation + "': operand " + std::to_string(operand) + " '" + term + "' has " +
                                std::to_string(letters) + " letters but rank " + std::to_string(rank));
  return rank - letters;
}

// A term is letters around at most one "...".
void check_term(const std::string& equation, const std::string& term) {
  const size_t dots = term.find("...");
  if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos)
    throw std::invalid_argument("equation '" + equation + "': '" + term + "' has more than one '...'");
  std::string rest = term;
  if (dots != std::string::npos) rest.erase(dots, 3);
  for (char c : rest)
    if (!is_letter(c)) throw std::invalid_argument("equation '" + equation + "': bad letter '" + std::string(1, c) + "'");
}

}  // namespace

EinsumTerms expand_einsum(const std::string& equation, const std::vector<size_t>& ranks) {
  std::string text;
  for (char c : equation)
    if (c != ' ') text += c;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t from = 0;;) {
    size_t comma = lhs.find(',', from);
    terms.push_back(lhs.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (terms.size() != ranks.size())
    throw std::invalid_argument("equation '" + equation + "' has " + std::to_string(terms.size()) + " operand(s), the node " +
                                std::to_string(ranks.size()));
  std::string out = arrow == std::string::npos ? std::string() : text.substr(arrow + 2);
  for (const std::string& term : terms) check_term(equation, term);
  check_term(equation, out);
  size_t broadcast = 0;
  std::vector<size_t> covered(terms.size());
  for (size_t j = 0; j < terms.size(); ++j) {
    covered[j] = ellipsis_rank(equation, terms[j], ranks[j], j);
    broadcast = std::max(broadcast, covered[j]);
  }
  // Letters for the ellipsis dimensions: the ones the equation leaves free.
  std::string fresh;
  for (char c : std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    if (fresh.size() < broadcast && text.find(c) == std::string::npos) fresh += c;
  if (fresh.size() < broadcast)
    throw std::invalid_argument("equation '" + equation + "': no letters left for the " + std::to_string(broadcast) +
                                " dimensions of '...'");
  EinsumTerms result;
  for (size_t j = 0; j < terms.size(); ++j) {
    std::string term = terms[j];
    if (size_t dots = term.find("..."); dots != std::string::npos) term.replace(dots, 3, fresh.substr(broadcast - covered[j]));
    result.operands.push_back(term);
  }
  if (arrow != std::string::npos) {
    if (size_t dots = out.find("..."); dots != std::string::npos) out.replace(dots, 3, fresh);
  } else {
    // Implicit output: the ellipsis dimensions, then the letters used once, sorted.
    std::map<char, int> count;
    for (const std::string& term : terms)
      for (char c : term)
        if (is_letter(c)) ++count[c];
    out = fresh;
    for (const auto& [c, n] : count)
      if (n == 1) out += c;
  }
  result.output = out;
  return result;
}

Shape einsum_output_shape(const std::string& equation, const std::vector<Shape>& inputs) {
  std::vector<size_t> ranks;
  for (const Shape& shape : inputs) ranks.push_back(shape.size());
  const EinsumTerms terms = expand_einsum(equation, ranks);
  std::map<char, int64_t> size;
  for (size_t j = 0; j < terms.operands.size(); ++j) {
    for (size_t d = 0; d < terms.operands[j].size(); ++d) {
      const char c = terms.operands[j][d];
      const int64_t extent = inputs[j][d];
      auto [it, fresh] = size.emplace(c, extent);
      // Size 1 broadcasts against any extent, as ONNX allows.
      if (!fresh && it->second != extent) {
        if (it->second == 1) it->second = extent;
        else if (extent != 1)
          throw std::invalid_argument("equation '" + equation + "': letter '" + std::string(1, c) + "' is " +
                                      std::to_string(it->second) + " and " + std::to_string(extent));
      }
    }
  }
  Shape shape;
  for (char c : terms.output) {
    auto it = size.find(c);
    if (it == size.end() || std::count(terms.output.begin(), terms.output.end(), c) != 1)
      throw std::invalid_argument("equation '" + equation + "': output letter '" + std::string(1, c) +
                                  "' is in no operand or repeated");
    shape.push_back(it->second);
  }
  return shape;
}

}  // namespace pase
