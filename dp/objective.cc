#include "dp/objective.h"

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

}  // namespace pase
