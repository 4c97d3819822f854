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
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dp/objective.h"
#include "dp/dp.h"
#include "dp/ordering.h"

namespace pase {

/// A run of blocks [first + j·period, first + (j+1)·period), j < blocks, that
/// are identical (vertex prices, edges, separators).
struct ChainFold {
  size_t period = 0;               ///< vertices per block
  size_t first = 0;                ///< the first block's first vertex
  size_t blocks = 0;               ///< blocks in the run, every one folded into T^blocks
  std::vector<int> separator;      ///< offsets in a block of the vertices that feed the next block
  uint64_t separator_configs = 0;  ///< C: configurations of the separator as a whole
};

/// Separators with more configurations than this are not folded this way
/// (the min-plus products cost C^3): the DP's own folding (fold.h) serves.
inline constexpr uint64_t kMaxSeparatorConfigs = 1024;

/// The run of repeated blocks that covers the most vertices, with a
/// separator of at most kMaxSeparatorConfigs configurations; nullopt if there
/// is none of at least two blocks.
[[nodiscard]] std::optional<ChainFold> find_chain(const Objective& objective);

/// A chain fold as `--stats` reports it, in the objective's own vertex ids.
struct ChainReport {
  ChainFold fold;
  std::vector<int> separator_vertices;  ///< the first block's separator (vertex ids)
  uint64_t block_entries = 0;           ///< table entries of the one block's DP
};

struct ChainSolution {
  DpResult result;
  TablePlan tables;                  ///< what every DP and the chain need, per vertex of the objective
  std::vector<ChainReport> folds;    ///< the runs folded, outermost first (later ones inside the reduced objective)
  uint64_t progress_tables = 0;      ///< steps the progress counts: tables filled, min-plus products, back-substitutions
};

/// Folds runs of repeated blocks (find_chain, again in what is left while it
/// finds one) and solves the rest by the DP over `order` with the DP's own
/// folding (fold.h); nullopt when there is no run. `run` false: only sizes
/// the tables (result left empty). Exact: the optimum is the unfolded DP's up
/// to the order of summation. The limits of `options` hold for the whole
/// (tables: every part's, T and T^k; work: the DPs', C^3 per min-plus product
/// and back-substitution's): past them it throws LimitError before solving.
/// `options.progress` sees one solve: tables_done of progress_tables, work
/// of tables.total_work.
[[nodiscard]] std::optional<ChainSolution> solve_chained(const Objective& objective,
                                                         const std::vector<std::string>& names,
                                                         const DpOptions& options, OrderKind order, bool run = true);

}  // namespace pase
