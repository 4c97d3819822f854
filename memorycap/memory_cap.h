#pragma once
// The lowest-cost strategy whose memory per device is at most a cap, with a
// proven lower bound on the best cost under the cap (docs/memory.md).
//
// The bound is Lagrangian: for every lambda >= 0, DP(lambda) - lambda * cap,
// where DP(lambda) is the exact optimum of cost + lambda * bytes, is at most
// the cost of any strategy within the cap. The best lambda is found by
// walking the lower convex hull of (bytes, cost) between a strategy that fits
// and one that does not; each step is one DP. Strategies the DP finds on the
// way, and single-vertex moves from them, give the feasible answer. Where the
// bound and the answer still differ, a branch-and-bound over byte ranges of
// single vertices (each node bounded the same way) closes the gap within a
// budget: when it runs out of nodes to explore, the answer is proven optimal.
#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include "costmodel/memory_model.h"
#include "memorycap/memory_priced_dp.h"

namespace pase {

/// Relative gap below which a capped strategy counts as proven optimal (the
/// DP's own summation-order tolerance, with room).
inline constexpr double kGapTolerance = 1e-9;

struct CapOptions {
  int max_dp_runs_per_bound = 64;  ///< DP runs one Lagrangian bound may take (each an exact DP)
  int max_nodes = 100000;          ///< branch-and-bound nodes (0: stop at the root's bound)
  /// The branch and bound's budget in DP steps: the (entry, configuration)
  /// steps its DP runs take (a folded block's copy counts its entries) and
  /// its mix DPs' steps, at least 8 DP runs' worth.
  /// A budget in work, not time, so the same input gives the same answer
  /// (2·10^9 steps: about 2 s at 10^9 steps per second).
  uint64_t max_search_work = uint64_t{2} * 1000 * 1000 * 1000;
  /// Wall-clock seconds for the whole search, the root's walk included
  /// (checked between DP runs: a run started finishes); default none. At
  /// its end the search answers with the best strategy found that fits and
  /// the bound proven so far (CappedSolution::timed_out).
  double max_seconds = 1e18;
  /// A wall-clock end set by the caller for more than this search (a
  /// command's time limit); the search stops at the earlier of the two.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// Steps for each of the root's mix DPs (memorycap/cap_mix_dp.h; 0: none); a
  /// branch-and-bound node's take at most half a DP run's each (or up to
  /// 10^7 steps where that is at most two runs').
  uint64_t mix_work = uint64_t{200} * 1000 * 1000;
  double target_gap = 0.0;         ///< stop branching once the gap is at most this (0: until proven optimal)
  /// A cost found elsewhere (another micro-batch count, another mesh): once
  /// the root's bound reaches it, the search stops (CappedSolution::cut_off).
  double cutoff = std::numeric_limits<double>::infinity();
  /// With a cutoff: a price per byte to try first (0: none), the root price
  /// of a like search (CappedSolution::root_price: another micro-batch count
  /// of the same graph). Its DP's bound, valid at any price, often reaches
  /// the cutoff at once where the walk from price 0 would take several DP
  /// runs; when it does not, the search goes on as without it.
  double first_price = 0.0;
};

struct CappedSolution {
  bool feasible = false;  ///< false: no strategy fits; `choice` is then the least-memory strategy
  std::vector<int32_t> choice;
  double cost = 0.0;
  uint64_t memory = 0;
  uint64_t cap = 0;
  uint64_t least_memory = 0;  ///< the least bytes any strategy needs
  double lower_bound = 0.0;   ///< no strategy within the cap costs less (feasible only)
  double gap = 0.0;           ///< (cost - lower_bound) / lower_bound; 0: proven optimal
  double root_lower_bound = 0.0;  ///< the Lagrangian bound before branching
  double root_price = 0.0;        ///< the price per byte the root's bound was read at (0: the optimum without the cap)
  int dp_runs = 0;
  int nodes = 0;                  ///< branch-and-bound nodes bounded (the root is one)
  /// Stopped at the root: no strategy within the cap costs less than
  /// CapOptions::cutoff (lower_bound says how much it costs at least);
  /// `choice` is then the optimum without the cap where that fits, else the
  /// least-memory strategy, not a searched one.
  bool cut_off = false;
  /// Stopped at CapOptions::max_seconds or deadline: `choice` is the best
  /// strategy found that fits, `lower_bound` what was proven by then.
  bool timed_out = false;
};

/// Gap of `cost` over `lower_bound`, 0 within kGapTolerance.
[[nodiscard]] double relative_gap(double cost, double lower_bound);

/// The best strategy within `cap` bytes per device that the search finds, its bound and gap.
[[nodiscard]] CappedSolution solve_under_cap(MemoryPricedDp& dp, const Objective& objective,
                                             const MemoryTables& memory, uint64_t cap, const CapOptions& options = {});

}  // namespace pase
