#pragma once
// The exact dynamic program over an elimination plan (PaSE recurrence (4)).
//
// Processing vertex v builds a table over the configurations of its dependent
// set D(v): for every assignment of D(v), the cheapest configuration of v
// counting v's layer cost, its edges to vertices not yet processed, and the
// tables of earlier vertices that were waiting for v. The table then waits
// for the earliest-processed member of D(v). Back-substitution in reverse
// order reads the stored argmins. The optimum is exact for any order; the
// order only decides the table sizes.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "dp/objective.h"
#include "dp/ordering.h"

namespace pase {

/// What the DP has done so far: tables filled and their (entry, configuration)
/// steps, of the plan's totals.
struct DpProgress {
  size_t tables_done = 0, tables = 0;
  uint64_t work_done = 0, work = 0;
};

class BlockTableCache;

struct DpOptions {
  uint64_t max_table_bytes = uint64_t{8} << 30;  ///< refuse plans whose tables and working buffers may need more
  uint64_t max_work = uint64_t{2000} * 1000 * 1000 * 1000;  ///< refuse plans needing more (entry, configuration) steps
  int threads = 0;                               ///< 0: automatic (see kSerialWork)
  /// Called after each table is filled, from whichever thread filled it (one
  /// call at a time); empty: no calls.
  std::function<void(const DpProgress&)> progress;
  /// Folding (dp/fold.h): per vertex, another vertex whose table its own
  /// equals entry for entry, its dependent set being that vertex's shifted by
  /// one repeated block; or -1. Such a *follower* reuses the table and argmins
  /// instead of computing them. Empty: no followers. The caller guarantees the
  /// equality (fold.h checks it).
  std::vector<int> same_as;
  /// Folded block tables kept across solves (block_table_cache.h); null: none kept.
  std::shared_ptr<BlockTableCache> block_tables;
};

/// With threads = 0, a DP of fewer (entry, configuration) steps than this runs
/// on one thread: starting and feeding workers costs more than it saves there
/// (measured on the zoo: Inception3 at p = 32, 10^7 steps, is 15% faster on one
/// thread; the Transformer at p = 16, 5.6 * 10^7 steps, 20% faster on two).
inline constexpr uint64_t kSerialWork = uint64_t{20} * 1000 * 1000;

/// Sizes of the tables a plan needs, computed before anything is allocated.
/// Byte counts saturate at UINT64_MAX.
struct TablePlan {
  std::vector<uint64_t> entries;  ///< per vertex (saturates at UINT64_MAX)
  uint64_t total_entries = 0;
  uint64_t table_bytes = 0;       ///< cost tables + argmin tables, all alive at once (upper bound)
  /// The buffers a table is computed with (edge rows, class digits, compact
  /// costs and argmins) for as many vertices at once as threads, the largest
  /// first, plus each thread's fill buffers (upper bound).
  uint64_t working_bytes = 0;
  uint64_t total_bytes = 0;       ///< table_bytes + working_bytes: what max_table_bytes is checked against
  uint64_t total_work = 0;        ///< sum of entries x own configurations: the DP's inner steps (upper bound)
  int threads = 1;                ///< threads the DP runs on (working_bytes counts this many)
  int largest_vertex = -1;
};

struct DpStats {
  uint64_t table_entries = 0;
  /// The most bytes of tables and working buffers alive at once (at most the plan's total_bytes).
  uint64_t peak_table_bytes = 0;
  size_t max_dependent_set = 0;
  double seconds = 0.0;
};

struct DpResult {
  double cost = 0.0;
  std::vector<int32_t> choice;  ///< configuration index per vertex
  DpStats stats;
};

struct PartialArgmins;  // defined in dp.cc

/// What eliminating every vertex but the last few of a plan's order leaves
/// (eliminate_dp): a table over the kept vertices' configurations, and the
/// argmins that give the others for any choice of the kept ones.
struct PartialDp {
  std::vector<int> kept;      ///< the kept vertices, in plan order
  std::vector<double> table;  ///< the optimum over the others, per configuration of the kept (kept[0] slowest)
  DpStats stats;
  TablePlan sizes;
  uint64_t argmin_bytes = 0;  ///< what `argmins` holds
  std::shared_ptr<const PartialArgmins> argmins;
};

/// The DP's thread count: `requested` if positive, else (0: automatic) one
/// below kSerialWork steps of `work` and every core above.
[[nodiscard]] int dp_threads(int requested, uint64_t work);

/// Table sizes of a plan, and its memory bound on `threads` (as DpOptions::threads; 0: automatic).
/// With `same_as` (DpOptions::same_as), followers count no argmins and no
/// work but a copy of their table, and none where their consumer follows too.
[[nodiscard]] TablePlan measure_tables(const Objective& objective, const EliminationPlan& plan, int threads = 1,
                                       const std::vector<int>& same_as = {});

/// The limit of `options` that a plan's tables (`sizes`, as measure_tables
/// gives them) pass, as the LimitError that refuses it (naming the largest
/// table's vertex from `names`); nullopt within the limits.
[[nodiscard]] std::optional<LimitError> limit_error(const EliminationPlan& plan, const TablePlan& sizes,
                                                    const std::vector<std::string>& names, const DpOptions& options);

/// Throws limit_error's error, if any.
void check_limits(const EliminationPlan& plan, const TablePlan& sizes, const std::vector<std::string>& names,
                  const DpOptions& options);

/// Runs the DP over `sizes` (measure_tables of the same plan, threads and
/// followers), checked against the limits already.
[[nodiscard]] DpResult run_dp(const Objective& objective, const EliminationPlan& plan, const TablePlan& sizes,
                              const DpOptions& options);

/// Runs the DP; throws ResourceError (naming the vertex, from `names`) if the tables or the work exceed the limits.
[[nodiscard]] DpResult solve_dp(const Objective& objective, const EliminationPlan& plan,
                                const std::vector<std::string>& names, const DpOptions& options);

/// The DP over every vertex of `plan` but its last `kept` (never more than a
/// few: their table is dense); those vertices are eliminated last in the
/// plan, so every table that depends on them waits for them. Same limits and
/// errors as solve_dp; no folding.
[[nodiscard]] PartialDp eliminate_dp(const Objective& objective, const EliminationPlan& plan,
                                     const std::vector<std::string>& names, const DpOptions& options, size_t kept);

/// Back-substitution of eliminate_dp: sets `choice` of every eliminated
/// vertex, given `choice` of the kept ones.
void read_back(const PartialDp& partial, const Objective& objective, const EliminationPlan& plan,
               std::vector<int32_t>& choice);

}  // namespace pase
