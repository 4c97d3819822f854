#include "onnximport/einsum_shape.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

namespace pase {

std::optional<Shape> einsum_output_shape(const std::string& equation, const std::vector<Shape>& inputs) {
  std::string text;
  for (char c : equation)
    if (c != ' ') text += c;
  if (text.find('.') != std::string::npos) return std::nullopt;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t from = 0;;) {
    size_t comma = lhs.find(',', from);
    terms.push_back(lhs.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (terms.size() != inputs.size())
    throw std::invalid_argument("equation '" + equation + "' has " + std::to_string(terms.size()) + " operand(s), the node " +
                                std::to_string(inputs.size()));
  std::map<char, int64_t> size;
  std::map<char, int> count;
  for (size_t j = 0; j < terms.size(); ++j) {
    if (terms[j].size() != inputs[j].size())
      throw std::invalid_argument("equation '" + equation + "': operand " + std::to_string(j) + " '" + terms[j] + "' has " +
                                  std::to_string(terms[j].size()) + " letters but rank " + std::to_string(inputs[j].size()));
    for (size_t d = 0; d < terms[j].size(); ++d) {
      const char c = terms[j][d];
      if (!std::isalpha(static_cast<unsigned char>(c))) throw std::invalid_argument("equation '" + equation + "': bad letter");
      const int64_t extent = inputs[j][d];
      auto [it, fresh] = size.emplace(c, extent);
      // Size 1 broadcasts against any extent, as ONNX allows.
      if (!fresh && it->second != extent) {
        if (it->second == 1) it->second = extent;
        else if (extent != 1)
          throw std::invalid_argument("equation '" + equation + "': letter '" + std::string(1, c) + "' is " +
                                      std::to_string(it->second) + " and " + std::to_string(extent));
      }
      ++count[c];
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = text.substr(arrow + 2);
  } else {
    // Implicit output: the letters used once, in alphabetical order.
    for (const auto& [c, n] : count)
      if (n == 1) out += c;
  }
  Shape shape;
  for (char c : out) {
    auto it = size.find(c);
    if (it == size.end() || std::count(out.begin(), out.end(), c) != 1)
      throw std::invalid_argument("equation '" + equation + "': output letter '" + std::string(1, c) +
                                  "' is in no operand or repeated");
    shape.push_back(it->second);
  }
  return shape;
}

}  // namespace pase
