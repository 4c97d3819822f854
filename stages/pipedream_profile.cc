#include "stages/pipedream_profile.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "base/error.h"

namespace pase {
namespace {

std::vector<std::string> split_on(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at = text.find(separator); at != std::string::npos; at = text.find(separator, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + separator.size();
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

class LineReader {
 public:
  LineReader(const std::string& source, size_t line) : where_(source + ": line " + std::to_string(line) + ": ") {}

  [[noreturn]] void fail(const std::string& message) const { throw InputError(where_ + message); }

  double number(const std::string& text, const std::string& field) const {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || value < 0)
      fail("field '" + field + "': expected a non-negative number, got '" + text + "'");
    return value;
  }

  // "name=value"; a list value "[a; b]" is the sum of its entries.
  double field(const std::string& entry, const std::string& name) const {
    const std::string text = trimmed(entry);
    if (text.compare(0, name.size() + 1, name + "=") != 0)
      fail("expected '" + name + "=', got '" + text.substr(0, 40) + "'");
    const std::string value = text.substr(name.size() + 1);
    if (value.empty() || value[0] != '[') return number(value, name);
    if (value.back() != ']') fail("field '" + name + "': a list must end with ']'");
    double sum = 0;
    for (const std::string& item : split_on(value.substr(1, value.size() - 2), "; ")) sum += number(trimmed(item), name);
    return sum;
  }

 private:
  std::string where_;
};

ProfileNode parse_node(const std::string& line, const LineReader& at) {
  const std::vector<std::string> parts = split_on(trimmed(line), " -- ");
  if (parts.size() < 3 || parts.size() > 4)
    at.fail("expected 'ID -- DESCRIPTION -- forward_compute_time=..., ...', got " + std::to_string(parts.size()) +
            " parts separated by ' -- '");
  ProfileNode node;
  node.id = parts[0];
  node.description = parts[1];
  if (node.id.empty()) at.fail("a node's id is empty");
  const std::vector<std::string> fields = split_on(parts[2], ", ");
  if (fields.size() != 4)
    at.fail("expected forward_compute_time, backward_compute_time, activation_size and parameter_size, got " +
            std::to_string(fields.size()) + " fields");
  node.forward_ms = at.field(fields[0], "forward_compute_time");
  node.backward_ms = at.field(fields[1], "backward_compute_time");
  node.activation_bytes = at.field(fields[2], "activation_size");
  node.parameter_bytes = at.field(fields[3], "parameter_size");
  return node;
}

}  // namespace

ProfileGraph parse_pipedream_profile(const std::string& text, const std::string& source) {
  ProfileGraph graph;
  std::map<std::string, int> index;
  size_t number = 0;
  for (const std::string& raw : split_on(text, "\n")) {
    ++number;
    if (trimmed(raw).empty()) continue;
    const LineReader at(source, number);
    if (raw[0] != '\t') {
      ProfileNode node = parse_node(raw, at);
      if (!index.emplace(node.id, static_cast<int>(graph.nodes.size())).second)
        at.fail("node '" + node.id + "' is defined twice");
      graph.nodes.push_back(std::move(node));
      continue;
    }
    const std::vector<std::string> ends = split_on(trimmed(raw), " -- ");
    if (ends.size() != 2) at.fail("expected an edge 'FROM -- TO'");
    auto from = index.find(ends[0]), to = index.find(ends[1]);
    if (from == index.end()) at.fail("edge from '" + ends[0] + "', which no line before defines");
    if (to == index.end()) at.fail("edge to '" + ends[1] + "', which no line before defines");
    graph.edges.emplace_back(from->second, to->second);
  }
  if (graph.nodes.empty()) throw InputError(source + ": no nodes (a PipeDream profile, graph.txt, was expected)");
  return graph;
}

}  // namespace pase
