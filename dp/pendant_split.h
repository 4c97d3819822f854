#pragma once
// What hangs off one vertex of an objective (internal to the dp library, for
// chain_fold): the vertices that reach the rest of the objective only through
// a root vertex. Eliminated on their own they leave a cost per configuration
// of the root, h(root), which replaces them in what is left. A pipeline
// stage's first block (its inputs arrive from another stage, so it is not in
// the run of repeated blocks) hangs off the run's first separator this way,
// the same in every stage on the same devices: its table is computed once
// (block_table_cache.h) instead of once per stage.
#include <optional>
#include <vector>

#include "dp/objective.h"
#include "dp/ordering.h"

namespace pase {

struct PendantSplit {
  int root = -1;               ///< the vertex of the objective they hang off
  std::vector<int> pendant;    ///< the objective's vertices eliminated into h(root), in vertex order
  std::vector<int> rest;       ///< per vertex of what is left: the objective's vertex
  int rest_root = -1;          ///< the root's vertex in what is left
  EliminationPlan pendant_plan;  ///< over pendant_objective: the root last
  EliminationPlan rest_plan;     ///< over rest_objective, of `order`
};

/// The vertices of `objective` that reach `apart` and every other vertex
/// outside them only through `root` (none: nullopt), with both plans.
[[nodiscard]] std::optional<PendantSplit> split_pendant(const Objective& objective, int root, int apart, OrderKind order);

/// The pendant vertices, then the root with cost 0, and the pairs among them.
[[nodiscard]] Objective pendant_objective(const Objective& objective, const PendantSplit& split);

/// What is left: every other vertex, the root's cost plus `root_extra` (h),
/// and the pairs among them.
[[nodiscard]] Objective rest_objective(const Objective& objective, const PendantSplit& split,
                                       const std::vector<double>& root_extra);

}  // namespace pase
