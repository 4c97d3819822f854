#pragma once
// The cheapest mix of a few strategies under a memory cap: a DP over the
// elimination plan in which every vertex takes one of a few configurations
// (those the given strategies use) and each table entry also carries the
// memory used so far, in whole units of a grid over the slack between those
// configurations' least bytes and the cap (docs/memory.md).
//
// Each configuration's bytes above its vertex's least are rounded UP to the
// grid, so every strategy the DP returns certainly fits; the grid only loses
// strategies within one unit per vertex of the cap. A heuristic for the
// capped search's answer (an upper bound): the hull strategies on both sides
// of the cap usually differ in a few repeated layers, and the best cap-fitting
// mix of them is what single-vertex moves cannot find. Memory per table entry
// grows by the number of units, so the grid is sized to a work budget.
#include <cstdint>
#include <optional>
#include <vector>

#include "costmodel/memory_model.h"
#include "costmodel/objective.h"
#include "solver/ordering.h"

namespace pase {

struct CapMixOptions {
  uint64_t max_work = uint64_t{200} * 1000 * 1000;  ///< (entry, configuration, unit) steps, convolutions counted in full
  uint64_t max_bytes = uint64_t{256} << 20;         ///< bytes of all tables together
  int max_units = 1024;                              ///< grid steps over the slack (at most)
};

/// What the mix DP found: the strategy (empty if no mix fits on the grid or
/// the tables would exceed the budget) and the grid it used.
struct CapMix {
  std::vector<int32_t> choice;
  int units = 0;           ///< grid steps over the slack (0: not run)
  uint64_t unit_bytes = 0; ///< bytes per step
  uint64_t work = 0;       ///< steps taken
};

/// The cheapest strategy within `cap` bytes whose vertex v takes one of the
/// configurations the `strategies` give it, up to the grid (see above).
[[nodiscard]] CapMix best_mix_under_cap(const Objective& objective, const MemoryTables& memory, const EliminationPlan& plan,
                                        const std::vector<const std::vector<int32_t>*>& strategies, uint64_t cap,
                                        const CapMixOptions& options = {});

}  // namespace pase
