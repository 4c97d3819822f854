#pragma once
// Byte sizes and counts as people write them on a command line ("80GB",
// "16GiB", "512MiB", "1.5TB", "4096"; "2e12"), and GiB as tables print them.
#include <cstdint>
#include <optional>
#include <string>

namespace pase {

/// A positive size in bytes: a decimal number (digits, optionally a fraction)
/// then optionally a unit: B, kB/KB, MB, GB, TB or K, M, G, T (powers of
/// 1000) or KiB, MiB, GiB, TiB or Ki, Mi, Gi, Ti (powers of 1024), units
/// case-insensitive, nothing else (no
/// spaces), at most six decimals. A fraction of a byte is dropped. nullopt when malformed, zero or
/// above 2^64 - 1.
[[nodiscard]] std::optional<uint64_t> parse_byte_size(const std::string& text);

/// A count as people write it: digits ("2000000000") or a number with a
/// decimal exponent ("2e9", "1.5e12") whose value is a whole number, at most
/// 2^64 - 1. nullopt otherwise.
[[nodiscard]] std::optional<uint64_t> parse_count(const std::string& text);

/// `bytes` in GiB with two decimals ("15.25").
[[nodiscard]] std::string format_gib(uint64_t bytes);

}  // namespace pase
