#pragma once
// Per-layer techniques inside the capped search (docs/training.md). A
// technique that changes only a vertex's own cost and bytes (activation
// recomputation, a ZeRO stage) turns each configuration of the vertex into
// a few *options*, one per variant of the techniques, which no edge can tell
// apart. A strategy then picks one option per vertex: an ordinary objective
// over options, whose edges are the configurations' (the class maps
// composed with option -> configuration; the matrices shared, nothing
// copied), so the capped search's moves, mixes and branches work on it
// unchanged. The DP never sees options: MemoryPricedDp collapses each
// configuration's options to the best one for its price and byte range
// before a run, so its tables stay the configurations' and never grow.
#include <cstdint>
#include <vector>

#include "base/shared_array.h"
#include "costmodel/memory_model.h"
#include "dp/objective.h"

namespace pase {

/// One variant's prices: vertex costs over the configurations (its edges
/// unused) and bytes per configuration.
struct VariantPrices {
  const Objective* objective = nullptr;
  const MemoryTables* memory = nullptr;
};

/// The objective over options and the way back to configurations.
struct OptionSpace {
  Objective objective;  ///< a vertex's "configurations" here are its options
  MemoryTables memory;  ///< bytes of every option
  /// Per vertex: the options of configuration s are [first[s], first[s + 1]).
  std::vector<SharedArray<int32_t>> first;
  std::vector<SharedArray<int32_t>> config;   ///< per vertex, per option: its configuration
  std::vector<SharedArray<int32_t>> variant;  ///< per vertex, per option: its variant (index into the variants)

  /// The configuration of each vertex's option.
  [[nodiscard]] std::vector<int32_t> configs_of(const std::vector<int32_t>& options) const;
  /// The variant of each vertex's option.
  [[nodiscard]] std::vector<int32_t> variants_of(const std::vector<int32_t>& options) const;
};

/// The options of `base` (whose edges they keep) under `variants`: vertex v
/// may take variant k where bit k of allowed[v] is set (at least one bit
/// per vertex). Of a configuration's options, one that another matches or
/// beats in both cost and bytes is left out (the lower variant kept on a
/// tie): no optimum under any cap needs it. Vertices alike in every allowed
/// variant (shared costs and bytes) share their options' arrays.
[[nodiscard]] OptionSpace expand_options(const Objective& base, const std::vector<VariantPrices>& variants,
                                         const std::vector<uint32_t>& allowed);

}  // namespace pase
