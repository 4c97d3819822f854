#pragma once
// One call from a priced graph to its optimal strategy.
#include <optional>
#include <vector>

#include "dp/chain_fold.h"
#include "dp/dp.h"
#include "dp/fold.h"
#include "dp/ordering.h"

namespace pase {

struct SolveOptions {
  /// GenerateSeq's rule with ties broken by table size: never a larger table
  /// than plain GenerateSeq on the zoo (bench/run_bench.py --orders), often smaller.
  OrderKind order = OrderKind::MinDegree;
  DpOptions dp;
  /// Fold runs of repeated blocks into one block's transfer table
  /// (dp/chain_fold.h), else reuse their tables (dp/fold.h); same optimum.
  bool fold = true;
};

struct Solution {
  double cost = 0.0;
  std::vector<int32_t> choice;  ///< configuration index per vertex
  EliminationPlan plan;
  TablePlan tables;
  DpStats stats;
  std::optional<Folding> folding;  ///< what the DP's own folding reused, if anything
  /// Runs folded into transfer tables, outermost first (then `plan` is the
  /// unfolded order, for reports, and `tables` what the folded solve needs).
  std::vector<ChainReport> chains;
};

/// Orders the vertices, finds what folds (with `fold`) and sizes the tables
/// without running the DP (the memory bound for `threads`, as DpOptions::threads).
[[nodiscard]] Solution plan_only(const Objective& objective, OrderKind order, int threads = 1, bool fold = true);

/// Orders the vertices, checks the table sizes and runs the DP; `names`
/// name the vertices in refusals (tables too large).
[[nodiscard]] Solution solve(const Objective& objective, const std::vector<std::string>& names,
                             const SolveOptions& options);

}  // namespace pase
