#pragma once
// Measures a pase-machine profile on this host's GPUs: the SGEMM throughput
// grid of the three training layouts, copy bandwidths and latencies.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "costmodel/machine_profile.h"

namespace pase {

struct CalibrateOptions {
  std::string name;                ///< profile name; "" gives "<GPU name> node"
  std::vector<int64_t> sizes = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};  ///< m, n and k grid
  int warmup = 3;
  int repeats = 10;
  int device = 0;                  ///< the GPU whose GEMMs are timed
  int64_t devices_per_node = 0;    ///< 0: the GPUs this host sees
  double inter_node_gbps = 12;     ///< not measurable from one host: given
  double inter_node_latency_us = 20;
  double peak_tflops = 0;          ///< 0: from the clock rate and FP32 lanes per SM
  size_t copy_bytes = size_t{256} << 20;
};

/// Number of CUDA GPUs; throws GpuError naming the runtime's reason when there are none.
[[nodiscard]] int require_gpus();

/// Runs every benchmark; `progress` gets one line per step.
[[nodiscard]] MachineProfile measure_profile(const CalibrateOptions& options,
                                             const std::function<void(const std::string&)>& progress);

}  // namespace pase
