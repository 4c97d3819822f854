#pragma once
// Placing a solved strategy on a device mesh (docs/plans.md): which mesh axes
// each layer's splits run over, chosen to move as little as the layouts
// allow, and the layout of every tensor that follows from it.
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "plans/plan.h"
#include "plans/realized_words.h"
#include "plans/tied_weights.h"

namespace pase {

struct PlanOptions {
  /// Most axis assignments considered per layer (the first ones, axes in
  /// mesh order first). Placement starts with one per layer and takes six
  /// times as many each round, up to this.
  size_t max_assignments = 720;
  uint64_t max_table_bytes = uint64_t{1} << 30;  ///< for the assignment DP; no further round past it
  uint64_t max_work = uint64_t{2000} * 1000 * 1000 * 1000;  ///< DP steps; no further round past it
  int threads = 1;
  /// Stop a round early when every edge reaches its least cost (the answer is
  /// then proven optimal); false grows the candidates to every assignment
  /// (within the limits), as the tests' oracle does.
  bool stop_at_bound = true;
};

/// Why a placement is optimal over every assignment of every layer, if it is.
enum class PlanProof {
  None,            ///< best among the candidates seen only
  AllAssignments,  ///< every layer's candidates were all of its assignments
  LowerBound,      ///< every edge moves the least any pair of assignments could
  Searched,        ///< the search chose the axes with the configurations (mesh_search.h)
};

/// As the strategy file writes it: "all_assignments", "lower_bound", "searched" or "none".
[[nodiscard]] std::string proof_name(PlanProof proof);

struct PlanResult {
  Plan plan;
  bool exact = true;              ///< proof != None
  PlanProof proof = PlanProof::None;
  size_t largest_candidate_set = 0;
  double layer_cost = 0;  ///< the layers' costs, as the tables price the chosen configurations
  double model_edge_cost = 0, realized_edge_cost = 0;
  /// No placement's edges cost less: realized_edge_cost when proven, else the
  /// sum over edges of the least cost any pair of assignments gives
  /// (assignment_bound.h; 0 for an edge whose layers have too many).
  double edge_lower_bound = 0;
  /// Tied weights read in another layout than their first reader holds them
  /// in (tied_weights.h), and what that costs a step: priced by the model as
  /// an edge of their realized words (the weight in, its gradient back, once
  /// per micro-batch). Apart from realized_total_cost: the search and the
  /// placement do not weigh it.
  std::vector<WeightReshard> weight_reshards;
  double weight_reshard_cost = 0;
};

/// The first vertex whose chosen configuration the mesh cannot realize, with
/// why ("layer 'fc6' splits (1,3,4) on mesh [2,2,2]"), or "" when all can.
[[nodiscard]] std::string unrealizable_reason(const Graph& graph, const CostTables& tables,
                                              const std::vector<int32_t>& choice, const Mesh& mesh);

/// Lays out every tensor of a strategy whose layers run on the `chosen` axes,
/// and the realized redistribution: into `result`'s plan (its mesh, layers
/// and realized_total_cost: the chosen configurations' costs in `tables`
/// plus each edge's realized words priced by `model`, over the links they
/// cross when `on_nodes`, else by the group's size as the DP priced them) and
/// its model and realized edge costs.
void lay_out_plan(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice, const Mesh& mesh,
                  const CostModel& model, const std::vector<AxisAssignment>& chosen, bool on_nodes, PlanResult& result);

/// Assigns mesh axes with a second DP over the solver's kind of order, whose
/// states are each layer's axis assignments and whose edge costs are the
/// realized redistributions priced by `model`; then lays out every tensor.
/// The strategy must be realizable (unrealizable_reason empty).
[[nodiscard]] PlanResult build_plan(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                                    const Mesh& mesh, const CostModel& model, const PlanOptions& options);

}  // namespace pase
