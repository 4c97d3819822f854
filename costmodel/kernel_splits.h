#pragma once
// Splits frameworks run (docs/calibration.md, "Splits frameworks run"): a
// tensor cut so finely that each device holds rows of a few elements runs
// on no kernel well (a tensor-core GEMM tiles its operands in rows of 64 to
// 256 elements), and no framework splits a head's width (its innermost 64 or
// 128 elements). The rule keeps every tensor a layer reads, writes or holds
// in rows of at least a minimum length on each device.
#include <cstdint>

#include "graphs/vertex_model.h"

namespace pase {

/// The row length the calibrated model's searches keep by default: one
/// tensor-core tile, and the head width of today's large models.
inline constexpr int64_t kKernelRow = 128;

/// Whether `config` leaves each tensor of `model` (inputs, outputs, weights)
/// contiguous rows of at least `min_row` elements per device: below the
/// innermost split dimension d, a device's row is (extent d / split d) times
/// the extents of the dimensions after d. A tensor left whole always passes.
[[nodiscard]] bool keeps_rows(const VertexModel& model, const int32_t* config, int64_t min_row);

}  // namespace pase
