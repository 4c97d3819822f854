#pragma once
// The capped search past the exact DP's limits (docs/memory.md, "Past the
// exact DP's limits"). The search runs on a relaxation of the objective
// (dp/bounded_solve.h, relax_to_fit: the edges that make the DP's tables
// large replaced by separable lower bounds). No strategy costs more there
// than on the true objective, and memory is a sum over vertices the
// relaxation leaves alone, so every bound the search proves on the
// relaxation bounds the true capped optimum, and what fits the cap fits it
// on both. Its strategy is then priced on the true objective and improved by
// single-vertex moves under the cap (memorycap/cap_local_search.h); the gap
// is from that cost to the relaxation's bound.
#include <cstdint>
#include <vector>

#include "dp/bounded_solve.h"
#include "dp/objective.h"
#include "costmodel/memory_model.h"
#include "memorycap/memory_cap.h"

namespace pase {

/// `found`, the capped search's answer over a relaxation of `truth`, priced
/// on `truth` and improved within its cap, its gap measured from that cost.
/// `seed` (a strategy of `truth`, say the bounded solve's without the cap;
/// empty: none) is brought under the cap by single-vertex moves and
/// improved there too, and replaces the answer where it costs less. An
/// answer that fits nothing (or was cut off) is priced and left as it is.
[[nodiscard]] CappedSolution on_true_objective(CappedSolution found, const Objective& truth, const MemoryTables& memory,
                                               std::vector<int32_t> seed = {});

/// What such a search answered, as a bounded solve reports it: its strategy,
/// its bound, the edges relaxed.
[[nodiscard]] BoundedSolution relaxed_report(const Solution& solution, const CappedSolution& capped,
                                             size_t relaxed_edges);

}  // namespace pase
