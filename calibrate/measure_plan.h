#pragma once
// Runs each GEMM of a validation plan on one GPU with cuBLAS.
#include <array>
#include <vector>

#include "calibrate/validation_plan.h"
#include "costmodel/dtype.h"

namespace pase {

/// Median measured seconds of each layer's forward, input-gradient and weight-gradient GEMMs in `dtype`.
[[nodiscard]] std::vector<std::array<double, 3>> measure_plan(const std::vector<ValidationLayer>& plan, int device,
                                                              int warmup, int repeats, Dtype dtype);

}  // namespace pase
