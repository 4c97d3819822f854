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

}  // namespace pase
