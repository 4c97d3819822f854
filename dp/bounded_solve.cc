#include "dp/bounded_solve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "base/error.h"

namespace pase {
namespace {

// The most an edge's matrix varies: what relaxing it can lose at most.
double spread(const PairCost& pair) {
  const auto [low, high] = std::minmax_element(pair.cost->begin(), pair.cost->end());
  return *high - *low;
}

// Single-vertex moves on the true objective until none lowers the cost.
size_t improve_locally(const Objective& objective, std::vector<int32_t>& choice) {
  const size_t n = objective.vertex_count();
  std::vector<std::vector<size_t>> touching(n);
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    touching[static_cast<size_t>(objective.pairs[e].u)].push_back(e);
    touching[static_cast<size_t>(objective.pairs[e].v)].push_back(e);
  }
  size_t moves = 0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool moved = false;
    for (size_t v = 0; v < n; ++v) {
      auto cost_at = [&](size_t c) {
        double cost = objective.vertex_cost[v][c];
        for (size_t e : touching[v]) {
          const PairCost& pair = objective.pairs[e];
          cost += static_cast<size_t>(pair.u) == v ? pair.at(c, static_cast<size_t>(choice[static_cast<size_t>(pair.v)]))
                                                   : pair.at(static_cast<size_t>(choice[static_cast<size_t>(pair.u)]), c);
        }
        return cost;
      };
      const size_t current = static_cast<size_t>(choice[v]);
      double best = cost_at(current);
      size_t best_config = current;
      for (size_t c = 0; c < objective.config_count(v); ++c) {
        const double cost = cost_at(c);
        if (cost < best - 1e-12 * std::abs(best)) best = cost, best_config = c;
      }
      if (best_config != current) {
        choice[v] = static_cast<int32_t>(best_config);
        moved = true;
        ++moves;
      }
    }
    if (!moved) break;
  }
  return moves;
}

// The exact DP over every edge, each vertex kept to the `k` configurations
// the relaxed objective prices lowest (and the seed's): an upper bound that
// keeps the edges the relaxation dropped. Empty when no k fits the targets.
std::vector<int32_t> solve_restricted(const Objective& objective, const Objective& relaxed, const std::vector<int32_t>& seed,
                                      const BoundedOptions& options, uint64_t byte_target, uint64_t work_target,
                                      const std::vector<std::string>& names) {
  const size_t n = objective.vertex_count();
  for (size_t k : {16, 8, 4, 3, 2}) {
    std::vector<std::vector<int32_t>> kept(n);  // configurations kept, per vertex
    Objective restricted;
    restricted.vertex_cost.resize(n);
    for (size_t v = 0; v < n; ++v) {
      std::vector<int32_t> order(objective.config_count(v));
      for (size_t c = 0; c < order.size(); ++c) order[c] = static_cast<int32_t>(c);
      const SharedArray<double>& price = relaxed.vertex_cost[v];
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return price[static_cast<size_t>(a)] < price[static_cast<size_t>(b)]; });
      order.resize(std::min(order.size(), k));
      if (std::find(order.begin(), order.end(), seed[v]) == order.end()) order.push_back(seed[v]);
      kept[v] = order;
      std::vector<double> cost;
      for (int32_t c : order) cost.push_back(objective.vertex_cost[v][static_cast<size_t>(c)]);
      restricted.vertex_cost[v] = std::move(cost);
    }
    for (const PairCost& pair : objective.pairs) {
      PairCost sub = pair;
      std::vector<int32_t> u_class, v_class;
      for (int32_t c : kept[static_cast<size_t>(pair.u)]) u_class.push_back(pair.u_class[static_cast<size_t>(c)]);
      for (int32_t c : kept[static_cast<size_t>(pair.v)]) v_class.push_back(pair.v_class[static_cast<size_t>(c)]);
      sub.u_class = std::move(u_class);
      sub.v_class = std::move(v_class);
      restricted.pairs.push_back(std::move(sub));
    }
    const EliminationPlan plan = make_plan(undirected_neighbours(restricted), options.solve.order, restricted.config_counts());
    const TablePlan sizes = measure_tables(restricted, plan, options.solve.dp.threads);
    if (sizes.total_bytes > byte_target || sizes.total_work > work_target) continue;
    DpResult result = solve_dp(restricted, plan, names, options.solve.dp);
    std::vector<int32_t> choice(n);
    for (size_t v = 0; v < n; ++v) choice[v] = kept[v][static_cast<size_t>(result.choice[v])];
    return choice;
  }
  return {};
}

}  // namespace

Objective relax_edges(const Objective& objective, const std::vector<char>& relaxed) {
  Objective out;
  // Edited copies only of the vertices a relaxed edge touches; the others keep sharing.
  std::vector<std::vector<double>> edited(objective.vertex_count());
  auto costs_of = [&](int v) -> std::vector<double>& {
    std::vector<double>& cost = edited[static_cast<size_t>(v)];
    if (cost.empty()) cost = objective.vertex_cost[static_cast<size_t>(v)].copy();
    return cost;
  };
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    const PairCost& pair = objective.pairs[e];
    if (!relaxed[e]) {
      out.pairs.push_back(pair);
      continue;
    }
    const auto rows = static_cast<size_t>(pair.u_classes), cols = static_cast<size_t>(pair.v_classes);
    const std::vector<double>& m = *pair.cost;
    std::vector<double> f(rows, std::numeric_limits<double>::infinity());
    std::vector<double> g(cols, std::numeric_limits<double>::infinity());
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) f[i] = std::min(f[i], m[i * cols + j]);
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) g[j] = std::min(g[j], m[i * cols + j] - f[i]);
    std::vector<double>& u_cost = costs_of(pair.u);
    for (size_t a = 0; a < pair.u_class.size(); ++a) u_cost[a] += f[static_cast<size_t>(pair.u_class[a])];
    std::vector<double>& v_cost = costs_of(pair.v);
    for (size_t b = 0; b < pair.v_class.size(); ++b) v_cost[b] += std::max(0.0, g[static_cast<size_t>(pair.v_class[b])]);
  }
  out.vertex_cost = objective.vertex_cost;
  for (size_t v = 0; v < edited.size(); ++v)
    if (!edited[v].empty()) out.vertex_cost[v] = std::move(edited[v]);
  return out;
}

Relaxation relax_to_fit(const Objective& objective, const std::vector<std::string>& names,
                        const BoundedOptions& options) {
  const std::vector<size_t> counts = objective.config_counts();
  const uint64_t byte_target = std::min(options.target_table_bytes, options.solve.dp.max_table_bytes);
  const uint64_t work_target = std::min(options.target_work, options.solve.dp.max_work);
  std::vector<double> spreads;
  for (const PairCost& pair : objective.pairs) spreads.push_back(spread(pair));

  Relaxation result;
  std::vector<char>& relaxed = result.relaxed;
  relaxed.assign(objective.pairs.size(), 0);
  Objective kept;
  kept.vertex_cost = objective.vertex_cost;  // sizes only need counts; costs come in relax()
  EliminationPlan plan;
  for (;;) {
    kept.pairs.clear();
    for (size_t e = 0; e < objective.pairs.size(); ++e)
      if (!relaxed[e]) kept.pairs.push_back(objective.pairs[e]);
    plan = make_plan(undirected_neighbours(kept), options.solve.order, counts);
    const TablePlan sizes = measure_tables(kept, plan, options.solve.dp.threads);
    if (sizes.total_bytes <= byte_target && sizes.total_work <= work_target) break;
    // The largest table's vertex and its dependent set: relax the cheapest
    // quarter of the kept edges among them, at least one.
    const int largest = sizes.largest_vertex;
    std::vector<char> in_scope(counts.size(), 0);
    in_scope[static_cast<size_t>(largest)] = 1;
    for (int w : plan.dependent[static_cast<size_t>(largest)]) in_scope[static_cast<size_t>(w)] = 1;
    std::vector<size_t> candidates;
    for (size_t e = 0; e < objective.pairs.size(); ++e)
      if (!relaxed[e] && (in_scope[static_cast<size_t>(objective.pairs[e].u)] || in_scope[static_cast<size_t>(objective.pairs[e].v)]))
        candidates.push_back(e);
    if (candidates.empty())  // a table too large with no edges left to relax: its own configurations
      throw ResourceError("even with every edge near vertex '" + names[static_cast<size_t>(largest)] +
                          "' relaxed, the tables exceed the bounded solve's limits");
    std::sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) { return spreads[a] < spreads[b] || (spreads[a] == spreads[b] && a < b); });
    const size_t take = std::max<size_t>(1, candidates.size() / 4);
    for (size_t i = 0; i < take; ++i) relaxed[candidates[i]] = 1;
    result.relaxed_edges += take;
  }
  result.plan = std::move(plan);
  result.objective = relax_edges(objective, relaxed);
  return result;
}

BoundedSolution solve_bounded(const Objective& objective, const std::vector<std::string>& names,
                              const BoundedOptions& options) {
  auto start = std::chrono::steady_clock::now();
  BoundedSolution result = solve_bounded(objective, names, options, relax_to_fit(objective, names, options));
  result.solution.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

BoundedSolution solve_bounded(const Objective& objective, const std::vector<std::string>& names,
                              const BoundedOptions& options, const Relaxation& relaxation) {
  auto start = std::chrono::steady_clock::now();
  const uint64_t byte_target = std::min(options.target_table_bytes, options.solve.dp.max_table_bytes);
  const uint64_t work_target = std::min(options.target_work, options.solve.dp.max_work);
  BoundedSolution result;
  result.relaxed_edges = relaxation.relaxed_edges;
  const Objective& bound = relaxation.objective;
  const EliminationPlan& plan = relaxation.plan;
  DpOptions dp = options.solve.dp;
  DpResult lower = solve_dp(bound, plan, names, dp);
  // The relaxed optimum is a lower bound up to rounding in its sums.
  result.lower_bound = lower.cost * (1 - 1e-12);
  std::vector<int32_t> choice = lower.choice;
  result.local_moves = improve_locally(objective, choice);
  const bool met = objective.evaluate(choice) <= lower.cost * (1 + 1e-9);
  std::vector<int32_t> restricted;
  if (!met) restricted = solve_restricted(objective, bound, lower.choice, options, byte_target, work_target, names);
  if (!restricted.empty()) {
    const size_t moves = improve_locally(objective, restricted);
    if (objective.evaluate(restricted) < objective.evaluate(choice)) {
      choice = std::move(restricted);
      result.local_moves = moves;
    }
  }
  Solution& solution = result.solution;
  solution.plan = plan;
  solution.tables = measure_tables(bound, plan, dp.threads);
  solution.stats = lower.stats;
  solution.choice = std::move(choice);
  solution.cost = objective.evaluate(solution.choice);
  if (solution.cost < result.lower_bound) result.lower_bound = solution.cost;  // only by rounding
  solution.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace {

ExactRefusal refusal_of(const SolvePlan& planned, const LimitError& error) {
  ExactRefusal refusal;
  refusal.option = error.words().option;
  refusal.vertex = planned.tables.largest_vertex;
  refusal.dependent_set = planned.plan.dependent[static_cast<size_t>(refusal.vertex)].size();
  return refusal;
}

}  // namespace

std::optional<ExactRefusal> past_exact_limits(const Objective& objective, const std::vector<std::string>& names,
                                              const SolveOptions& options, bool exact) {
  const SolvePlan planned = plan_solve(objective, names, options.order, options.dp.threads, options.fold);
  const std::optional<LimitError> error = solve_limit_error(planned, names, options.dp);
  if (!error) return std::nullopt;
  if (exact) throw *error;
  return refusal_of(planned, *error);
}

Answer solve_or_bound(const Objective& objective, const std::vector<std::string>& names, const SolveOptions& options,
                      bool exact) {
  auto start = std::chrono::steady_clock::now();
  const SolvePlan planned = plan_solve(objective, names, options.order, options.dp.threads, options.fold);
  std::optional<LimitError> error = solve_limit_error(planned, names, options.dp);
  Answer answer;
  if (!error) {
    answer.solution = run_planned(objective, names, planned, options.dp);
    answer.solution.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return answer;
  }
  if (exact) throw *error;
  ExactRefusal refusal = refusal_of(planned, *error);
  BoundedOptions bounded;
  bounded.solve = options;
  try {
    answer.bounded = solve_bounded(objective, names, bounded);
  } catch (const ResourceError&) {
    throw *error;  // not even relaxing every edge fits: the exact DP's refusal says why
  }
  answer.solution = answer.bounded->solution;
  answer.refusal = std::move(refusal);
  return answer;
}

}  // namespace pase
