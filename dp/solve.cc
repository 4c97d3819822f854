#include "dp/solve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace pase {
namespace {

// Names for the vertices of an objective given without any.
std::vector<std::string> numbered_names(const Objective& objective) {
  std::vector<std::string> out;
  for (size_t v = 0; v < objective.vertex_count(); ++v) out.push_back("vertex " + std::to_string(v));
  return out;
}

// The plan and sizes as a Solution (no choice yet).
Solution planned_solution(const SolvePlan& planned) {
  Solution solution;
  solution.plan = planned.plan;
  solution.tables = planned.tables;
  solution.folding = planned.folding;
  if (planned.chain) solution.chains = planned.chain->folds;
  return solution;
}

// The strategy read back from the argmin tables must price at the optimum
// the DP found (up to the order of summation). Anything else is a solver
// bug, reported as an internal error instead of printed as an answer.
void check_read_back(const Objective& objective, const DpResult& result) {
  const double achieved = objective.evaluate(result.choice);
  const double scale = std::max(std::abs(achieved), std::abs(result.cost));
  if (achieved != result.cost && !(std::abs(achieved - result.cost) <= 1e-9 * scale))
    throw std::logic_error("the strategy read back from the DP costs " + std::to_string(achieved) +
                           ", not the optimum " + std::to_string(result.cost) + " it found");
}

}  // namespace

SolvePlan plan_solve(const Objective& objective, const std::vector<std::string>& names, OrderKind order, int threads,
                     bool fold) {
  SolvePlan planned;
  planned.plan = make_plan(undirected_neighbours(objective), order, objective.config_counts());
  if (fold) planned.chain = plan_chain(objective, names, order, threads);
  if (planned.chain) {
    planned.tables = planned.chain->tables;
    return planned;
  }
  if (fold) planned.folding = find_folding(objective, planned.plan);
  planned.tables = measure_tables(objective, planned.plan, threads,
                                  planned.folding ? planned.folding->same_as : std::vector<int>{});
  return planned;
}

std::optional<LimitError> solve_limit_error(const SolvePlan& planned, const std::vector<std::string>& names,
                                            const DpOptions& options) {
  if (planned.chain) return chain_limit_error(*planned.chain, names, options);
  return limit_error(planned.plan, planned.tables, names, options);
}

Solution run_planned(const Objective& objective, const std::vector<std::string>& names, const SolvePlan& planned,
                     const DpOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Solution solution = planned_solution(planned);
  DpResult result;
  if (planned.chain) {
    result = run_chain(*planned.chain, objective, names, options);
  } else {
    DpOptions dp = options;
    if (planned.folding) dp.same_as = planned.folding->same_as;
    result = run_dp(objective, planned.plan, planned.tables, dp);
  }
  check_read_back(objective, result);
  solution.cost = result.cost;
  solution.choice = std::move(result.choice);
  solution.stats = result.stats;
  solution.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return solution;
}

Solution plan_only(const Objective& objective, OrderKind order, int threads, bool fold) {
  Solution solution = planned_solution(plan_solve(objective, numbered_names(objective), order, threads, fold));
  for (const auto& set : solution.plan.dependent)
    solution.stats.max_dependent_set = std::max(solution.stats.max_dependent_set, set.size());
  solution.stats.table_entries = solution.tables.total_entries;
  return solution;
}

Solution solve(const Objective& objective, const std::vector<std::string>& names, const SolveOptions& options) {
  auto start = std::chrono::steady_clock::now();
  const SolvePlan planned = plan_solve(objective, names, options.order, options.dp.threads, options.fold);
  if (std::optional<LimitError> error = solve_limit_error(planned, names, options.dp)) throw *error;
  Solution solution = run_planned(objective, names, planned, options.dp);
  solution.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return solution;
}

}  // namespace pase
