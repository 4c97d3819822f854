#pragma once
// What a solve gives back (solve_request.h): the priced graph, the strategy
// and its cost, how it was found (exact, bounded, capped), its memory, its
// placement or why none, and the time of each step.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "dp/bounded_solve.h"
#include "dp/solve.h"
#include "dp/uniform_blocks.h"
#include "memorycap/memory_cap.h"
#include "memorycap/memory_frontier.h"
#include "plans/build_plan.h"

namespace pase {

/// Seconds each step of a solve took.
struct StepSeconds {
  double price = 0, solve = 0, place = 0;
};

/// What `--uniform-blocks` restricted, and what the restriction costs.
struct UniformOutcome {
  std::vector<UniformRun> runs;  ///< none: the graph has no run of identical blocks
  double free_cost = 0;          ///< the optimum without the restriction (under a cap: the capped search's)
  bool free_exact = true;        ///< false: free_cost is a bounded solve's, or a capped search's with a gap
};

struct SolveOutcome {
  CostTables tables;   ///< the graph priced (on the mesh's configurations, with one)
  /// Per-layer techniques left to the solver: the graph with each layer's
  /// chosen ones (Vertex::recompute, Vertex::zero), which `tables` price.
  std::optional<Graph> graph;
  MemoryTables memory; ///< bytes of every configuration
  /// The strategy (`choice`) and its cost; for the optimum also the order,
  /// table sizes and DP statistics (plan_only: those alone).
  Solution solution;
  std::optional<BoundedSolution> bounded;  ///< past the DP's limits: the bounded solve that answered
  std::optional<ExactRefusal> refusal;     ///< why the exact DP could not run (with `bounded`)
  std::optional<CappedSolution> capped;    ///< under a cap: the capped search (not feasible: nothing fits)
  std::optional<UniformOutcome> uniform;   ///< with uniform_blocks: the runs and the free optimum
  PlanMemory bytes;                        ///< the strategy's bytes per device
  std::string note;                        ///< a baseline's note (how it was built), else empty
  std::vector<FrontierPoint> frontier;     ///< Frontier: every point, least memory first
  int frontier_runs = 0;                   ///< Frontier: DP runs it took
  std::optional<PlanResult> placed;        ///< the strategy on the mesh
  /// search_layouts: per vertex, each configuration's mesh axes (`tables`
  /// then holds one configuration per layout).
  std::vector<std::shared_ptr<const std::vector<AxisAssignment>>> layouts;
  std::string no_plan_reason;              ///< why the default mesh cannot run it (then no `placed`)
  StepSeconds seconds;

  /// A strategy was found (not: a cap nothing fits, or plan_only).
  [[nodiscard]] bool solved() const { return !solution.choice.empty() && (!capped || capped->feasible); }
};

/// "no strategy fits in CAP bytes (X GiB) per device: the least any strategy
/// needs is M bytes (Y GiB)": why a capped search found nothing.
[[nodiscard]] std::string no_fit_words(const CappedSolution& capped);

/// "the strategy needs X GiB per device, more than the Y GiB a device of the
/// machine has for training (...)" when the cost model's machine profile
/// gives the memory of a device and `bytes` exceed it less `reserve` (none:
/// default_memory_reserve); empty otherwise. Without a cap nothing else would
/// say that the answer cannot run there.
[[nodiscard]] std::string over_machine_memory_words(const CostModel& model, uint64_t bytes,
                                                    std::optional<uint64_t> reserve = std::nullopt);

}  // namespace pase
