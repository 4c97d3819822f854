#pragma once
// A lower bound on what any axis assignment moves (docs/plans.md): for each
// edge, the least realized redistribution over every pair of assignments of
// its two layers. When the assignment DP's answer reaches that bound on every
// edge it is optimal, even if the DP saw only some of each layer's
// assignments; this is what lets placement stop at a few candidates.
//
// Computing the least pair is cheap because of a symmetry: relabelling mesh
// axes of equal size, in both layouts at once, only renumbers devices, so it
// changes neither the words any device lacks nor the size of any group. The
// least over all pairs is therefore the least over pairs whose producer side
// is in a canonical form: one layout per symmetry class instead of hundreds.
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "costmodel/cost_model.h"
#include "graphs/vertex_model.h"
#include "plans/plan.h"

namespace pase {

/// `spec` with its axes relabelled by first appearance (dimension by
/// dimension, major first) among the mesh axes of the same size: every layout
/// that a relabelling of equal-size axes turns into `spec` has the same
/// canonical form.
[[nodiscard]] AxisSpec canonical_spec(const AxisSpec& spec, const Mesh& mesh);

/// Least realized redistribution cost per edge, memoised over edges that
/// carry the same tensor between the same kinds of layouts.
class AssignmentBound {
 public:
  /// Layers with more assignments than `max_assignments` get no bound (the
  /// enumeration would cost more than the bound saves).
  AssignmentBound(const Mesh& mesh, const CostModel& model, size_t max_assignments);

  /// The least cost, over every assignment of the producer's configuration
  /// and every assignment of the consumer's, of moving `tensor` from the
  /// producer's output layout (`held_map`) to the consumer's input layout
  /// (`needed_map`); nullopt when a layer has too many assignments.
  [[nodiscard]] std::optional<double> least_edge_cost(const Shape& tensor, const SplitMap& held_map,
                                                      const std::vector<int32_t>& held_config,
                                                      const SplitMap& needed_map,
                                                      const std::vector<int32_t>& needed_config);

 private:
  using Assignments = std::vector<std::vector<std::vector<int>>>;
  const Assignments* assignments(const std::vector<int32_t>& config);
  // The distinct layouts a tensor following `map` gets over every assignment
  // of `config` (canonical: one per relabelling class); null past the limit.
  const std::vector<AxisSpec>* layouts(const SplitMap& map, const std::vector<int32_t>& config, bool canonical);

  Mesh mesh_;  // a copy: callers may pass a temporary
  const CostModel& model_;
  size_t max_assignments_;
  std::vector<std::vector<int64_t>> coordinates_;
  std::map<std::vector<int32_t>, std::optional<Assignments>> assignments_;
  std::map<std::tuple<SplitMap, std::vector<int32_t>, bool>, std::optional<std::vector<AxisSpec>>> layouts_;
  std::map<std::tuple<Shape, const std::vector<AxisSpec>*, const std::vector<AxisSpec>*>, double> least_;
};

}  // namespace pase
