#include "solver/solve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace pase {

Solution plan_only(const CostTables& tables, OrderKind order, int threads, bool fold) {
  Solution solution;
  solution.plan = make_plan(undirected_neighbours(tables.objective), order, tables.objective.config_counts());
  if (fold) solution.folding = find_folding(tables.objective, solution.plan);
  solution.tables = measure_tables(tables.objective, solution.plan, threads,
                                   solution.folding ? solution.folding->same_as : std::vector<int>{});
  for (const auto& set : solution.plan.dependent)
    solution.stats.max_dependent_set = std::max(solution.stats.max_dependent_set, set.size());
  solution.stats.table_entries = solution.tables.total_entries;
  return solution;
}

Solution solve(const Graph& graph, const CostTables& tables, const SolveOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Solution solution = plan_only(tables, options.order, options.dp.threads, options.fold);
  std::vector<std::string> names;
  for (const Vertex& v : graph.vertices) names.push_back(v.name);
  DpOptions dp = options.dp;
  if (solution.folding) dp.same_as = solution.folding->same_as;
  DpResult result = solve_dp(tables.objective, solution.plan, names, dp);
  // The strategy read back from the argmin tables must price at the optimum
  // the DP found (up to the order of summation). Anything else is a solver
  // bug, reported as an internal error instead of printed as an answer.
  const double achieved = tables.objective.evaluate(result.choice);
  const double scale = std::max(std::abs(achieved), std::abs(result.cost));
  if (achieved != result.cost && !(std::abs(achieved - result.cost) <= 1e-9 * scale))
    throw std::logic_error("the strategy read back from the DP costs " + std::to_string(achieved) +
                           ", not the optimum " + std::to_string(result.cost) + " it found");
  solution.cost = result.cost;
  solution.choice = std::move(result.choice);
  solution.stats = result.stats;
  solution.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return solution;
}

}  // namespace pase
