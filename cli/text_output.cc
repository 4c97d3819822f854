#include "cli/text_output.h"

#include <cstdio>

namespace pase {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string format_number(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string format_total(double cost, const std::string& unit) {
  return format_number(unit == "flop" && cost < 1e17 ? "%.0f" : "%.9g", cost);
}

}  // namespace pase
