#pragma once
// The exact DP with per-device memory priced in: every configuration of every
// vertex costs its cost plus lambda times its bytes (docs/memory.md). Memory is
// a sum of per-vertex terms, so this is the same DP over the same plan with
// other vertex costs; its optimum DP(lambda) gives the Lagrangian lower bound
// DP(lambda) - lambda * cap on the best cost under a cap, for every lambda >= 0.
// The elimination plan and a copy of the objective are made once and serve
// every lambda.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "dp/chain_fold.h"
#include "dp/solve.h"
#include "memorycap/vertex_options.h"

namespace pase {

/// Bytes a vertex's configuration may take, [lo, hi): a restriction the
/// capped search branches on (a vertex outside it is shut out).
struct ByteRange {
  uint64_t lo = 0, hi = ~uint64_t{0};
  [[nodiscard]] bool contains(uint64_t bytes) const { return lo <= bytes && bytes < hi; }
};

/// Per vertex: the configurations a search node allows (empty: all).
using ByteRanges = std::vector<ByteRange>;

/// A strategy the priced DP returned.
struct PricedPoint {
  double lambda = 0.0;  ///< price per byte it was optimal for
  double value = 0.0;   ///< DP(lambda): min over strategies of cost + lambda * bytes
  double cost = 0.0;    ///< its cost (objective, without the price)
  uint64_t memory = 0;  ///< its bytes per device
  std::vector<int32_t> choice;
};

class MemoryPricedDp {
 public:
  /// `names` name the vertices in refusals (tables too large).
  MemoryPricedDp(const Objective& objective, std::vector<std::string> names, const MemoryTables& memory,
                 const SolveOptions& options);
  /// The same for a priced graph.
  MemoryPricedDp(const Graph& graph, const CostTables& tables, const MemoryTables& memory, const SolveOptions& options);
  /// Over the options of `space` (memorycap/vertex_options.h): strategies
  /// pick an option per vertex, and each DP run is over `configurations`
  /// (the objective the space expands) with each configuration priced as
  /// its best option, so the tables are the configurations'.
  MemoryPricedDp(const OptionSpace& space, const Objective& configurations, std::vector<std::string> names,
                 const SolveOptions& options);

  /// The optimum of cost + lambda * bytes (lambda >= 0; 0: the plain optimum) over the strategies `ranges` allows.
  [[nodiscard]] PricedPoint solve(double lambda, const ByteRanges& ranges = {});
  /// The least-memory strategy that `ranges` allows: each vertex at a
  /// configuration of its least bytes, the cheapest such (lambda reported as infinity).
  [[nodiscard]] PricedPoint least_memory(const ByteRanges& ranges = {});
  /// The least bytes any strategy needs (sum of each vertex's least bytes).
  [[nodiscard]] uint64_t least_bytes() const { return least_bytes_; }
  /// The least bytes of the strategies `ranges` allows (UINT64_MAX if it allows none).
  [[nodiscard]] uint64_t least_bytes(const ByteRanges& ranges) const;

  [[nodiscard]] double cost_of(const std::vector<int32_t>& choice) const { return objective_.evaluate(choice); }
  [[nodiscard]] uint64_t memory_of(const std::vector<int32_t>& choice) const { return plan_memory(memory_, choice).total(); }

  [[nodiscard]] const Solution& plan() const { return plan_; }  ///< order and table sizes (no choice)
  [[nodiscard]] int runs() const { return runs_; }               ///< DP runs so far
  /// DP steps of all runs so far, (entry, configuration) pairs as measure_tables counts them (a folded block's copy: its entries).
  [[nodiscard]] uint64_t work() const { return work_; }
  /// The steps of one run over every configuration (folded as the plain objective folds).
  [[nodiscard]] uint64_t run_work() const { return run_work_; }
  [[nodiscard]] const DpStats& last_stats() const { return last_stats_; }

 private:
  void init(const SolveOptions& options);
  /// What one option of a vertex costs in a run: `price(v, range or null, option)`.
  using OptionPrice = std::function<double(size_t, const ByteRange*, size_t)>;

  /// The DP over priced_ (set by reprice with the same `price`), its strategy read back as options.
  PricedPoint run(double lambda, const ByteRanges& ranges, const OptionPrice& price);
  /// Sets priced_'s vertex costs: each configuration at its cheapest option
  /// under `price`, once per kind of vertex (same costs, bytes and range),
  /// shared by its kind.
  void reprice(const ByteRanges& ranges, const OptionPrice& price);
  /// Options of v's configuration s: [begin, end).
  [[nodiscard]] std::pair<size_t, size_t> options_of(size_t v, size_t s) const;
  /// v's least bytes among the configurations `ranges` allows (UINT64_MAX: none).
  [[nodiscard]] uint64_t least_of(size_t v, const ByteRanges& ranges) const;

  /// How a run folds (fold.h's reuse, chain_fold.h's chain): found from
  /// which vertices price alike, so runs that price the same vertices alike
  /// (the λ steps of one bound, mostly) plan it once.
  struct RunFolding {
    std::vector<int> same_as;
    TablePlan sizes;
    std::optional<PlannedChain> chain;
  };
  [[nodiscard]] const RunFolding& folding_of_priced();

  const Objective& objective_;  // over options (configurations, without a space)
  const MemoryTables& memory_;
  const OptionSpace* space_ = nullptr;  // null: every option is a configuration
  DpOptions dp_;
  bool fold_ = true;  // chain runs of repeated blocks, else reuse their tables (SolveOptions::fold)
  OrderKind order_ = OrderKind::MinDegree;
  std::vector<std::string> names_;
  Solution plan_;
  Objective priced_;  // the objective with priced vertex costs (edges shared with objective_)
  std::vector<uint64_t> least_;  // per vertex: its least bytes
  uint64_t least_bytes_ = 0;
  int runs_ = 0;
  uint64_t work_ = 0;
  uint64_t run_work_ = 0;
  DpStats last_stats_;
  std::map<std::vector<int>, RunFolding> foldings_;  // by the priced vertices' value ids (few: cleared past a bound)
};

}  // namespace pase
