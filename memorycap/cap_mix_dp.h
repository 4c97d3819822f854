#pragma once
// The cheapest mix of a few strategies under a memory cap: a DP over the
// elimination plan in which every vertex takes one of a few configurations
// (those the given strategies use) and each table entry also carries the
// memory used so far, in units of a grid (docs/memory.md).
//
// Memory is counted against the first strategy, the reference: each vertex's
// bytes minus the reference's bytes there, rounded UP to the grid (an
// addition counts at least its bytes, a saving at most), so every strategy
// the DP returns certainly fits, and the reference itself (if it fits) is
// always among the candidates: vertices that keep its configuration count
// exactly 0. Or (`relative` false) against each vertex's least allowed
// bytes, the grid spanning the slack those leave under the cap. A heuristic for the capped search's answer (an upper bound): the
// hull strategies on both sides of the cap usually differ in whole repeated
// layers, and the best cap-fitting mix of them is what single-vertex moves
// cannot find. Memory per table entry grows by the number of units, so the
// grid is sized to a work budget.
#include <cstdint>
#include <optional>
#include <vector>

#include "costmodel/memory_model.h"
#include "dp/objective.h"
#include "dp/ordering.h"

namespace pase {

struct CapMixOptions {
  uint64_t max_work = uint64_t{200} * 1000 * 1000;  ///< (entry, configuration, unit) steps, convolutions counted in full
  uint64_t max_bytes = uint64_t{256} << 20;         ///< bytes of all tables together
  int max_units = 1024;                              ///< grid steps (at most): half for savings, half for additions
  /// Count memory against the reference strategy (true), or against each
  /// vertex's least bytes among its allowed configurations, over the slack
  /// those leave under the cap (false): the first loses nothing on vertices
  /// that keep the reference's configuration, the second has all the units
  /// for additions; each finds mixes the other misses.
  bool relative = true;
};

/// What the mix DP found: the strategy (empty if no mix fits on the grid or
/// the tables would exceed the budget) and the grid it used.
struct CapMix {
  std::vector<int32_t> choice;
  int units = 0;           ///< grid steps (0: not run)
  uint64_t unit_bytes = 0; ///< bytes per step
  uint64_t work = 0;       ///< steps taken
};

/// The cheapest strategy within `cap` bytes whose vertex v takes one of the
/// configurations the `strategies` give it, up to the grid (see above);
/// `strategies[0]` is the reference.
[[nodiscard]] CapMix best_mix_under_cap(const Objective& objective, const MemoryTables& memory, const EliminationPlan& plan,
                                        const std::vector<const std::vector<int32_t>*>& strategies, uint64_t cap,
                                        const CapMixOptions& options = {});

}  // namespace pase
