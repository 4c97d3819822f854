#include "dp/solve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace pase {

namespace {

std::vector<std::string> vertex_names(const Objective& objective, const std::vector<std::string>* names) {
  if (names) return *names;
  std::vector<std::string> out;
  for (size_t v = 0; v < objective.vertex_count(); ++v) out.push_back("vertex " + std::to_string(v));
  return out;
}

}  // namespace

Solution plan_only(const Objective& objective, OrderKind order, int threads, bool fold) {
  Solution solution;
  solution.plan = make_plan(undirected_neighbours(objective), order, objective.config_counts());
  std::optional<ChainSolution> chained;
  if (fold) {
    DpOptions dp;
    dp.threads = threads;
    chained = solve_chained(objective, vertex_names(objective, nullptr), dp, order, /*run=*/false);
  }
  if (chained) {
    solution.tables = std::move(chained->tables);
    solution.chains = std::move(chained->folds);
  } else {
    if (fold) solution.folding = find_folding(objective, solution.plan);
    solution.tables = measure_tables(objective, solution.plan, threads,
                                     solution.folding ? solution.folding->same_as : std::vector<int>{});
  }
  for (const auto& set : solution.plan.dependent)
    solution.stats.max_dependent_set = std::max(solution.stats.max_dependent_set, set.size());
  solution.stats.table_entries = solution.tables.total_entries;
  return solution;
}

Solution solve(const Objective& objective, const std::vector<std::string>& names, const SolveOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Solution solution;
  DpResult result;
  std::optional<ChainSolution> chained;
  if (options.fold) chained = solve_chained(objective, names, options.dp, options.order);
  if (chained) {
    // The unfolded order, for reports; what was solved is in `chains`.
    solution.plan = make_plan(undirected_neighbours(objective), options.order, objective.config_counts());
    solution.tables = std::move(chained->tables);
    solution.chains = std::move(chained->folds);
    result = std::move(chained->result);
  } else {
    solution = plan_only(objective, options.order, options.dp.threads, /*fold=*/false);
    DpOptions dp = options.dp;
    if (options.fold) {
      solution.folding = find_folding(objective, solution.plan);
      if (solution.folding) {
        dp.same_as = solution.folding->same_as;
        solution.tables = measure_tables(objective, solution.plan, options.dp.threads, dp.same_as);
      }
    }
    result = solve_dp(objective, solution.plan, names, dp);
  }
  // The strategy read back from the argmin tables must price at the optimum
  // the DP found (up to the order of summation). Anything else is a solver
  // bug, reported as an internal error instead of printed as an answer.
  const double achieved = objective.evaluate(result.choice);
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
