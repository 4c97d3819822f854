#pragma once
// A tensor layout on a device mesh (an AxisSpec: per tensor dimension, the
// mesh axes it is split over, major first) written in each framework's terms
// (docs/plans.md), and HLO sharding texts read back into the tile each device
// holds (hlo_device_tiles). For example:
//
//   spec [[], [x0]] on mesh [2, 4] (x0, x1)
//   jax      P(None, 'x0')
//   hlo      {devices=[1,2,4]<=[8] last_tile_dim_replicate}
//   dtensor  ["Shard(1)", "Replicate()"]
//
// Pure functions of the spec and the mesh; axes are indices into Mesh::axes
// and are assumed valid (read_plan checks them). A dimension's split is the
// product of the sizes of its axes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plans/plan.h"

namespace pase {

/// The JAX PartitionSpec text: None for a dimension on no axis, 'x0' for one
/// axis, ('x0', 'x1') for several (major first); "P()" for a scalar.
[[nodiscard]] std::string jax_partition_spec(const AxisSpec& spec, const Mesh& mesh);

/// The XLA HloSharding text, always in the iota form: {devices=[t_0,…,t_{r-1}]
/// followed by <=[N] (device ids in order) or <=[dims]T(perm) (the ids
/// reshaped to `dims` and transposed by `perm`), where t_i is dimension i's
/// split; when some mesh axes are in no dimension's list, a last tile
/// dimension (their sizes' product) and last_tile_dim_replicate follow.
/// {replicated} when the spec uses no axis. Axes of size 1 are left out of
/// the device array, and axes that stay adjacent are merged, as XLA prints it.
[[nodiscard]] std::string hlo_sharding(const AxisSpec& spec, const Mesh& mesh);

/// DTensor placements, one per mesh axis in mesh order: "Shard(t)" for an
/// axis that splits dimension t, "Replicate()" otherwise; `note` empty.
/// DTensor shards a dimension over several axes left to right in mesh order,
/// so a dimension whose axes (of size above 1) are not in mesh order cannot
/// be expressed: then `placements` is nullopt and `note` says why.
struct DtensorLayout {
  std::optional<std::vector<std::string>> placements;
  std::string note;
};
[[nodiscard]] DtensorLayout dtensor_placements(const AxisSpec& spec, const Mesh& mesh);

/// Reads an HloSharding text ({replicated}, or {devices=[…] followed by an
/// explicit id list or an iota <=[…] with an optional T(…), and an optional
/// last_tile_dim_replicate}) for a tensor of `rank` dimensions on `devices`
/// devices: per device id, the tile it holds (an index per dimension).
/// nullopt, with `error` saying why, for any other text.
[[nodiscard]] std::optional<std::vector<std::vector<int64_t>>> hlo_device_tiles(const std::string& text, size_t rank,
                                                                               int64_t devices, std::string& error);

/// Per dimension, the number of pieces its axes make (the product of their sizes).
[[nodiscard]] std::vector<int64_t> spec_split(const AxisSpec& spec, const Mesh& mesh);

}  // namespace pase
