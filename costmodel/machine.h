#pragma once
// The machine the `pase` cost model prices for: p devices of F TFLOP/s joined at B GB/s.
#include <cstdint>
#include <string>

namespace pase {

struct Machine {
  int64_t devices = 1;
  double flops_tflops = 10.0;   ///< F, peak per device
  double bandwidth_gbps = 16.0; ///< B, per link
  std::string profile;          ///< the calibrated model's machine profile by name; empty for the pase model

  /// FLOP-equivalent cost of moving one 8-byte word: r = 8000 * F / B.
  [[nodiscard]] double word_cost() const { return 8000.0 * flops_tflops / bandwidth_gbps; }
};

/// Whether the devices [first_a, first_a + devices_a) and [first_b, first_b + devices_b)
/// span more than one node of `per_node` devices (0: not known, never).
[[nodiscard]] inline bool devices_across_nodes(int64_t first_a, int64_t devices_a, int64_t first_b, int64_t devices_b,
                                               int64_t per_node) {
  if (per_node <= 0) return false;
  const int64_t low = first_a < first_b ? first_a : first_b;
  const int64_t end_a = first_a + devices_a, end_b = first_b + devices_b;
  const int64_t high = (end_a > end_b ? end_a : end_b) - 1;
  return low / per_node != high / per_node;
}

}  // namespace pase
