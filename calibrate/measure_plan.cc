#include "calibrate/measure_plan.h"

#include <algorithm>
#include <cmath>

#include "calibrate/cuda_check.h"
#include "calibrate/gemm_timer.h"
#include "calibrate/measure_profile.h"

namespace pase {

std::vector<std::array<double, 3>> measure_plan(const std::vector<ValidationLayer>& plan, int device, int warmup,
                                                int repeats, Dtype dtype) {
  const int gpus = require_gpus();
  if (device < 0 || device >= gpus)
    throw GpuError("--device " + std::to_string(device) + ": this host has " + std::to_string(gpus) + " GPU(s)");
  PASE_CUDA(cudaSetDevice(device));
  auto batch_of = [](const ValidationLayer& layer) { return static_cast<int64_t>(std::llround(layer.shape.batch)); };
  size_t largest = 1;
  for (const ValidationLayer& layer : plan)
    for (const GemmCall& call : layer.gemms) largest = std::max(largest, GemmTimer::elements_needed(call, batch_of(layer)));
  GemmTimer timer(largest, dtype);
  std::vector<std::array<double, 3>> measured;
  for (const ValidationLayer& layer : plan) {
    std::array<double, 3> seconds{};
    for (size_t g = 0; g < 3; ++g) seconds[g] = timer.median_seconds(layer.gemms[g], batch_of(layer), warmup, repeats);
    measured.push_back(seconds);
  }
  return measured;
}

}  // namespace pase
