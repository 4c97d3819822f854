#pragma once
// The formulas of the `pase` cost model (cost-model.md), one function each.
// All costs are in FLOP; r is the FLOP-equivalent cost of moving one word.
#include <cstdint>

#include "costmodel/vertex_model.h"

namespace pase {

/// Ring all-reduce of w words per device over q devices: r * (w/q) * 2 * (q-1).
[[nodiscard]] double all_reduce(double words, double devices, double r);

/// Redistribution of a tensor produced with split `a` and consumed with split `b` (forward and backward).
[[nodiscard]] double redistribution_cost(const Shape& tensor, const int64_t* a, const int64_t* b, double r);

/// The words a device must fetch: max(0, need - overlap), without the factor 2r.
[[nodiscard]] double redistribution_words(const Shape& tensor, const int64_t* a, const int64_t* b);

/// Layer cost L(v, config).
[[nodiscard]] double layer_cost(const VertexModel& model, const int32_t* config, double r);

/// How a configuration splits one tensor of the vertex.
void tensor_split(const SplitMap& map, const int32_t* config, int64_t* split_out);

}  // namespace pase
