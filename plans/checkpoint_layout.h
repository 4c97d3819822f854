#pragma once
// A weight's layout carried onto the shape the model's checkpoint holds it
// in (graphs/checkpoint_shapes.h): LLaMA's q_proj.weight is laid out on
// [kv heads, group, head dim, model] and held as [heads·head dim, model].
//
// A checkpoint dimension that merges several of the weight's dimensions is
// split over their axes in order, major first; that is the same layout
// exactly when every device's piece of the merged dimension is one block,
// and the blocks are in device order: every split divides its extent, and
// each dimension before the last split one is split to its extent. Splitting
// the heads of GPT-2's fused c_attn ([d, (q|k|v) · heads · head dim]) is not:
// a device holds one slice of each of q, k and v.
#include <vector>

#include "plans/plan.h"

namespace pase {

/// `weight` (laid out on the mesh) viewed as the checkpoint's `shape`, whose
/// dimensions merge the weight's as `merges` says (checkpoint_merges). Where
/// no layout of `shape` holds the same pieces, spec is nullopt and note says
/// which dimension and why.
[[nodiscard]] CheckpointView checkpoint_view(const PlannedTensor& weight, const Shape& shape,
                                             const std::vector<std::vector<int>>& merges);

}  // namespace pase
