#pragma once
// Overflow-checked int64 arithmetic (and saturating uint64 counts, below) for sizes computed from input (a graph
// file, an ONNX model, a plan). Signed overflow is undefined behaviour, and
// in practice a size that wrapped shows up far from its cause as a negative
// shape; every such computation goes through these, and the caller turns
// nullopt into bad input naming the file, node and field (NodeContext::add,
// ::mul and ::sub do that for shape inference).
#include <cstdint>
#include <limits>
#include <optional>

namespace pase {

/// a + b, or nullopt when the sum does not fit in int64.
[[nodiscard]] inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

/// a − b, or nullopt when the difference does not fit in int64.
[[nodiscard]] inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_sub_overflow(a, b, &result)) return std::nullopt;
  return result;
}

/// a · b, or nullopt when the product does not fit in int64.
[[nodiscard]] inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

/// Where saturating arithmetic stops: a count that would not fit in 64 bits
/// (table sizes of a plan that cannot run), printed as "more than 2^64".
inline constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

/// a · b, or kSaturated when the product does not fit.
[[nodiscard]] inline uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return a != 0 && b > kSaturated / a ? kSaturated : a * b;
}

/// a + b, or kSaturated when the sum does not fit.
[[nodiscard]] inline uint64_t saturating_add(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }

}  // namespace pase
