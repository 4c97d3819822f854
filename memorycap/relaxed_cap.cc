#include "memorycap/relaxed_cap.h"

#include <algorithm>

#include "memorycap/cap_local_search.h"

namespace pase {

CappedSolution on_true_objective(CappedSolution found, const Objective& truth, const MemoryTables& memory,
                                 std::vector<int32_t> seed) {
  if (found.feasible && !found.cut_off) {
    const CapLocalSearch moves(truth, memory);
    moves.improve(found.choice, found.cap);
    // The relaxation prices the edges it relaxed too low, so its answer may
    // pay much for them: a strategy found with every edge priced may do better.
    if (!seed.empty() && moves.repair(seed, found.cap)) {
      moves.improve(seed, found.cap);
      if (truth.evaluate(seed) < truth.evaluate(found.choice)) found.choice = std::move(seed);
    }
  }
  found.cost = truth.evaluate(found.choice);
  found.memory = plan_memory(memory, found.choice).total();
  if (found.feasible) {
    // The relaxation's bound holds for the truth; rounding alone could put it above a cost.
    found.lower_bound = std::min(found.lower_bound, found.cost);
    found.gap = relative_gap(found.cost, found.lower_bound);
  }
  return found;
}

BoundedSolution relaxed_report(const Solution& solution, const CappedSolution& capped, size_t relaxed_edges) {
  BoundedSolution bounded;
  bounded.solution = solution;
  bounded.lower_bound = capped.feasible ? capped.lower_bound : capped.cost;
  bounded.relaxed_edges = relaxed_edges;
  return bounded;
}

}  // namespace pase
