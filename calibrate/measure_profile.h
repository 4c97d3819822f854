#pragma once
// Measures a pase-machine profile on this host's GPUs: the GEMM throughput
// grid of the three training layouts in each dtype, copy bandwidths and
// latencies.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "costmodel/dtype.h"
#include "costmodel/machine_profile.h"

namespace pase {

struct CalibrateOptions {
  std::string name;                ///< profile name; "" gives "<GPU name> node"
  std::vector<int64_t> sizes = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};  ///< n and k grid, and m's by default
  /// The m grid (rows: batch × positions, or im2col's batch × pixels), when it
  /// should reach further than `sizes`; empty: `sizes`.
  std::vector<int64_t> m_sizes;
  /// The dtypes whose GEMM tables are measured; empty: fp32, and tf32 and bf16 on GPUs
  /// with such tensor cores (compute capability 8.0 and later).
  std::vector<Dtype> dtypes;
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

/// Dense tensor-core FLOP/s of `dtype` per SM and clock cycle (fp32: the FP32
/// lanes' 2 per lane) for a compute capability; 0 where it is not known here.
[[nodiscard]] double flop_per_sm_clock(int major, int minor, Dtype dtype);

/// Runs every benchmark; `progress` gets one line per step.
[[nodiscard]] MachineProfile measure_profile(const CalibrateOptions& options,
                                             const std::function<void(const std::string&)>& progress);

}  // namespace pase
