#pragma once
// A weight that a graph declares in more dimensions than the model's
// checkpoint holds it in: LLaMA's q_proj.weight is [kv heads, group, head
// dim, model] = [8, 8, 128, 8192] in the graph, so that attention's einsums
// can split heads, and [8192, 8192] in the checkpoint. The checkpoint's
// tensor is the same elements in the same row-major order, with neighbouring
// dimensions merged; the graph file says so under `checkpoint_shapes`
// (docs/formats.md), and the plan lays the weight out on both shapes
// (plans/checkpoint_layout.h).
#include <optional>
#include <vector>

#include "base/shape.h"

namespace pase {

/// Per dimension of `checkpoint`, the dimensions of `declared` it merges
/// (consecutive, major first; every declared dimension in exactly one group:
/// a size-1 dimension between two groups joins the later one, trailing ones
/// the last).
/// nullopt where `checkpoint` is not `declared` with neighbouring dimensions
/// merged (another element count, a split or reordered dimension).
[[nodiscard]] std::optional<std::vector<std::vector<int>>> checkpoint_merges(const Shape& declared,
                                                                             const Shape& checkpoint);

}  // namespace pase
