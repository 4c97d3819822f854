// GenerateSeq and the dependent sets: checked against the definition
// (neighbours of the prefix's connected component that contains the vertex),
// computed here by a plain graph search rather than by elimination.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <map>
#include <set>

#include "costmodel/cost_tables.h"
#include "graphs/zoo.h"
#include "dp/ordering.h"
#include "dp/solve.h"

using namespace pase;

namespace {

using Neighbours = std::vector<std::vector<int>>;

// D(v) when `prefix` (which contains v) has been sequenced.
std::set<int> dependent_by_definition(const Neighbours& graph, const std::vector<char>& in_prefix, int v) {
  std::set<int> component = {v}, dependent;
  std::vector<int> stack = {v};
  while (!stack.empty()) {
    int u = stack.back();
    stack.pop_back();
    for (int w : graph[u]) {
      if (!in_prefix[w]) dependent.insert(w);
      else if (component.insert(w).second) stack.push_back(w);
    }
  }
  return dependent;
}

Neighbours random_graph(std::mt19937& rng, int n, double density) {
  std::vector<std::set<int>> sets(n);
  std::uniform_real_distribution<double> coin(0, 1);
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v)
      if (coin(rng) < density) sets[u].insert(v), sets[v].insert(u);
  Neighbours graph(n);
  for (int v = 0; v < n; ++v) graph[v].assign(sets[v].begin(), sets[v].end());
  return graph;
}

void check_plan_against_definition(const Neighbours& graph, const EliminationPlan& plan, bool greedy) {
  const int n = static_cast<int>(graph.size());
  REQUIRE(plan.order.size() == graph.size());
  std::vector<char> in_prefix(n, 0);
  for (int step = 0; step < n; ++step) {
    int v = plan.order[step];
    REQUIRE(!in_prefix[v]);
    if (greedy) {
      // GenerateSeq takes a vertex whose dependent set is smallest among those left.
      size_t smallest = graph.size();
      for (int u = 0; u < n; ++u) {
        if (in_prefix[u]) continue;
        in_prefix[u] = 1;
        smallest = std::min(smallest, dependent_by_definition(graph, in_prefix, u).size());
        in_prefix[u] = 0;
      }
      in_prefix[v] = 1;
      CHECK(dependent_by_definition(graph, in_prefix, v).size() == smallest);
    }
    in_prefix[v] = 1;
    std::set<int> correct = dependent_by_definition(graph, in_prefix, v);
    std::set<int> result(plan.dependent[v].begin(), plan.dependent[v].end());
    CHECK(result == correct);
    // Latest first: the vertex that will consume v's table is last.
    for (size_t i = 1; i < plan.dependent[v].size(); ++i)
      CHECK(plan.position[plan.dependent[v][i - 1]] > plan.position[plan.dependent[v][i]]);
  }
}

}  // namespace

TEST_CASE("generate_seq: dependent sets match the definition") {
  std::mt19937 rng(11);
  SUBCASE("random graphs") {
    for (int trial = 0; trial < 60; ++trial) {
      CAPTURE(trial);
      Neighbours graph = random_graph(rng, 2 + trial % 25, trial % 3 == 0 ? 0.4 : 0.12);
      check_plan_against_definition(graph, generate_seq(graph), /*greedy=*/true);
      check_plan_against_definition(graph, plan_for_order(graph, bfs_order(graph)), /*greedy=*/false);
      std::vector<size_t> counts(graph.size());
      for (size_t v = 0; v < counts.size(); ++v) counts[v] = 1 + (v * 7) % 5;
      check_plan_against_definition(graph, min_degree(graph, counts), /*greedy=*/true);  // still a min-|D| order
      check_plan_against_definition(graph, min_fill(graph, counts), /*greedy=*/false);
    }
  }
  SUBCASE("zoo graphs") {
    for (const ZooEntry& entry : zoo_entries()) {
      CAPTURE(entry.name);
      Graph graph = build_graph(build_zoo_graph(entry.name, 8), entry.name);
      Machine machine;
      machine.devices = 2;
      Neighbours neighbours = undirected_neighbours(build_cost_tables(graph, machine).objective);
      check_plan_against_definition(neighbours, generate_seq(neighbours), /*greedy=*/true);
    }
  }
}

TEST_CASE("generate_seq: small dependent sets on the zoo") {
  // The reason for the order: the zoo's tables stay small.
  std::map<std::string, size_t> correct = {
      {"alexnet", 1}, {"resnet101", 2}, {"inception3", 2}, {"rnnlm", 1}, {"transformer", 3}};
  for (const ZooEntry& entry : zoo_entries()) {
    CAPTURE(entry.name);
    Graph graph = build_graph(build_zoo_graph(entry.name, 8), entry.name);
    Machine machine;
    machine.devices = 2;
    EliminationPlan plan = generate_seq(undirected_neighbours(build_cost_tables(graph, machine).objective));
    size_t largest = 0;
    for (const auto& set : plan.dependent) largest = std::max(largest, set.size());
    CHECK(largest == correct[entry.name]);
  }
}

TEST_CASE("bfs_order: visits components in turn") {
  Neighbours graph = {{1}, {0, 2}, {1}, {4}, {3}};
  CHECK(bfs_order(graph) == std::vector<int>{0, 1, 2, 3, 4});
  Neighbours star = {{3}, {3}, {3}, {0, 1, 2}};
  CHECK(bfs_order(star) == std::vector<int>{0, 3, 1, 2});
}

TEST_CASE("min_degree: ties go to the smaller table") {
  // A path a - b - c: a and c both have one neighbour (b); with equal sizes the
  // lowest index goes first, but a heavier neighbour makes the other end win.
  Neighbours path = {{1}, {0, 2}, {1}, {4}, {3}};
  CHECK(min_degree(path, {1, 1, 1, 1, 1}).order.front() == 0);
  CHECK(min_degree(path, {1, 1, 1, 1, 1}).order.front() == 0);
  // 0 and 2 would make tables over 1 (5 configurations), 3 over 4 (2), 4 over 3 (1): 4 goes first.
  CHECK(min_degree(path, {1, 5, 1, 1, 2}).order.front() == 4);
  CHECK(min_degree(path, {1, 5, 1, 3, 2}).order.front() == 3);
}

TEST_CASE("min_fill: prefers eliminations that add no edges") {
  // A 4-cycle 0-1-2-3 with a pendant 4 on 0: eliminating 4 adds no edge;
  // any cycle vertex adds one, so the pendant goes first.
  Neighbours graph = {{1, 3, 4}, {0, 2}, {1, 3}, {0, 2}, {0}};
  EliminationPlan plan = min_fill(graph, {2, 2, 2, 2, 2});
  CHECK(plan.order.front() == 4);
  CHECK(plan.dependent[4] == std::vector<int>{0});
}

TEST_CASE("make_plan: the default order never needs a larger table than any other order on the zoo") {
  for (const ZooEntry& entry : zoo_entries()) {
    Graph graph = build_graph(build_zoo_graph(entry.name, entry.default_batch), entry.name);
    for (int64_t devices : {8, 32, 256}) {
      CAPTURE(entry.name);
      CAPTURE(devices);
      Machine machine;
      machine.devices = devices;
      CostTables tables = build_cost_tables(graph, machine);
      Solution by_default = plan_only(tables.objective, SolveOptions{}.order);
      const uint64_t largest = by_default.tables.entries[by_default.tables.largest_vertex];
      for (OrderKind kind : all_order_kinds()) {
        CAPTURE(order_kind_name(kind));
        Solution other = plan_only(tables.objective, kind);
        CHECK(largest <= other.tables.entries[other.tables.largest_vertex]);
      }
      // Total work may differ either way by a little (AlexNet p = 8: 4023 vs 4009 steps).
    }
  }
}
