#include "solver/solve.h"

#include <chrono>

namespace pase {

Solution solve(const Graph& graph, const CostTables& tables, const SolveOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Solution solution;
  std::vector<size_t> config_counts;
  for (size_t v = 0; v < tables.objective.vertex_count(); ++v) config_counts.push_back(tables.objective.config_count(v));
  solution.plan = make_plan(undirected_neighbours(tables.objective), options.order, config_counts);
  std::vector<std::string> names;
  for (const Vertex& v : graph.vertices) names.push_back(v.name);
  DpResult result = solve_dp(tables.objective, solution.plan, names, options.dp);
  solution.tables = measure_tables(tables.objective, solution.plan);
  solution.cost = result.cost;
  solution.choice = std::move(result.choice);
  solution.stats = result.stats;
  solution.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return solution;
}

}  // namespace pase
