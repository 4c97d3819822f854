#pragma once
// What a command asks of a solve (solve_request.h): where the strategy comes
// from, the memory model and cap, the DP's options, the mesh.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "dp/solve.h"
#include "memorycap/memory_cap.h"
#include "plans/plan.h"
#include "plans/realized_words.h"
#include "solve/policy.h"
#include "strategy/mcmc.h"
#include "strategy/strategy_reader.h"

namespace pase {

/// Where the strategy of a request comes from.
enum class StrategySource {
  Optimum,   ///< the DP's optimum: bounded past its limits (unless `exact`), the capped search under a cap
  Given,     ///< a strategy file's configurations (`given`)
  Baseline,  ///< a built-in strategy (`baseline`: data-parallel, owt, megatron, mcmc)
  Frontier,  ///< the cost-memory frontier: every trade-off, no one strategy
};

struct SolveRequest {
  StrategySource source = StrategySource::Optimum;
  const StrategyDocument* given = nullptr;  ///< Given: the file (outlives the call)
  std::string given_path;                 ///< Given: the file's path, for messages
  std::string baseline;                   ///< Baseline: its name
  McmcOptions mcmc;                       ///< Baseline mcmc: its search
  int64_t tensor_parallel = 0;            ///< Baseline megatron: its tensor-parallel ways (0: the best)
  /// Baseline megatron: with Megatron-LM's sequence parallelism
  /// (graphs/sequence_parallel.h); the outcome's graph carries each layer's role.
  bool sequence_parallel = false;
  TrainingSetup memory;                   ///< what the memory model counts (dtype, optimizer)
  std::optional<uint64_t> cap;            ///< Optimum: bytes per device the strategy must fit; none: no cap
  CapOptions cap_search;                  ///< how hard the capped search closes its gap
  SolveOptions solve = default_solve_options();  ///< order, DP limits, threads, folding, progress
  /// Called as each phase of solve_request begins ("pricing", "searching",
  /// "placing the plan"), for a front end's progress; none: not told.
  std::function<void(const char* phase)> on_phase;
  bool exact = false;                     ///< Optimum past the DP's limits: refuse (LimitError), not a bounded solve
  std::optional<Mesh> mesh;               ///< only configurations it realizes, and the strategy placed on it
  /// With `mesh`: the DP chooses each layer's axes with its configuration
  /// (plans/mesh_search.h), every collective and redistribution priced over
  /// the links it crosses, and the plan is the strategy as priced (on a mesh
  /// of many axes, over its grouped layouts: plans/mesh.h, layout_space).
  bool search_layouts = false;
  bool place = true;                      ///< without `mesh`: place on the default mesh when it realizes the strategy
  int64_t devices_per_node = 0;           ///< of the default mesh; 0: the cost model's
  uint64_t placement_work = kDefaultPlacementWork;  ///< on the default mesh (on `mesh`: no limit)
  bool plan_only = false;                 ///< Optimum: order and size the tables, solve nothing
  /// Optimum and Frontier: only configurations that leave every tensor rows
  /// of at least this many elements per device (costmodel/kernel_splits.h);
  /// 0: the paper's whole space. A given or built-in strategy is priced as it is.
  int64_t min_row = 0;
  /// Optimum: every run of identical blocks takes one configuration per
  /// block position (dp/uniform_blocks.h; under a cap, memorycap/uniform_memory.h),
  /// and the free optimum is solved beside it.
  bool uniform_blocks = false;
  /// The graph already priced by the model over the configurations searched
  /// (no mesh): pricing is skipped. A pipeline's stages slice one pricing
  /// of the whole graph (costmodel/cost_tables.h, slice_cost_tables), so
  /// equal blocks share their arrays and the DP's folded block tables.
  std::shared_ptr<const CostTables> priced;
  /// With `priced` on a mesh's layouts (plans/mesh_search.h): per vertex,
  /// each configuration's axes (SolveOutcome::layouts); empty: no layouts.
  std::vector<std::shared_ptr<const std::vector<AxisAssignment>>> priced_layouts;
};

/// The request of a command that prices a strategy rather than placing one
/// (evaluate, explain): `given` when there is one, else the optimum, with
/// `memory`'s dtype and optimizer; no placement.
[[nodiscard]] SolveRequest pricing_request(const TrainingSetup& memory, const StrategyDocument* given);

}  // namespace pase
