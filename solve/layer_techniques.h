#pragma once
// Per-layer techniques chosen by the solver (--recompute auto, --zero auto;
// docs/training.md): each layer's activation recomputation and ZeRO stage
// change only its own cost and bytes, so every combination of them is a
// variant of the layer, priced on the configurations and edges of the graph
// (reprice_vertices), and the capped search picks a configuration and a
// variant per layer over the options of memorycap/vertex_options.h, its DP
// tables the configurations' alone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "graphs/graph.h"
#include "dp/bounded_solve.h"
#include "dp/solve.h"
#include "dp/uniform_blocks.h"
#include "memorycap/memory_cap.h"
#include "memorycap/memory_frontier.h"
#include "memorycap/separable_bound.h"

namespace pase {

/// One layer's techniques.
struct LayerTechnique {
  bool recompute = false;
  int zero = 0;
  bool operator==(const LayerTechnique& other) const { return recompute == other.recompute && zero == other.zero; }
};

/// The variants a setup leaves open: both recomputation choices under
/// --recompute auto (else the setup's), every stage under --zero auto (else
/// the setup's); the PaSE step's (none, 0) first where it is among them.
[[nodiscard]] std::vector<LayerTechnique> technique_variants(const TrainingSetup& setup);

/// Sets each vertex's techniques (`chosen`: one per vertex).
void set_layer_techniques(Graph& graph, const std::vector<LayerTechnique>& chosen);

/// What the search over per-layer techniques found.
struct TechniqueChoice {
  Graph graph;          ///< the graph with each layer's chosen techniques
  CostTables tables;    ///< `graph` priced (the base tables' configurations and edges)
  MemoryTables memory;  ///< its bytes
  /// The strategy (configuration per vertex), its cost, and the DP's order, sizes and statistics.
  Solution solution;
  std::optional<CappedSolution> capped;  ///< under a cap (its choice: configurations)
  std::optional<BoundedSolution> bounded;  ///< past the exact DP's limits: the bounded solve's answer and bound
  std::optional<ExactRefusal> refusal;     ///< set exactly when `bounded` is
};

/// The best strategy over configurations and per-layer techniques of
/// `graph` (priced as `tables`, a layer's recomputation only where it is no
/// block boundary), within `cap` if given: the capped search's bound and gap
/// hold over every combination. Without a cap, the exact optimum. Past the
/// exact DP's limits (unless `exact`: then the DP's LimitError), `bounded`
/// and `refusal` are set: without a cap, a bounded solve over each
/// configuration's cheapest technique, which no strategy without a cap can
/// beat; under one, the capped search over a relaxation, its answer on the
/// true options (memorycap/relaxed_cap.h).
[[nodiscard]] TechniqueChoice choose_layer_techniques(const Graph& graph, const CostModel& model, const CostTables& tables,
                                                      const TrainingSetup& setup, std::optional<uint64_t> cap,
                                                      const CapOptions& cap_options, const SolveOptions& solve,
                                                      bool exact = false);

/// choose_layer_techniques over the strategies that give every block of
/// `uniform`'s runs (found on `tables`' configurations) the first block's
/// configuration and techniques, layer by layer: the merged vertices'
/// options are their groups' summed (costs and bytes), so the search and its
/// bound are exact over those strategies. A layer whose options differ from
/// those of the layer it follows is refused (ResourceError).
[[nodiscard]] TechniqueChoice choose_uniform_layer_techniques(const Graph& graph, const CostModel& model,
                                                              const CostTables& tables, const TrainingSetup& setup,
                                                              std::optional<uint64_t> cap, const CapOptions& cap_options,
                                                              const SolveOptions& solve, const UniformBlocks& uniform);

/// A lower bound on every strategy's cost over configurations and per-layer
/// techniques: each layer at its cheapest configuration and technique, the
/// edges at nothing (they never cost less); within `cap`, over the options'
/// bytes (memorycap/separable_bound.h). No DP runs.
[[nodiscard]] double least_layer_costs_with_techniques(const Graph& graph, const CostModel& model,
                                                       const CostTables& tables, const TrainingSetup& setup,
                                                       std::optional<uint64_t> cap = std::nullopt);

/// Each vertex's least cost over its configurations and the techniques it
/// may take (the options least_layer_costs_with_techniques sums): no
/// strategy over configurations and per-layer techniques prices it lower.
[[nodiscard]] std::vector<double> least_vertex_costs_with_techniques(const Graph& graph, const CostModel& model,
                                                                     const CostTables& tables,
                                                                     const TrainingSetup& setup);

/// A lower bound on the capped optimum over configurations and per-layer
/// techniques with one DP: at the separable bound's price per byte
/// (memorycap/separable_bound.h), the DP optimum of cost + price x bytes
/// (each configuration at its best option) less price x cap, and never below
/// the separable bound (with `round_price`, at that price rounded down to a
/// power of two: memorycap/separable_bound.h). Infinity where nothing fits.
[[nodiscard]] PricedBound layer_techniques_lagrangian_bound(const Graph& graph, const CostModel& model,
                                                            const CostTables& tables, const TrainingSetup& setup,
                                                            uint64_t cap, const SolveOptions& solve, bool round_price);

/// The cost-memory frontier over configurations and per-layer techniques
/// (each point's choice: configurations).
struct TechniqueFrontier {
  std::vector<FrontierPoint> points;
  int dp_runs = 0;
};
/// With `uniform` (runs found on `tables`' configurations), over the
/// strategies that give every block of a run one configuration and one set
/// of techniques per layer.
[[nodiscard]] TechniqueFrontier layer_technique_frontier(const Graph& graph, const CostModel& model,
                                                         const CostTables& tables, const TrainingSetup& setup,
                                                         const SolveOptions& solve,
                                                         const UniformBlocks* uniform = nullptr);

}  // namespace pase
