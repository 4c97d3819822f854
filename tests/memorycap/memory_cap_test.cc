// The capped search: its answer equals brute force on small random objectives
// at caps from the least memory up, the bound it reports is at most that
// optimum, a cap nobody fits is refused with the least-memory strategy, and
// on the zoo every answer fits its cap.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "graphs/graph.h"
#include "graphs/llm_zoo.h"
#include "memorycap/memory_cap.h"
#include "memorycap/relaxed_cap.h"
#include "dp/bounded_solve.h"
#include "base/error.h"
#include "dp/solve.h"
#include "random_objective.h"
#include "test_support.h"

using namespace pase;

namespace {

// A search limited by nodes alone (no work or time budget), so the tests
// are the same on any machine.
CapOptions node_budget(int nodes) {
  CapOptions options;
  options.max_dp_runs_per_bound = 64;
  options.max_nodes = nodes;
  options.max_search_work = UINT64_MAX;
  return options;
}

}  // namespace

namespace {

struct Exhaustive {
  double best_cost = std::numeric_limits<double>::infinity();  // within the cap
  uint64_t least_bytes = ~uint64_t{0};
  double least_bytes_cost = std::numeric_limits<double>::infinity();  // the cheapest of least bytes
};

// Every assignment (odometer), restricted to the cap.
Exhaustive exhaustive(const Objective& objective, const MemoryTables& memory, uint64_t cap) {
  Exhaustive result;
  const size_t n = objective.vertex_count();
  std::vector<int32_t> choice(n, 0);
  while (true) {
    const double cost = objective.evaluate(choice);
    const uint64_t bytes = plan_memory(memory, choice).total();
    if (bytes <= cap) result.best_cost = std::min(result.best_cost, cost);
    if (bytes < result.least_bytes || (bytes == result.least_bytes && cost < result.least_bytes_cost)) {
      result.least_bytes = bytes;
      result.least_bytes_cost = cost;
    }
    if (!test::next_assignment(choice, [&](size_t v) { return objective.config_count(v); })) return result;
  }
}

}  // namespace

TEST_CASE("solve_under_cap: equals brute force on random objectives at several caps") {
  std::mt19937 rng(20240611);
  int cases = 0, below_optimum_roots = 0, cut_offs = 0, first_dp_cut_offs = 0, hinted_cut_offs = 0;
  for (int round = 0; round < test::sanitized_rounds(60); ++round) {
    const Objective objective = test::random_objective(rng, 2 + static_cast<int>(rng() % 6), 5, round % 2 == 1);
    const MemoryTables memory = test::random_memory(rng, objective, 100, 50);
    MemoryPricedDp dp(objective, test::vertex_names(objective.vertex_count()), memory, SolveOptions{});
    const Exhaustive everything = exhaustive(objective, memory, ~uint64_t{0});
    std::vector<int32_t> unused;
    const double unconstrained = test::brute_force(objective, unused);
    // From one byte short of the least memory to above every strategy's.
    uint64_t most = 0;
    for (size_t v = 0; v < objective.vertex_count(); ++v) {
      uint64_t largest = 0;
      for (size_t s = 0; s < objective.config_count(v); ++s) largest = std::max(largest, memory.bytes(v, s));
      most += largest;
    }
    for (double f : {-1.0, 0.0, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0}) {
      const uint64_t cap = f < 0 ? everything.least_bytes - 1
                                 : everything.least_bytes + static_cast<uint64_t>(f * static_cast<double>(most - everything.least_bytes));
      const Exhaustive correct = exhaustive(objective, memory, cap);
      CAPTURE(round);
      CAPTURE(cap);
      ++cases;
      // Exact: the search runs until it proves its answer.
      CappedSolution result = solve_under_cap(dp, objective, memory, cap, node_budget(1 << 20));
      CHECK(result.least_memory == everything.least_bytes);
      if (f < 0) {
        CHECK_FALSE(result.feasible);
        CHECK(result.memory == everything.least_bytes);
        CHECK(result.cost == everything.least_bytes_cost);
        continue;
      }
      REQUIRE(result.feasible);
      CHECK(result.memory <= cap);
      CHECK(result.memory == plan_memory(memory, result.choice).total());
      CHECK(result.cost == objective.evaluate(result.choice));
      CHECK(result.cost == correct.best_cost);
      CHECK(result.lower_bound <= correct.best_cost);
      CHECK(result.gap == 0.0);
      // The root's Lagrangian bound alone: a bound, and an answer that fits.
      CappedSolution root = solve_under_cap(dp, objective, memory, cap, node_budget(0));
      CHECK(root.memory <= cap);
      CHECK(root.cost >= correct.best_cost);
      CHECK(root.lower_bound <= correct.best_cost * (1 + 1e-12));
      CHECK(root.lower_bound >= unconstrained);
      CHECK(root.gap == doctest::Approx(relative_gap(root.cost, root.lower_bound)));
      below_optimum_roots += root.lower_bound < correct.best_cost;
      // A cutoff (a cost found elsewhere) stops the search only where its
      // bound proves nothing here beats the cutoff; above the optimum's root
      // bound the answer is the search's own. (Every third objective: two
      // more searches each, and the sanitizers' CI run is timed.)
      if (round % 3 != 0) continue;
      CapOptions cut = node_budget(1 << 20);
      cut.cutoff = root.lower_bound * (1 - 1e-9);
      const CappedSolution stopped = solve_under_cap(dp, objective, memory, cap, cut);
      if (stopped.cut_off) {
        ++cut_offs;
        CHECK(stopped.lower_bound >= cut.cutoff);
        CHECK(stopped.lower_bound <= correct.best_cost * (1 + 1e-12));
        CHECK(stopped.memory <= cap);  // still a strategy that fits
        CHECK(stopped.cost == objective.evaluate(stopped.choice));
      } else {
        CHECK(stopped.cost == correct.best_cost);  // the optimum without a cap fits: nothing to stop
      }
      // Below the optimum without the cap, the first DP already reaches the
      // cutoff: stopped there, with the least-memory strategy (it fits).
      cut.cutoff = unconstrained * 0.5;
      const CappedSolution first = solve_under_cap(dp, objective, memory, cap, cut);
      if (first.cut_off) {
        ++first_dp_cut_offs;
        CHECK(first.lower_bound >= cut.cutoff);
        CHECK(first.lower_bound <= correct.best_cost * (1 + 1e-12));
        CHECK(first.memory <= cap);
        CHECK(first.memory == plan_memory(memory, first.choice).total());
        CHECK(first.cost == objective.evaluate(first.choice));
      } else {
        CHECK(first.cost == correct.best_cost);  // the optimum without a cap fits
      }
      cut.cutoff = correct.best_cost * (1 + 1e-6);
      const CappedSolution beyond = solve_under_cap(dp, objective, memory, cap, cut);
      CHECK_FALSE(beyond.cut_off);
      CHECK(beyond.cost == correct.best_cost);
      // A first price (a like search's root price, here twice this one's):
      // its bound holds at any price, and the walk it starts still ends at
      // the optimum.
      if (root.root_price <= 0) continue;
      cut.first_price = 2 * root.root_price;
      const CappedSolution hinted = solve_under_cap(dp, objective, memory, cap, cut);
      CHECK_FALSE(hinted.cut_off);
      CHECK(hinted.cost == correct.best_cost);
      CHECK(hinted.lower_bound <= correct.best_cost * (1 + 1e-12));
      cut.cutoff = root.lower_bound * (1 - 1e-9);
      const CappedSolution hinted_stop = solve_under_cap(dp, objective, memory, cap, cut);
      hinted_cut_offs += hinted_stop.cut_off;
      CHECK(hinted_stop.lower_bound <= correct.best_cost * (1 + 1e-12));
      CHECK(hinted_stop.memory <= cap);
      CHECK(hinted_stop.cost == objective.evaluate(hinted_stop.choice));
      if (!hinted_stop.cut_off) CHECK(hinted_stop.cost == correct.best_cost);
    }
  }
  CHECK(cases == test::sanitized_rounds(60) * 9);  // 9 caps a round
  CHECK(cut_offs > 0);
  CHECK(first_dp_cut_offs > 0);
  CHECK(hinted_cut_offs > 0);
  CHECK(below_optimum_roots > 0);  // the random cases do exercise the branch and bound
}

TEST_CASE("solve_under_cap: caps honoured on the zoo") {
  // Caps between each graph's least memory and its optimum's; a short search
  // (the test checks what every answer must be, not how close it gets).
  struct Case {
    const char* graph;
    int64_t devices;
  };
  for (const Case c : {Case{"alexnet", 8}, Case{"alexnet", 64}, Case{"rnnlm", 8}, Case{"rnnlm", 64},
                       Case{"inception3", 8}, Case{"transformer", 8}}) {
    CAPTURE(c.graph);
    CAPTURE(c.devices);
    Graph graph = load_graph(test::source_path(std::string("data/graphs/") + c.graph + ".json"));
    Machine machine;
    machine.devices = c.devices;
    CostTables tables = build_cost_tables(graph, machine);
    MemoryTables memory = build_memory_tables(graph, tables, {});
    MemoryPricedDp dp(graph, tables, memory, SolveOptions{});
    const Solution plain = solve(tables.objective, graph.vertex_names(), SolveOptions{});
    const double optimum = plain.cost;
    const PricedPoint uncapped = dp.solve(0.0);
    CHECK(uncapped.choice == plain.choice);  // a price of 0 is the plain DP
    const uint64_t least = dp.least_bytes(), need = uncapped.memory;
    REQUIRE(least < need);
    for (double f : {0.0, 0.3, 0.9}) {
      const uint64_t cap = least + static_cast<uint64_t>(f * static_cast<double>(need - least));
      CAPTURE(cap);
      CappedSolution result = solve_under_cap(dp, tables.objective, memory, cap, node_budget(2));
      REQUIRE(result.feasible);
      CHECK(result.memory <= cap);
      CHECK(result.memory == plan_memory(memory, result.choice).total());
      CHECK(result.cost >= optimum * (1 - 1e-9));
      CHECK(result.lower_bound >= optimum * (1 - 1e-9));
      CHECK(result.lower_bound <= result.cost * (1 + 1e-12));
    }
    // At the optimum's own memory the cap changes nothing.
    CappedSolution same = solve_under_cap(dp, tables.objective, memory, need);
    CHECK(same.choice == uncapped.choice);
    CHECK(same.gap == 0.0);
  }
}

// A deep model of repeated blocks: the priced DP folds them (equal blocks
// stay equal under any price) and the mix DP runs over the same plan. Folded
// and unfolded searches each bound the other's answer from below, every
// answer fits, and at the root the mix DP's answer is never worse than the
// walk's and the moves' alone (it only adds candidates).
TEST_CASE("solve_under_cap: folded repeated blocks, with and without the mix DP") {
  const LlmShape shape = {/*layers=*/8, /*d_model=*/64, /*heads=*/4, /*kv_heads=*/4, /*ff=*/256, /*seq=*/16,
                          /*vocab=*/100, /*batch=*/2};
  const Graph graph = build_graph(build_llm_graph(LlmFamily::Gpt, shape, "gpt"), "gpt.json");
  Machine machine;
  machine.devices = 8;
  CostTables tables = build_cost_tables(graph, machine);
  MemoryTables memory = build_memory_tables(graph, tables, {});
  SolveOptions unfolded_options;
  unfolded_options.fold = false;
  MemoryPricedDp folded(graph, tables, memory, SolveOptions{});
  MemoryPricedDp unfolded(graph, tables, memory, unfolded_options);
  const uint64_t least = folded.least_bytes(), need = folded.solve(0.0).memory;
  REQUIRE(least < need);
  for (double f : {0.2, 0.5, 0.8}) {
    const uint64_t cap = least + static_cast<uint64_t>(f * static_cast<double>(need - least));
    CAPTURE(cap);
    CapOptions no_mix = node_budget(4);
    no_mix.mix_work = 0;
    const CappedSolution a = solve_under_cap(folded, tables.objective, memory, cap, node_budget(4));
    const CappedSolution b = solve_under_cap(unfolded, tables.objective, memory, cap, node_budget(4));
    const CappedSolution c = solve_under_cap(folded, tables.objective, memory, cap, no_mix);
    for (const CappedSolution* r : {&a, &b, &c}) {
      REQUIRE(r->feasible);
      CHECK(r->memory <= cap);
      CHECK(r->memory == plan_memory(memory, r->choice).total());
      CHECK(r->cost == tables.objective.evaluate(r->choice));
      CHECK(r->gap == doctest::Approx(relative_gap(r->cost, r->lower_bound)));
      for (const CappedSolution* other : {&a, &b, &c}) CHECK(r->lower_bound <= other->cost * (1 + 1e-12));
    }
    CHECK(a.root_lower_bound == doctest::Approx(b.root_lower_bound).epsilon(1e-12));
    CapOptions root_no_mix = node_budget(0);
    root_no_mix.mix_work = 0;
    CHECK(solve_under_cap(folded, tables.objective, memory, cap, node_budget(0)).cost <=
          solve_under_cap(folded, tables.objective, memory, cap, root_no_mix).cost);
  }
}

// The search's budget is work, not time: the same cap gives the same answer,
// bound and gap every time.
TEST_CASE("solve_under_cap: a work budget gives the same answer every run") {
  Graph graph = load_graph(test::source_path("data/graphs/inception3.json"));
  Machine machine;
  machine.devices = 8;
  CostTables tables = build_cost_tables(graph, machine);
  MemoryTables memory = build_memory_tables(graph, tables, {});
  MemoryPricedDp dp(graph, tables, memory, SolveOptions{});
  const uint64_t least = dp.least_bytes(), need = dp.solve(0.0).memory;
  const uint64_t cap = least + (need - least) / 2;
  CapOptions budget;
  budget.max_search_work = 12 * dp.plan().tables.total_work;  // 12 DP runs of branch and bound
  CappedSolution first = solve_under_cap(dp, tables.objective, memory, cap, budget);
  for (int run = 0; run < 2; ++run) {
    CappedSolution again = solve_under_cap(dp, tables.objective, memory, cap, budget);
    CHECK(again.choice == first.choice);
    CHECK(again.lower_bound == first.lower_bound);
    CHECK(again.gap == first.gap);
    CHECK(again.nodes == first.nodes);
  }
  CHECK(first.memory <= cap);
}

TEST_CASE("pase solve --memory-per-device: refusals") {
  const std::string alexnet = test::source_path("data/graphs/alexnet.json");
  SUBCASE("a cap below the least memory: exit 3, the least memory, and the plan that reaches it") {
    const std::string out = test::write_temp_file("least.json", "");
    test::CommandResult r = test::run_pase("solve " + alexnet + " -p 8 --memory-per-device 100MB --out " + out);
    CHECK(r.status == 3);
    CHECK(r.error ==
          "error: refused: no strategy fits in 100000000 bytes (0.09 GiB) per device: the least any strategy needs is "
          "186001600 bytes (0.17 GiB)\n");
    CHECK(r.output.empty());
    test::CommandResult check = test::run_pase("solve " + alexnet + " -p 8 --memory-per-device 186001600 --json");
    REQUIRE(check.status == 0);
    CHECK(check.output.find("\"per_device_bytes\":186001600,\"cap_bytes\":186001600") != std::string::npos);
    std::string written = test::run_pase("evaluate " + alexnet + " -p 8 --strategy " + out + " --json").output;
    CHECK(written.find("\"per_device_bytes\":186001600") != std::string::npos);
  }
  SUBCASE("a malformed size: exit 2, one line") {
    test::CommandResult r = test::run_pase("solve " + alexnet + " -p 8 --memory-per-device 16GiBs");
    CHECK(r.status == 2);
    CHECK(r.error ==
          "error: --memory-per-device: expected a size such as 80GB, 80G, 16GiB, 16Gi, 512MiB or a number of bytes, got '16GiBs'\n");
  }
  SUBCASE("a bad dtype: exit 2, one line") {
    test::CommandResult r = test::run_pase("solve " + alexnet + " -p 8 --dtype fp8");
    CHECK(r.status == 2);
    CHECK(r.error == "error: --dtype: expected fp32, tf32, bf16 or fp16, got 'fp8'\n");
  }
}

TEST_CASE("solve_under_cap: equals brute force on a priced graph under each training setup") {
  // x -> fc1 -> a -> b -> res = fc1 + b -> fc2 on 4 devices: few enough strategies to enumerate.
  Graph graph = test::residual_block();
  graph.vertices[1].recompute = graph.vertices[2].recompute = true;  // what --recompute full marks here
  Machine machine;
  machine.devices = 4;
  for (int zero = 0; zero <= kMaxZeroStage; ++zero) {
    for (int64_t micro_batches : {1, 2}) {
      TrainingSetup setup{Dtype::Bf16, Optimizer::Adam};
      setup.zero = zero;
      setup.micro_batches = micro_batches;
      const CostTables tables = build_cost_tables(graph, PaseCostModel(machine, setup));
      const MemoryTables memory = build_memory_tables(graph, tables, setup);
      MemoryPricedDp dp(graph, tables, memory, SolveOptions{});
      const Exhaustive everything = exhaustive(tables.objective, memory, ~uint64_t{0});
      for (double f : {0.0, 0.2, 0.5, 0.8}) {
        CAPTURE(zero);
        CAPTURE(micro_batches);
        CAPTURE(f);
        const uint64_t cap = everything.least_bytes + static_cast<uint64_t>(f * 400);
        const Exhaustive correct = exhaustive(tables.objective, memory, cap);
        const CappedSolution result = solve_under_cap(dp, tables.objective, memory, cap, node_budget(1 << 20));
        REQUIRE(result.feasible);
        CHECK(result.memory <= cap);
        CHECK(result.cost == doctest::Approx(correct.best_cost).epsilon(1e-12));
        CHECK(result.gap == 0.0);
      }
    }
  }
}

// Past the exact DP's limits the capped search runs over a relaxation
// (memorycap/relaxed_cap.h): its bound must hold for the true objective and
// its answer fit the cap, which brute force on the true objective checks.
TEST_CASE("solve_under_cap over a relaxation: a true bound and an answer that fits, against brute force") {
  std::mt19937 rng(20261127);
  int relaxed = 0, cases = 0;
  for (int round = 0; round < 40; ++round) {
    const Objective objective = test::random_objective(rng, 4 + static_cast<int>(rng() % 4), 5, round % 2 == 1);
    const MemoryTables memory = test::random_memory(rng, objective, 100, 50);
    const std::vector<std::string> names = test::vertex_names(objective.vertex_count());
    const EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::GenerateSeq, objective.config_counts());
    BoundedOptions options;  // tables a third of the exact DP's: some edges relaxed
    options.target_table_bytes = std::max<uint64_t>(1, measure_tables(objective, plan, 1).total_bytes / 3);
    Relaxation relaxation;
    try {
      relaxation = relax_to_fit(objective, names, options);
    } catch (const ResourceError&) {
      continue;  // no relaxation fits so small a target
    }
    relaxed += relaxation.relaxed_edges > 0;
    MemoryPricedDp dp(relaxation.objective, names, memory, SolveOptions{});
    const Exhaustive everything = exhaustive(objective, memory, ~uint64_t{0});
    for (double f : {0.0, 0.2, 0.5, 0.8}) {
      const uint64_t cap = everything.least_bytes + static_cast<uint64_t>(f * 300);
      const Exhaustive correct = exhaustive(objective, memory, cap);
      const Exhaustive loose = exhaustive(relaxation.objective, memory, cap);
      CAPTURE(round);
      CAPTURE(cap);
      ++cases;
      CHECK(loose.best_cost <= correct.best_cost);  // no strategy costs more relaxed
      const CappedSolution result = on_true_objective(
          solve_under_cap(dp, relaxation.objective, memory, cap, node_budget(1 << 20)), objective, memory);
      REQUIRE(result.feasible);
      CHECK(result.memory <= cap);
      CHECK(result.memory == plan_memory(memory, result.choice).total());
      CHECK(result.cost == objective.evaluate(result.choice));
      CHECK(result.cost >= correct.best_cost);
      CHECK(result.lower_bound <= correct.best_cost * (1 + 1e-12));
      CHECK(result.gap == relative_gap(result.cost, result.lower_bound));
    }
  }
  CHECK(relaxed >= 10);
  CHECK(cases >= 40);
}
