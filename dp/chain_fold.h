#pragma once
// Transfer-table folding of repeated blocks (docs/architecture.md, "Folding").
// A deep model repeats one block between small vertex separators (a
// Transformer layer between residual-stream adds): block j's vertices see only
// each other and the separator S(j-1) that the block before ends with. The
// cheapest way through block j for given configurations of S(j-1) and S(j) is
// then the same table T[s_in][s_out] for every block, computed once by the DP
// over one block with both separators kept to the end (eliminate_dp); k blocks
// in a row cost M = T^k in min-plus products, an edge between the separators
// at the two ends of the run in a much smaller objective. Back-substitution
// chains the run (f_j(s) = min over s' of f_(j-1)(s') + T[s'][s]) to find each
// separator's configuration, then reads every block's inner strategy from the
// one block's argmins. Tables: one block's, T, M and O(C) per block.
//
// A chained solve is planned once (plan_chain: the runs, every DP's order,
// the sizes of all parts together), checked against the limits
// (chain_limit_error), then run (run_chain) without planning anything again.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "dp/chain_find.h"
#include "dp/dp.h"
#include "dp/objective.h"
#include "dp/ordering.h"

namespace pase {

/// A chain fold as `--stats` reports it, in the objective's own vertex ids.
struct ChainReport {
  ChainFold fold;
  std::vector<int> separator_vertices;  ///< the first block's separator (vertex ids)
  uint64_t block_entries = 0;           ///< table entries of the one block's DP
};

struct ChainParts;  // chain_fold.cc: each run's fold and block order, the rest's order and folding

/// A chained solve decided before any table is computed.
struct PlannedChain {
  std::shared_ptr<const ChainParts> parts;
  TablePlan tables;                ///< what every DP and the chain need, per vertex of the objective
  std::vector<ChainReport> folds;  ///< the runs folded, outermost first (later ones inside the reduced objective)
  uint64_t progress_tables = 0;    ///< steps the progress counts: tables filled, min-plus products, back-substitutions
};

/// Plans the folding of runs of repeated blocks (find_chain, again in what is
/// left while it finds one; the rest by the DP over `order` with the DP's own
/// folding, fold.h), sizing every part for `threads` (as DpOptions::threads);
/// nullopt when there is no run.
[[nodiscard]] std::optional<PlannedChain> plan_chain(const Objective& objective, const std::vector<std::string>& names,
                                                     OrderKind order, int threads);

/// The limit of `options` the planned chain passes (tables: every part's, T
/// and T^k; work: the DPs', C^3 per min-plus product and back-substitution's),
/// as the error that refuses it; nullopt within the limits.
[[nodiscard]] std::optional<LimitError> chain_limit_error(const PlannedChain& planned,
                                                          const std::vector<std::string>& names,
                                                          const DpOptions& options);

/// Runs a planned chain (checked against the limits already). Exact: the
/// optimum is the unfolded DP's up to the order of summation.
/// `options.progress` sees one solve: tables_done of progress_tables, work
/// of tables.total_work.
[[nodiscard]] DpResult run_chain(const PlannedChain& planned, const Objective& objective,
                                 const std::vector<std::string>& names, const DpOptions& options);

struct ChainSolution {
  DpResult result;
  TablePlan tables;                ///< as PlannedChain::tables
  std::vector<ChainReport> folds;  ///< as PlannedChain::folds
  uint64_t progress_tables = 0;
};

/// plan_chain, then (with `run`) chain_limit_error thrown as a LimitError
/// before anything is computed, and run_chain; nullopt when there is no run.
/// `run` false: only sizes the tables (result left empty).
[[nodiscard]] std::optional<ChainSolution> solve_chained(const Objective& objective,
                                                         const std::vector<std::string>& names,
                                                         const DpOptions& options, OrderKind order, bool run = true);

}  // namespace pase
