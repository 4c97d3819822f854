#include "dp/ordering.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>

#include "base/check.h"
#include "base/error.h"
#include "base/closest_name.h"

namespace pase {
namespace {

void sort_latest_first(EliminationPlan& plan) {
  for (auto& set : plan.dependent)
    std::sort(set.begin(), set.end(), [&](int a, int b) { return plan.position[a] > plan.position[b]; });
}

// The vertex eliminated at `step`: one is left while steps are.
void place(EliminationPlan& plan, int best, int step) {
  PASE_ASSERT(best >= 0 && plan.position[best] < 0, best, step);
  plan.position[best] = step;
  plan.order.push_back(best);
}

// Eliminates `v` from the elimination graph: its remaining neighbours become a clique.
std::vector<int> eliminate(std::vector<std::set<int>>& graph, int v) {
  std::vector<int> dependent(graph[v].begin(), graph[v].end());
  for (int a : dependent) {
    graph[a].erase(v);
    for (int b : dependent)
      if (a != b) graph[a].insert(b);
  }
  graph[v].clear();
  return dependent;
}

std::vector<std::set<int>> as_sets(const std::vector<std::vector<int>>& neighbours) {
  const size_t n = neighbours.size();
  std::vector<std::set<int>> graph(n);
  for (size_t v = 0; v < n; ++v) {
    for (int w : neighbours[v]) PASE_ASSERT(w >= 0 && static_cast<size_t>(w) < n && static_cast<size_t>(w) != v, v, w, n);
    graph[v].insert(neighbours[v].begin(), neighbours[v].end());
  }
  return graph;
}

}  // namespace

const std::vector<OrderKind>& all_order_kinds() {
  static const std::vector<OrderKind> kinds = {OrderKind::GenerateSeq, OrderKind::Bfs, OrderKind::MinDegree,
                                               OrderKind::MinFill};
  return kinds;
}

std::string order_kind_name(OrderKind kind) {
  switch (kind) {
    case OrderKind::GenerateSeq: return "generateseq";
    case OrderKind::Bfs: return "bfs";
    case OrderKind::MinDegree: return "mindegree";
    case OrderKind::MinFill: return "minfill";
  }
  return "?";
}

OrderKind parse_order_kind(const std::string& name) {
  for (OrderKind kind : all_order_kinds())
    if (order_kind_name(kind) == name) return kind;
  std::vector<std::string> names;
  for (OrderKind kind : all_order_kinds()) names.push_back(order_kind_name(kind));
  const std::string hint = closest_name(name, names);
  throw OptionError({"order", "order kind", "",
                     ": unknown order '" + name + "' (" + (hint.empty() ? "" : "did you mean '" + hint + "'? ") +
                         "choose generateseq, bfs, mindegree or minfill)"});
}

std::vector<std::vector<int>> undirected_neighbours(const Objective& objective) {
  std::vector<std::set<int>> sets(objective.vertex_count());
  for (const PairCost& pair : objective.pairs) {
    PASE_ASSERT(pair.u >= 0 && static_cast<size_t>(pair.u) < sets.size() && pair.v >= 0 &&
                    static_cast<size_t>(pair.v) < sets.size(),
                pair.u, pair.v, sets.size());
    sets[pair.u].insert(pair.v);
    sets[pair.v].insert(pair.u);
  }
  std::vector<std::vector<int>> out(sets.size());
  for (size_t v = 0; v < sets.size(); ++v) out[v].assign(sets[v].begin(), sets[v].end());
  return out;
}

EliminationPlan generate_seq(const std::vector<std::vector<int>>& neighbours) {
  const int n = static_cast<int>(neighbours.size());
  std::vector<std::set<int>> graph = as_sets(neighbours);
  EliminationPlan plan;
  plan.position.assign(n, -1);
  plan.dependent.resize(n);
  for (int step = 0; step < n; ++step) {
    int best = -1;
    for (int v = 0; v < n; ++v)
      if (plan.position[v] < 0 && (best < 0 || graph[v].size() < graph[best].size())) best = v;
    place(plan, best, step);
    plan.dependent[best] = eliminate(graph, best);
  }
  sort_latest_first(plan);
  return plan;
}

std::vector<int> bfs_order(const std::vector<std::vector<int>>& neighbours) {
  const size_t n = neighbours.size();
  std::vector<char> seen(n, 0);
  std::vector<int> order;
  for (size_t start = 0; start < n; ++start) {
    if (seen[start]) continue;
    std::deque<int> queue = {static_cast<int>(start)};
    seen[start] = 1;
    while (!queue.empty()) {
      int v = queue.front();
      queue.pop_front();
      order.push_back(v);
      for (int w : neighbours[v])
        if (!seen[w]) {
          seen[w] = 1;
          queue.push_back(w);
        }
    }
  }
  return order;
}

EliminationPlan plan_for_order(const std::vector<std::vector<int>>& neighbours, const std::vector<int>& order) {
  const size_t n = neighbours.size();
  EliminationPlan plan;
  plan.order = order;
  plan.position.assign(n, -1);
  plan.dependent.resize(n);
  // An order lists every vertex once.
  PASE_ASSERT(order.size() == n, order.size(), n);
  for (size_t i = 0; i < order.size(); ++i) {
    const int v = order[i];
    PASE_ASSERT(v >= 0 && static_cast<size_t>(v) < n && plan.position[v] < 0, i, v, n);
    plan.position[v] = static_cast<int>(i);
  }
  std::vector<std::set<int>> graph = as_sets(neighbours);
  for (int v : order) plan.dependent[v] = eliminate(graph, v);
  sort_latest_first(plan);
  return plan;
}

namespace {

// Greedy elimination by a score (lower first; ties to the lowest index).
// Only the eliminated vertex's neighbours, and for scores that look at
// adjacency among neighbours their neighbours too, need new scores.
template <typename Score>
EliminationPlan greedy(const std::vector<std::vector<int>>& neighbours, Score score, bool two_hops,
                       const std::vector<int>& last = {}) {
  const int n = static_cast<int>(neighbours.size());
  std::vector<char> held(static_cast<size_t>(n), 0);  // placed after every other vertex, in `last`'s order
  for (int v : last) held[static_cast<size_t>(v)] = 1;
  std::vector<std::set<int>> graph = as_sets(neighbours);
  EliminationPlan plan;
  plan.position.assign(n, -1);
  plan.dependent.resize(n);
  using Key = decltype(score(graph, 0));
  std::vector<Key> keys(n);
  for (int v = 0; v < n; ++v) keys[v] = score(graph, v);
  const int free_steps = n - static_cast<int>(last.size());
  for (int step = 0; step < n; ++step) {
    int best = -1;
    if (step >= free_steps) best = last[static_cast<size_t>(step - free_steps)];
    for (int v = 0; v < n && step < free_steps; ++v)
      if (plan.position[v] < 0 && !held[static_cast<size_t>(v)] && (best < 0 || keys[v] < keys[best])) best = v;
    place(plan, best, step);
    plan.dependent[best] = eliminate(graph, best);
    std::set<int> touched(plan.dependent[best].begin(), plan.dependent[best].end());
    if (two_hops)
      for (int w : plan.dependent[best]) touched.insert(graph[w].begin(), graph[w].end());
    for (int w : touched) keys[w] = score(graph, w);
  }
  sort_latest_first(plan);
  return plan;
}

double log_table_size(const std::set<int>& members, const std::vector<size_t>& config_counts) {
  double size = 0;
  for (int w : members) size += std::log(static_cast<double>(config_counts[w]));
  return size;
}

}  // namespace

EliminationPlan min_degree(const std::vector<std::vector<int>>& neighbours, const std::vector<size_t>& config_counts) {
  auto score = [&](const std::vector<std::set<int>>& graph, int v) {
    return std::make_pair(graph[v].size(), log_table_size(graph[v], config_counts));
  };
  return greedy(neighbours, score, /*two_hops=*/false);
}

EliminationPlan min_degree_keeping_last(const std::vector<std::vector<int>>& neighbours,
                                        const std::vector<size_t>& config_counts, const std::vector<int>& last) {
  auto score = [&](const std::vector<std::set<int>>& graph, int v) {
    return std::make_pair(graph[v].size(), log_table_size(graph[v], config_counts));
  };
  return greedy(neighbours, score, /*two_hops=*/false, last);
}

EliminationPlan min_fill(const std::vector<std::vector<int>>& neighbours, const std::vector<size_t>& config_counts) {
  auto score = [&](const std::vector<std::set<int>>& graph, int v) {
    size_t fill = 0;
    for (int a : graph[v])
      for (int b : graph[v])
        if (a < b && !graph[a].count(b)) ++fill;
    return std::make_pair(fill, log_table_size(graph[v], config_counts));
  };
  return greedy(neighbours, score, /*two_hops=*/true);
}

EliminationPlan make_plan(const std::vector<std::vector<int>>& neighbours, OrderKind kind,
                          const std::vector<size_t>& config_counts) {
  switch (kind) {
    case OrderKind::GenerateSeq: return generate_seq(neighbours);
    case OrderKind::Bfs: return plan_for_order(neighbours, bfs_order(neighbours));
    case OrderKind::MinDegree: return min_degree(neighbours, config_counts);
    case OrderKind::MinFill: return min_fill(neighbours, config_counts);
  }
  return generate_seq(neighbours);
}

}  // namespace pase
