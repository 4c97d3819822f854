#pragma once
// One solve of an objective, as a pipeline of named steps, each walked once:
// plan_solve orders the vertices, finds what folds and sizes every table
// (a folded solve's parts together); solve_limit_error checks that against
// the limits; run_planned runs the DP (or the chained solve), reads the
// strategy back and checks it prices at the optimum found. solve() is the
// three in a row; bounded_solve.h's solve_or_bound answers a refusal instead.
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
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

/// How a solve will go, decided before any table is computed.
struct SolvePlan {
  EliminationPlan plan;               ///< the unfolded order (what reports show; what the DP runs unless chained)
  std::optional<Folding> folding;     ///< the DP's own folding, where no run chains
  std::optional<PlannedChain> chain;  ///< runs folded into transfer tables
  TablePlan tables;                   ///< what the solve needs, every part together
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
/// for `threads` (as DpOptions::threads). `names` name the vertices of the
/// parts a folded solve builds.
[[nodiscard]] SolvePlan plan_solve(const Objective& objective, const std::vector<std::string>& names, OrderKind order,
                                   int threads, bool fold);

/// The limit of `options` the planned solve passes, as the error that
/// refuses it; nullopt within the limits.
[[nodiscard]] std::optional<LimitError> solve_limit_error(const SolvePlan& planned, const std::vector<std::string>& names,
                                                          const DpOptions& options);

/// Runs a planned solve within the limits; std::logic_error (a solver bug)
/// if the strategy read back does not price at the optimum found.
[[nodiscard]] Solution run_planned(const Objective& objective, const std::vector<std::string>& names,
                                   const SolvePlan& planned, const DpOptions& options);

/// plan_solve as a Solution without running anything: the order, the table
/// sizes and what folds (no choice).
[[nodiscard]] Solution plan_only(const Objective& objective, OrderKind order, int threads = 1, bool fold = true);

/// plan_solve, solve_limit_error thrown as a LimitError (naming the vertex
/// from `names`), run_planned.
[[nodiscard]] Solution solve(const Objective& objective, const std::vector<std::string>& names,
                             const SolveOptions& options);

}  // namespace pase
