#include "base/byte_size.h"

#include <cctype>
#include <cstdio>

namespace pase {
namespace {

constexpr uint64_t kMax = ~uint64_t{0};
constexpr size_t kMaxDecimals = 6;  // keeps remainder x unit within 64 bits (10^6 x 2^40 < 2^60)

}  // namespace

std::optional<uint64_t> parse_byte_size(const std::string& text) {
  // The number as whole = integer part, and fraction / divisor.
  size_t i = 0;
  uint64_t whole = 0, fraction = 0, divisor = 1;
  size_t digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (whole > (kMax - digit) / 10) return std::nullopt;
    whole = whole * 10 + digit;
  }
  if (digits == 0) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    size_t decimals = 0;
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++decimals) {
      if (decimals == kMaxDecimals) return std::nullopt;
      fraction = fraction * 10 + static_cast<uint64_t>(text[i] - '0');
      divisor *= 10;
    }
    if (decimals == 0) return std::nullopt;
  }
  std::string unit;
  for (; i < text.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  struct Unit {
    const char* name;
    uint64_t bytes;
  };
  constexpr uint64_t k = 1000;
  // "80G" and "80Gi" as Kubernetes and Slurm users write them: G = GB, Gi = GiB.
  const Unit units[] = {{"", 1},         {"b", 1},          {"kb", k},           {"mb", k * k},
                        {"gb", k * k * k}, {"tb", k * k * k * k}, {"kib", uint64_t{1} << 10}, {"mib", uint64_t{1} << 20},
                        {"gib", uint64_t{1} << 30}, {"tib", uint64_t{1} << 40},
                        {"k", k},          {"m", k * k},      {"g", k * k * k},    {"t", k * k * k * k},
                        {"ki", uint64_t{1} << 10}, {"mi", uint64_t{1} << 20}, {"gi", uint64_t{1} << 30},
                        {"ti", uint64_t{1} << 40}};
  for (const Unit& u : units) {
    if (unit != u.name) continue;
    if (whole > kMax / u.bytes) return std::nullopt;
    const uint64_t bytes = whole * u.bytes, part = fraction * u.bytes / divisor;
    if (bytes > kMax - part || bytes + part == 0) return std::nullopt;
    return bytes + part;
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_count(const std::string& text) {
  // mantissa digits (with the decimal point dropped) x 10^(exponent - decimals)
  size_t i = 0;
  std::string digits;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) digits += text[i];
  if (digits.empty()) return std::nullopt;
  int decimals = 0;
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++decimals) digits += text[i];
    if (decimals == 0) return std::nullopt;
  }
  int exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t start = ++i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (exponent > 100) return std::nullopt;
      exponent = exponent * 10 + (text[i] - '0');
    }
    if (i == start) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  int shift = exponent - decimals;  // digits x 10^shift
  while (shift < 0) {               // only trailing zeros may go
    if (digits.back() != '0') return std::nullopt;
    digits.pop_back();
    ++shift;
  }
  uint64_t value = 0;
  for (char c : digits) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  for (; shift > 0; --shift) {
    if (value > kMax / 10) return std::nullopt;
    value *= 10;
  }
  return value;
}

std::string format_gib(uint64_t bytes) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f", static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
  return buffer;
}

}  // namespace pase
