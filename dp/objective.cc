#include "dp/objective.h"

#include <algorithm>
#include <limits>

namespace pase {

std::vector<size_t> Objective::config_counts() const {
  std::vector<size_t> counts(vertex_count());
  for (size_t v = 0; v < counts.size(); ++v) counts[v] = config_count(v);
  return counts;
}

double Objective::evaluate(const std::vector<int32_t>& choice) const {
  double total = 0.0;
  for (size_t v = 0; v < vertex_cost.size(); ++v) total += vertex_cost[v][choice[v]];
  for (const PairCost& pair : pairs) total += pair.at(choice[pair.u], choice[pair.v]);
  return total;
}

double least_vertex_costs(const Objective& objective) {
  double total = 0.0;
  for (const SharedArray<double>& costs : objective.vertex_cost) {
    double least = std::numeric_limits<double>::infinity();
    for (size_t s = 0; s < costs.size(); ++s) least = std::min(least, costs[s]);
    total += least;
  }
  return total;
}

}  // namespace pase
