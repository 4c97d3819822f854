#pragma once
// What a redistribution really moves on a mesh: for a tensor laid out one way
// by its producer and needed another way by its consumer, the most elements
// any device needs but does not hold (docs/plans.md).
#include <cstdint>

#include "graphs/shape.h"
#include "solver/plan.h"

namespace pase {

/// Device coordinates, row-major over the mesh (last axis fastest).
[[nodiscard]] std::vector<std::vector<int64_t>> mesh_coordinates(const Mesh& mesh);

/// The largest, over all devices, number of elements of the tile `needed`
/// gives a device that the tile `held` gives it does not contain. A tensor
/// dimension split s ways has blocks of ceil(size / s) elements (the last
/// shorter or empty), indexed by the device's coordinates on that
/// dimension's axes in mixed radix, first axis most significant.
[[nodiscard]] double realized_words(const Shape& shape, const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh,
                                    const std::vector<std::vector<int64_t>>& coordinates);

}  // namespace pase
