#include "solver/ordering.h"

#include <algorithm>
#include <deque>
#include <set>

#include "graphs/error.h"

namespace pase {
namespace {

void sort_latest_first(EliminationPlan& plan) {
  for (auto& set : plan.dependent)
    std::sort(set.begin(), set.end(), [&](int a, int b) { return plan.position[a] > plan.position[b]; });
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
  std::vector<std::set<int>> graph(neighbours.size());
  for (size_t v = 0; v < neighbours.size(); ++v) graph[v].insert(neighbours[v].begin(), neighbours[v].end());
  return graph;
}

}  // namespace

OrderKind parse_order_kind(const std::string& name) {
  if (name == "generateseq") return OrderKind::GenerateSeq;
  if (name == "bfs") return OrderKind::Bfs;
  throw InputError("--order: unknown order '" + name + "' (choose generateseq or bfs)");
}

std::string order_kind_name(OrderKind kind) { return kind == OrderKind::GenerateSeq ? "generateseq" : "bfs"; }

std::vector<std::vector<int>> undirected_neighbours(const Objective& objective) {
  std::vector<std::set<int>> sets(objective.vertex_count());
  for (const PairCost& pair : objective.pairs) {
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
    plan.position[best] = step;
    plan.order.push_back(best);
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
  for (size_t i = 0; i < order.size(); ++i) plan.position[order[i]] = static_cast<int>(i);
  std::vector<std::set<int>> graph = as_sets(neighbours);
  for (int v : order) plan.dependent[v] = eliminate(graph, v);
  sort_latest_first(plan);
  return plan;
}

EliminationPlan make_plan(const std::vector<std::vector<int>>& neighbours, OrderKind kind) {
  if (kind == OrderKind::GenerateSeq) return generate_seq(neighbours);
  return plan_for_order(neighbours, bfs_order(neighbours));
}

}  // namespace pase
