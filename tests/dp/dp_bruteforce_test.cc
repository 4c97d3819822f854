// The DP's optimum equals brute-force enumeration: on random small graphs of
// mixed ops (branches and joins, several p), and on random table-driven
// objectives that need no cost model at all, whose edge matrices are over
// one class per configuration or over classes that merge configurations.
// Every case is solved on one thread and by the parallel scheduler (an
// explicit thread count > 1 takes the parallel path however small the DP),
// and the returned strategy must evaluate to the optimum.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <set>

#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "dp/bounded_solve.h"
#include "dp/solve.h"
#include "random_objective.h"
#include "test_support.h"

using namespace pase;
using pase::test::brute_force;
using pase::test::class_map;
using pase::test::random_objective;

namespace {

// Builds random DAGs from the whole op vocabulary on small shapes, so every
// vertex has a handful of configurations and brute force stays cheap.
class RandomGraphMaker {
 public:
  explicit RandomGraphMaker(uint32_t seed) : rng_(seed) {}

  GraphFileV1 make(int target_nodes) {
    file_ = GraphFileV1{};
    file_.name = "random";
    file_.cutoff = pick({1, 2});
    pool_.clear();
    counter_ = 0;
    add_source();
    int attempts = 0;
    while (static_cast<int>(file_.nodes.size()) < target_nodes && attempts++ < 200) {
      if (chance(0.1)) add_source();
      grow();
    }
    return file_;
  }

 private:
  struct Available {
    std::string ref;
    Shape shape;
  };

  int64_t pick(std::vector<int64_t> options) { return options[rng_() % options.size()]; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  const Available& any() { return pool_[rng_() % pool_.size()]; }
  std::string fresh(const std::string& op) { return op + std::to_string(counter_++); }

  void add_source() {
    std::string name = "x" + std::to_string(file_.tensors.size());
    int kind = static_cast<int>(rng_() % 4);
    if (kind == 0) {
      Shape shape = {4, pick({2, 4}), 4, 4};
      file_.tensors.emplace_back(name, shape);
      pool_.push_back({name, shape});
    } else if (kind == 1) {
      Shape shape = {pick({2, 4}), pick({4, 6})};
      file_.tensors.emplace_back(name, shape);
      pool_.push_back({name, shape});
    } else if (kind == 2) {
      Shape shape = {4, 2, 4};
      file_.tensors.emplace_back(name, shape);
      pool_.push_back({name, shape});
    } else {
      Shape ids = {2, 4};
      file_.tensors.emplace_back(name, ids);
      NodeV1 n = node("embedding", {name});
      n.vocab = pick({8, 6});
      n.dim = 4;
      add(n, {2, 4, 4});
    }
  }

  NodeV1 node(const std::string& op, std::vector<std::string> inputs) {
    NodeV1 n;
    n.name = fresh(op);
    n.op = op;
    n.inputs = std::move(inputs);
    if (chance(0.15)) n.cutoff = pick({1, 2, 3});
    return n;
  }

  void add(NodeV1 n, Shape out) {
    pool_.push_back({n.name, out});
    file_.nodes.push_back(std::move(n));
  }

  void add_multi(NodeV1 n, const std::vector<Shape>& outs) {
    for (size_t k = 0; k < outs.size(); ++k) pool_.push_back({n.name + ":" + std::to_string(k), outs[k]});
    file_.nodes.push_back(std::move(n));
  }

  // Another available tensor of the same shape, if any (for joins).
  const Available* partner(const Available& a) {
    std::vector<const Available*> same;
    for (const Available& b : pool_)
      if (b.shape == a.shape && b.ref != a.ref) same.push_back(&b);
    return same.empty() ? nullptr : same[rng_() % same.size()];
  }

  void grow() {
    Available a = any();
    const Shape& s = a.shape;
    size_t rank = s.size();
    switch (rng_() % 16) {
      case 0:
      case 15: {  // elementwise join; without a partner, make a diamond a -> norm -> join(a, norm)
        const Available* b = partner(a);
        std::string other;
        if (b) {
          other = b->ref;
        } else {
          NodeV1 side = node("norm", {a.ref});
          other = side.name;
          add(side, s);
        }
        NodeV1 n = node("elementwise", {a.ref, other});
        if (chance(0.5)) n.pointwise = pick({1, 2});
        add(n, s);
        break;
      }
      case 1: {
        if (rank < 2) return;
        NodeV1 n = node("fc", {a.ref});
        n.units = pick({2, 4});
        if (chance(0.5)) n.pointwise = 1;
        Shape out = s;
        out.back() = *n.units;
        add(n, out);
        break;
      }
      case 2: {  // einsum against a weight
        if (rank != 3) return;
        std::string w = "w" + std::to_string(counter_);
        file_.tensors.emplace_back(w, Shape{s[2], 2});
        NodeV1 n = node("einsum", {a.ref, w});
        n.equation = "ble,ef->blf";
        add(n, {s[0], s[1], 2});
        break;
      }
      case 3: {  // matmul of two activations
        if (rank != 2) return;
        const Available* b = partner(a);
        if (!b || s[0] != s[1]) {
          NodeV1 n = node("transpose", {a.ref});
          n.perm = std::vector<int64_t>{1, 0};
          add(n, {s[1], s[0]});
          return;
        }
        add(node("matmul", {a.ref, b->ref}), s);
        break;
      }
      case 4: {
        if (rank != 4) return;
        NodeV1 n = node("conv2d", {a.ref});
        int64_t k = pick({1, 3});
        n.filter = Shape{pick({2, 4}), s[1], k, k};
        if (k == 3) n.padding = HeightWidth{1, 1};
        if (chance(0.3)) n.pointwise = 1;
        add(n, {s[0], (*n.filter)[0], s[2], s[3]});
        break;
      }
      case 5: {
        if (rank != 4 || s[2] < 2 || s[3] < 2) return;
        NodeV1 n = node("pool2d", {a.ref});
        n.window = HeightWidth{2, 2};
        n.stride = HeightWidth{2, 2};
        add(n, {s[0], s[1], (s[2] - 2) / 2 + 1, (s[3] - 2) / 2 + 1});
        break;
      }
      case 6: {
        const char* ops[] = {"norm", "batchnorm", "softmax", "softmax_xent"};
        std::string op = ops[rng_() % 4];
        if (op == "softmax" && rank < 2) return;
        add(node(op, {a.ref}), s);
        break;
      }
      case 7: {
        if (rank < 2) return;
        NodeV1 n = node("reduce_mean", {a.ref});
        n.axes = std::vector<int64_t>{static_cast<int64_t>(rank - 1)};
        n.keepdims = chance(0.5);
        Shape out = s;
        if (*n.keepdims) out.back() = 1;
        else out.pop_back();
        add(n, out);
        break;
      }
      case 8: {  // concat: a join on axis 1
        if (rank < 2) return;
        const Available* b = partner(a);
        if (!b) return;
        NodeV1 n = node("concat", {a.ref, b->ref});
        n.axis = 1;
        Shape out = s;
        out[1] *= 2;
        add(n, out);
        break;
      }
      case 9: {  // split: a branch
        if (rank < 2 || s[1] % 2) return;
        NodeV1 n = node("split", {a.ref});
        n.parts = std::vector<int64_t>{2};
        n.parts_is_count = true;
        n.axis = 1;
        Shape out = s;
        out[1] /= 2;
        add_multi(n, {out, out});
        break;
      }
      case 10: {  // reshape merging the last two dims
        if (rank < 2) return;
        NodeV1 n = node("reshape", {a.ref});
        Shape out(s.begin(), s.end() - 1);
        out.back() *= s.back();
        n.shape = out;
        add(n, out);
        break;
      }
      case 11: {
        if (rank < 2) return;
        NodeV1 n = node("transpose", {a.ref});
        std::vector<int64_t> perm(rank);
        for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
        std::swap(perm[0], perm[rank - 1]);
        Shape out = s;
        std::swap(out[0], out[rank - 1]);
        n.perm = perm;
        add(n, out);
        break;
      }
      case 12: {  // stack then unstack
        if (rank > 3) return;
        const Available* b = partner(a);
        NodeV1 st = node("stack", b ? std::vector<std::string>{a.ref, b->ref} : std::vector<std::string>{a.ref, a.ref});
        Shape stacked = s;
        stacked.insert(stacked.begin(), 2);
        std::string name = st.name;
        add(st, stacked);
        if (chance(0.6)) add_multi(node("unstack", {name}), {s, s});
        break;
      }
      case 13: {
        if (rank != 3 || s[2] != 4) return;
        NodeV1 n = node("lstm", {a.ref});
        n.units = 4;
        n.layers = pick({1, 2});
        add(n, s);
        break;
      }
      case 14: {  // einsum of two activations with a batch letter
        if (rank != 3) return;
        const Available* b = partner(a);
        if (!b) return;
        NodeV1 n = node("einsum", {a.ref, b->ref});
        n.equation = "bik,bjk->bij";
        add(n, {s[0], s[1], s[1]});
        break;
      }
      default: {
        NodeV1 n = node("elementwise", {a.ref});
        add(n, s);
        break;
      }
    }
  }

  std::mt19937 rng_;
  GraphFileV1 file_;
  std::vector<Available> pool_;
  int counter_ = 0;
};

double assignments(const Objective& objective) {
  double product = 1;
  for (size_t v = 0; v < objective.vertex_count(); ++v) product *= static_cast<double>(objective.config_count(v));
  return product;
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

// One thread, and the parallel scheduler: an explicit count > 1 bypasses
// kSerialWork, so even these tiny DPs run as tasks in a TBB arena.
constexpr int kThreadCounts[] = {1, 2, 4};

// Whether some edge prices two configurations of an end alike (fewer classes than configurations).
bool merges_classes(const Objective& objective) {
  for (const PairCost& pair : objective.pairs)
    if (static_cast<size_t>(pair.u_classes) < objective.config_count(pair.u) ||
        static_cast<size_t>(pair.v_classes) < objective.config_count(pair.v))
      return true;
  return false;
}

// Solves `objective` with every kind of plan at every thread count and checks
// the optimum (integers: exact) and the strategy against brute force.
void check_against_brute_force(const Objective& objective) {
  const int n = static_cast<int>(objective.vertex_count());
  std::vector<int32_t> best_choice;
  double correct = brute_force(objective, best_choice);
  std::vector<std::string> names;
  for (int v = 0; v < n; ++v) names.push_back("v" + std::to_string(v));
  auto neighbours = undirected_neighbours(objective);
  std::vector<int> reversed(static_cast<size_t>(n));
  for (int v = 0; v < n; ++v) reversed[static_cast<size_t>(v)] = n - 1 - v;
  const std::vector<size_t> counts = objective.config_counts();
  for (const EliminationPlan& plan : {generate_seq(neighbours), plan_for_order(neighbours, bfs_order(neighbours)),
                                      plan_for_order(neighbours, reversed), min_degree(neighbours, counts),
                                      min_fill(neighbours, counts)}) {
    for (int threads : kThreadCounts) {
      CAPTURE(threads);
      DpOptions options;
      options.threads = threads;
      DpResult result = solve_dp(objective, plan, names, options);
      CHECK(result.cost == correct);
      CHECK(objective.evaluate(result.choice) == correct);
    }
  }
}

}  // namespace

TEST_CASE("solve_dp: equals brute force on random graphs of mixed ops") {
  int checked = 0, larger = 0, with_join = 0, with_merged_classes = 0;
  double total_assignments = 0;
  std::vector<int> ops_seen(32, 0);
  std::mt19937 seeds(2021);
  for (int attempt = 0; checked < 220 && attempt < 5000; ++attempt) {
    uint32_t seed = static_cast<uint32_t>(seeds());
    RandomGraphMaker maker(seed);
    GraphFileV1 file = maker.make(3 + static_cast<int>(seed % 6));
    // Through the file format, so the round trip is exercised too.
    Graph graph = test::graph_from_json(write_graph_file(file));
    Machine machine;
    machine.devices = std::vector<int64_t>{1, 2, 3, 4, 6, 8}[seed % 6];
    CostTables tables = build_cost_tables(graph, machine);
    if (assignments(tables.objective) > 60000) continue;
    CAPTURE(seed);
    CAPTURE(machine.devices);
    std::vector<int32_t> best_choice;
    double correct = brute_force(tables.objective, best_choice);
    for (OrderKind order : all_order_kinds()) {
      for (int threads : kThreadCounts) {
        CAPTURE(threads);
        SolveOptions options;
        options.order = order;
        options.dp.threads = threads;
        Solution solution = solve(tables.objective, graph.vertex_names(), options);
        CHECK(close(solution.cost, correct));
        CHECK(close(tables.objective.evaluate(solution.choice), correct));
        // The reported strategy really costs what the DP says, by the formulas themselves.
        CHECK(close(evaluate_strategy_direct(graph, tables, PaseCostModel(machine), solution.choice), solution.cost));
      }
    }
    if (merges_classes(tables.objective)) ++with_merged_classes;
    CHECK(close(evaluate_strategy_direct(graph, tables, PaseCostModel(machine), best_choice), correct));
    for (const Vertex& v : graph.vertices) ops_seen[static_cast<int>(v.kind)]++;
    if (graph.vertices.size() >= 5) ++larger;
    for (const Vertex& v : graph.vertices) {
      std::set<int> producers;
      for (const VertexInput& in : v.inputs)
        if (in.source.vertex >= 0) producers.insert(in.source.vertex);
      if (producers.size() >= 2) {
        ++with_join;
        break;
      }
    }
    total_assignments += assignments(tables.objective);
    ++checked;
  }
  CHECK(checked >= 200);
  MESSAGE("graphs " << checked << ", with >= 5 vertices " << larger << ", with a join " << with_join
                    << ", with merged edge classes " << with_merged_classes << ", assignments enumerated "
                    << total_assignments);
  CHECK(larger >= 60);
  CHECK(with_join >= 40);
  // Edges whose matrices group configurations (a reduced dim, a dim the
  // tensor does not have) are the DP's compressed path; most graphs have one.
  CHECK(with_merged_classes >= 100);
  // Every op of the vocabulary took part.
  for (OpKind kind : {OpKind::Fc, OpKind::Einsum, OpKind::Matmul, OpKind::Conv2d, OpKind::Pool2d, OpKind::Elementwise,
                      OpKind::Norm, OpKind::Batchnorm, OpKind::Softmax, OpKind::SoftmaxXent, OpKind::ReduceMean,
                      OpKind::Concat, OpKind::Split, OpKind::Ravel, OpKind::Unravel, OpKind::Transpose, OpKind::Stack,
                      OpKind::Unstack, OpKind::Embedding, OpKind::Lstm}) {
    CAPTURE(static_cast<int>(kind));
    CHECK(ops_seen[static_cast<int>(kind)] > 0);
  }
}

TEST_CASE("solve_dp: equals brute force on random table-driven objectives") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 150; ++trial) {
    CAPTURE(trial);
    check_against_brute_force(random_objective(rng, 2 + static_cast<int>(rng() % 7), 4, false));
  }
}

TEST_CASE("solve_dp: equals brute force when edge classes merge configurations") {
  std::mt19937 rng(11);
  int merged = 0;
  for (int trial = 0; trial < 150; ++trial) {
    CAPTURE(trial);
    Objective objective = random_objective(rng, 2 + static_cast<int>(rng() % 7), 6, true);
    if (merges_classes(objective)) ++merged;
    check_against_brute_force(objective);
  }
  CHECK(merged >= 100);
}

// A node listing one tensor several times gives pairs that repeat an earlier
// one exactly (same ends, matrix and classes); the DP folds them into one
// factor. Repeats are appended after other pairs so they interleave in the
// order the DP meets its edges, and some reuse a matrix with other classes
// (not a repeat).
TEST_CASE("solve_dp: equals brute force when pairs repeat") {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 100; ++trial) {
    CAPTURE(trial);
    Objective objective = random_objective(rng, 2 + static_cast<int>(rng() % 6), 5, trial % 2 == 0);
    const size_t original = objective.pairs.size();
    for (size_t e = 0; e < original; ++e)
      for (uint32_t copies = rng() % 4; copies > 0; --copies) objective.pairs.push_back(objective.pairs[e]);
    check_against_brute_force(objective);
  }
}

// Few vertices with many configurations, every pair joined: the first table
// eliminated spans three others (24^3 entries), enough for the parallel fill
// (with one class per configuration) and the parallel expansion of a table
// computed over merged classes.
TEST_CASE("solve_dp: equals brute force on tables large enough to fill and expand in parallel") {
  std::mt19937 rng(5);
  for (bool merge : {false, true}) {
    CAPTURE(merge);
    for (int trial = 0; trial < 3; ++trial) {
      CAPTURE(trial);
      Objective objective;
      const int n = 4;
      for (int v = 0; v < n; ++v) {
        std::vector<double> cost(24);
        for (double& c : cost) c = static_cast<double>(rng() % 100000);
        objective.vertex_cost.push_back(cost);
      }
      for (int u = 0; u < n; ++u)
        for (int v = u + 1; v < n; ++v) {
          PairCost pair;
          pair.u = u;
          pair.v = v;
          pair.u_class = class_map(rng, 24, merge, pair.u_classes);
          pair.v_class = class_map(rng, 24, merge, pair.v_classes);
          auto matrix = std::make_shared<std::vector<double>>();
          for (int32_t i = 0; i < pair.u_classes * pair.v_classes; ++i) matrix->push_back(static_cast<double>(rng() % 50000));
          pair.cost = std::move(matrix);
          objective.pairs.push_back(pair);
        }
      auto neighbours = undirected_neighbours(objective);
      EliminationPlan plan = generate_seq(neighbours);
      CHECK(measure_tables(objective, plan).entries[static_cast<size_t>(plan.order[0])] == 24 * 24 * 24);
      check_against_brute_force(objective);
    }
  }
}

// The bounded solve against brute force, its targets tiny so that most
// objectives have edges relaxed: the bound is below the optimum, the answer
// at or above it and priced right, and an answer it calls optimal is.
TEST_CASE("solve_bounded: a lower bound below brute force, an answer above it") {
  std::mt19937 rng(31);
  int relaxed = 0, proven = 0, unproven = 0;
  for (int trial = 0; trial < 200; ++trial) {
    CAPTURE(trial);
    Objective objective = random_objective(rng, 4 + static_cast<int>(rng() % 5), 5, trial % 2 == 1);
    std::vector<int32_t> best_choice;
    const double correct = brute_force(objective, best_choice);
    std::vector<std::string> names;
    for (size_t v = 0; v < objective.vertex_count(); ++v) names.push_back("v" + std::to_string(v));
    BoundedOptions options;
    options.target_work = 40;
    options.target_table_bytes = 1 << 20;
    BoundedSolution bounded = solve_bounded(objective, names, options);
    CHECK(bounded.lower_bound <= correct * (1 + 1e-12));
    CHECK(bounded.solution.cost >= correct * (1 - 1e-12));
    CHECK(bounded.solution.cost == objective.evaluate(bounded.solution.choice));
    if (bounded.proven_optimal()) {
      CHECK(close(bounded.solution.cost, correct));
      ++proven;
    } else {
      ++unproven;
    }
    if (bounded.relaxed_edges > 0) ++relaxed;
  }
  MESSAGE("relaxed " << relaxed << " of 200, proven optimal " << proven << ", with a gap " << unproven);
  CHECK(relaxed >= 100);
  CHECK(unproven >= 20);  // the bound is not trivially tight: gaps are exercised
}

TEST_CASE("least_vertex_costs: below brute force, equal to it once the edges cost nothing") {
  std::mt19937 rng(47);
  int below = 0;
  for (int trial = 0; trial < 100; ++trial) {
    CAPTURE(trial);
    Objective objective = random_objective(rng, 2 + static_cast<int>(rng() % 5), 5, trial % 2 == 1);
    std::vector<int32_t> choice;
    const double correct = brute_force(objective, choice);
    const double bound = least_vertex_costs(objective);
    CHECK(bound <= correct * (1 + 1e-12));
    below += bound < correct * (1 - 1e-9);
    // Without its edges' costs the objective is separable: the bound is its optimum.
    for (PairCost& pair : objective.pairs)
      pair.cost = std::make_shared<std::vector<double>>(pair.cost->size(), 0.0);
    CHECK(close(least_vertex_costs(objective), brute_force(objective, choice)));
  }
  CHECK(below > 50);  // the edges do cost something in most
}
