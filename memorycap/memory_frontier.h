#pragma once
// The cost-memory Pareto frontier of a graph (docs/memory.md): strategies
// from the least memory per device to the least cost, each cheaper than every
// one that needs less memory.
//
// The frontier's lower convex hull comes exactly from the memory-priced DP:
// between two hull strategies, the DP at the price where their lines cross
// either returns a strategy below both (a new hull point) or proves the edge.
// A hull strategy is optimal under a cap of its own memory (gap 0). Between
// hull points, single-vertex moves from the right end look for strategies
// that need less memory than it and cost less than the left end; their gaps
// are measured against the hull, which bounds every cap from below.
#include <cstdint>
#include <vector>

#include "costmodel/memory_model.h"
#include "memorycap/memory_priced_dp.h"

namespace pase {

struct FrontierPoint {
  double cost = 0.0;
  PlanMemory bytes;
  double lower_bound = 0.0;  ///< no strategy within bytes.total() costs less
  double gap = 0.0;          ///< (cost - lower_bound) / lower_bound; 0: optimal under a cap of its memory
  bool on_hull = false;      ///< found by the DP itself (then gap 0)
  std::vector<int32_t> choice;
  size_t source = 0;         ///< merge_frontiers: the index of the frontier it came from
};

struct FrontierOptions {
  int max_dp_runs = 400;        ///< DP runs for the hull (each an exact DP)
  int max_between = 8;          ///< strategies searched for between two hull points
};

/// The frontier, least memory first (costs strictly falling).
[[nodiscard]] std::vector<FrontierPoint> memory_frontier(MemoryPricedDp& dp, const Objective& objective,
                                                         const MemoryTables& memory, const FrontierOptions& options = {});

/// The frontier of the union of several problems' strategies (one graph at
/// several micro-batch counts): each point that no point of any frontier
/// matches at no more memory for less, least memory first, with `source`
/// set. A point's bound holds over every frontier: the least, over the
/// others, of the bound of their first point at its memory or more (bounds
/// fall as memory grows), and its own; it stays `on_hull` only where no
/// other frontier's bound lies below its cost.
[[nodiscard]] std::vector<FrontierPoint> merge_frontiers(const std::vector<std::vector<FrontierPoint>>& frontiers);

}  // namespace pase
