#pragma once
// `pase export`: a plan's layouts in one framework's terms, as one JSON
// document a framework user loads directly (docs/plans.md):
//
//   {"format": "pase-export", "version": 1, "framework": "jax", "graph": "...",
//    "mesh": {"shape": [2,4], "axis_names": ["x0","x1"], "device_ids": [[0,1,2,3],[4,5,6,7]], "devices_per_node": 8},
//    "weights": {"fc6.weight": [null,"x0"], ...},
//    "weight_shapes": {"fc6.weight": {"shape": [4096,9216]}, ...},
//    "outputs": {"fc6": [[null,"x0"]], ...}}
//
// One layout per weight name and a list (one per output) per layer name: jax,
// a PartitionSpec's entries (null, "x0", ["x0","x1"]); dtensor, placements
// (["Shard(0)","Replicate()"]) or null where DTensor cannot express the
// layout (then "notes" says why); hlo, an HloSharding text. A weight is laid
// out on the shape its checkpoint holds it in wherever its layout carries
// over (plans/checkpoint_layout.h); weight_shapes says which shape that is.
//
// A pipeline plan (docs/pipeline.md) writes, after "graph", "stages": one
// object per stage with "stage", "first_device", then the fields above on
// the stage's own mesh (its device_ids the job's), and "sends": each input
// an earlier stage makes ({"tensor", "layer", "from_stage", "shape",
// "layout"}: the layout the receiving layer needs).
#include <cstdint>
#include <string>

#include "plans/plan_reader.h"

namespace pase {

enum class ExportFramework { Jax, Dtensor, Hlo };

/// "jax", "dtensor", "hlo"; nullopt for any other name.
[[nodiscard]] std::optional<ExportFramework> export_framework(const std::string& name);

/// Meshes the export writes at most: the document lists every device's id.
inline constexpr int64_t kDefaultExportDevices = int64_t{1} << 20;

/// The export document's text: one top-level field per line, one weight or
/// layer per line. A weight that two layers lay out differently is an
/// InputError naming both; a mesh of more than `max_devices` devices a
/// LimitError ("max_devices").
[[nodiscard]] std::string export_plan(const PlanFile& file, ExportFramework framework,
                                      int64_t max_devices = kDefaultExportDevices);

}  // namespace pase
