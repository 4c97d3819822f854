#pragma once
// Every way to give S pipeline stages their devices (docs/pipeline.md,
// "Stages of unequal devices"): the compositions of the devices into S
// positive parts, each a multiple of a unit (a node's devices when the job
// spans whole nodes, so no stage shares a node with another), in
// lexicographic order. A search over them is exact over that space.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pase {

/// The number of ways: C(devices / unit - 1, stages - 1), or above `limit`
/// when there are more (counted in doubles, never overflowing).
[[nodiscard]] double device_split_count(int64_t devices, int stages, int64_t unit);

/// Every split of `devices` into `stages` parts, each a positive multiple of
/// `unit`. OptionError (field "stage_devices") when `unit` does not divide
/// the devices, or when there are more than `limit` splits (naming how many).
[[nodiscard]] std::vector<std::vector<int64_t>> device_splits(int64_t devices, int stages, int64_t unit, size_t limit);

/// The unit of device_splits for a job of `devices` on nodes of `per_node`
/// (0: no nodes): the node when the job is whole nodes, more than one; else 1.
[[nodiscard]] int64_t device_split_unit(int64_t devices, int64_t per_node);

}  // namespace pase
