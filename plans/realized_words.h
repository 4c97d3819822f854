#pragma once
// What a redistribution really moves on a mesh: for a tensor laid out one way
// by its producer and needed another way by its consumer, the most elements
// any device needs but does not hold (docs/plans.md).
#include <cstdint>
#include <utility>
#include <vector>

#include "base/shape.h"
#include "graphs/vertex_model.h"
#include "plans/plan.h"

namespace pase {

/// A layer's axis assignment: per domain dimension, its mesh axes, major first.
using AxisAssignment = std::vector<std::vector<int>>;

/// A tensor's layout under a layer's assignment: each dimension runs over the
/// axes of the letters it follows, in order.
[[nodiscard]] AxisSpec tensor_spec(const SplitMap& map, const AxisAssignment& assignment);

/// How many devices hold distinct tiles under `spec` (the product of its axes' sizes).
[[nodiscard]] double spec_devices(const AxisSpec& spec, const Mesh& mesh);

/// Device coordinates, row-major over the mesh (last axis fastest).
[[nodiscard]] std::vector<std::vector<int64_t>> mesh_coordinates(const Mesh& mesh);

/// A block of one tensor dimension: elements [first, second).
using Block = std::pair<int64_t, int64_t>;

/// The blocks `spec` gives every device: entry [device · rank + t] for tensor
/// dimension t. A dimension split s ways has blocks of ceil(size / s)
/// elements (the last shorter or empty), indexed by the device's coordinates
/// on that dimension's axes in mixed radix, first axis most significant.
[[nodiscard]] std::vector<Block> device_blocks(const Shape& shape, const AxisSpec& spec, const Mesh& mesh,
                                               const std::vector<std::vector<int64_t>>& coordinates);
/// The same into `blocks` (resized), for loops that reuse one buffer.
void device_blocks(const Shape& shape, const AxisSpec& spec, const Mesh& mesh,
                   const std::vector<std::vector<int64_t>>& coordinates, std::vector<Block>& blocks);

/// The largest, over all devices, number of elements of the tile in `needed`
/// that the tile in `held` does not contain (both from device_blocks, same
/// tensor of `rank` dimensions).
[[nodiscard]] double realized_words(const std::vector<Block>& held, const std::vector<Block>& needed, size_t rank);

/// The same from the two layouts.
[[nodiscard]] double realized_words(const Shape& shape, const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh,
                                    const std::vector<std::vector<int64_t>>& coordinates);

}  // namespace pase
