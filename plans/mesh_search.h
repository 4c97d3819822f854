#pragma once
// The search over layouts on a given mesh (docs/plans.md, "Searching the
// layouts"): each layer's choices are its configurations *with* the mesh axes
// each split runs over, so the DP prices every collective over the links its
// group crosses and every redistribution by the words the two layouts really
// move, over the link they cross. The plan is then what was priced: its
// realized cost is the optimum's.
#include <cstddef>
#include <memory>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "plans/build_plan.h"
#include "plans/mesh.h"
#include "plans/plan.h"
#include "plans/realized_words.h"

namespace pase {

/// Layouts one layer may have before the search refuses the mesh: every
/// assignment of its axes to the layer's dimensions, in every order, for
/// every configuration. A mesh of two or three axes gives tens to hundreds.
inline constexpr size_t kMaxLayoutsPerLayer = 4096;

struct MeshTables {
  /// One configuration per (configuration, assignment): `configs` repeats a
  /// configuration once per assignment of it, `per_node` says how its splits
  /// divide between nodes, vertex costs are layer_on_mesh and every edge
  /// matrix is over the layouts of its tensor, priced by edge_on_mesh.
  CostTables tables;
  /// Per vertex, each configuration's axes (shared by vertices alike).
  std::vector<std::shared_ptr<const std::vector<AxisAssignment>>> assignments;
};

/// Prices the configurations of `configs` (those the mesh realizes) on every
/// way of `space` the mesh runs them. Throws ResourceError naming the layer
/// when one has more than `max_layouts` layouts. Without `with_edges` the
/// tables have no edges (objective.pairs empty: for bounds that take every
/// edge at nothing).
[[nodiscard]] MeshTables price_on_mesh(const Graph& graph, const CostTables& configs, const Mesh& mesh,
                                       const CostModel& model, LayoutSpace space = LayoutSpace::Every,
                                       size_t max_layouts = kMaxLayoutsPerLayer, bool with_edges = true);

/// The plan of a strategy of a MeshTables' `tables` and `assignments`: every layer on the axes its
/// configuration says, laid out (lay_out_plan, over the links); proven
/// ("searched"): its realized cost is the strategy's.
[[nodiscard]] PlanResult plan_from_layouts(
    const Graph& graph, const CostTables& tables,
    const std::vector<std::shared_ptr<const std::vector<AxisAssignment>>>& assignments,
    const std::vector<int32_t>& choice, const Mesh& mesh, const CostModel& model);

}  // namespace pase
