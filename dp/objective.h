#pragma once
// What the DP minimises, with no knowledge of ops: a cost vector per vertex
// (one entry per configuration) and a cost matrix per graph edge. Edge
// matrices are stored over *classes* of configurations (configurations that
// split the tensor the same way), which keeps them small.
#include <cstdint>
#include <memory>
#include <vector>

#include "base/shared_array.h"

namespace pase {

struct PairCost {
  int u = 0, v = 0;                 ///< vertices; u produces, v consumes
  SharedArray<int32_t> u_class;     ///< class of each configuration of u (shared by the edges priced alike)
  SharedArray<int32_t> v_class;     ///< class of each configuration of v
  int32_t u_classes = 0, v_classes = 0;
  /// (*cost)[u_class * v_classes + v_class]. Shared by the edges priced alike
  /// (same ends' kinds, ports and tensor): the matrices are most of the
  /// objective's memory, 628 MB as one copy per edge for the Transformer at
  /// p = 1024 against about a tenth of that shared.
  std::shared_ptr<const std::vector<double>> cost;

  [[nodiscard]] double at(size_t u_config, size_t v_config) const {
    return (*cost)[static_cast<size_t>(u_class[u_config]) * static_cast<size_t>(v_classes) + static_cast<size_t>(v_class[v_config])];
  }
};

struct Objective {
  /// [vertex][configuration]; vertices priced alike share one array.
  std::vector<SharedArray<double>> vertex_cost;
  std::vector<PairCost> pairs;

  [[nodiscard]] size_t vertex_count() const { return vertex_cost.size(); }
  [[nodiscard]] size_t config_count(size_t v) const { return vertex_cost[v].size(); }
  /// config_count of every vertex, in vertex order (what the ordering heuristics weigh tables by).
  [[nodiscard]] std::vector<size_t> config_counts() const;
  /// Objective value of a full assignment (configuration index per vertex).
  [[nodiscard]] double evaluate(const std::vector<int32_t>& choice) const;
};

/// The sum of each vertex's least cost: a lower bound on every assignment's
/// objective, as no edge costs less than nothing. No DP: a search can rule
/// an objective out with it before solving it.
[[nodiscard]] double least_vertex_costs(const Objective& objective);

}  // namespace pase
