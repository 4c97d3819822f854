#include "base/json_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace pase {

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char ch : text) {
    auto byte = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20) {
          out += "\\u00";
          out += kHex[byte >> 4];
          out += kHex[byte & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void append_json_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  if (std::signbit(value)) {
    out += '-';
    value = -value;
  }
  if (value == 0) {
    out += "0.0";
    return;
  }
  // Shortest round-trip digits d.ddd and exponent, then nlohmann's layout:
  // plain notation while the decimal point sits within 15 digits of the
  // first one, else d.ddde+XX.
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));
  size_t e = text.find('e');
  std::string digits;
  digits += text[0];
  if (e > 1) digits.append(text.substr(2, e - 2));
  const int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;  // position of the decimal point after the first digit
  constexpr int kMinExp = -4, kMaxExp = 15;
  if (k <= n && n <= kMaxExp) {
    out += digits;
    out.append(static_cast<size_t>(n - k), '0');
    out += ".0";
  } else if (0 < n && n <= kMaxExp) {
    out.append(digits, 0, static_cast<size_t>(n));
    out += '.';
    out.append(digits, static_cast<size_t>(n), std::string::npos);
  } else if (kMinExp < n && n <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    int shown = n - 1;
    out += 'e';
    out += shown < 0 ? '-' : '+';
    shown = std::abs(shown);
    if (shown < 10) out += '0';
    out += std::to_string(shown);
  }
}

void append_json_number(std::string& out, int64_t value) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void append_json_number(std::string& out, uint64_t value) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

namespace {
template <typename Int>
void append_array(std::string& out, const std::vector<Int>& values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    append_json_number(out, static_cast<int64_t>(values[i]));
  }
  out += ']';
}
}  // namespace

void append_json_array(std::string& out, const std::vector<int64_t>& values) { append_array(out, values); }
void append_json_array(std::string& out, const std::vector<int32_t>& values) { append_array(out, values); }

void append_json_top_level_key(std::string& out, std::string_view key) {
  out += out.empty() ? "{\n  " : ",\n  ";
  append_json_string(out, key);
  out += ": ";
}

void append_json_array(std::string& out, const std::vector<std::string>& values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, values[i]);
  }
  out += ']';
}

}  // namespace pase
