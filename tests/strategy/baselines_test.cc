// Baselines and MCMC: every strategy is valid, priced like the DP, and never
// cheaper than the DP optimum (the key invariant of `pase compare`).
#include <doctest/doctest.h>

#include <cmath>

#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "strategy/baselines.h"
#include "strategy/mcmc.h"
#include "dp/solve.h"
#include "test_support.h"

using namespace pase;

namespace {

struct Priced {
  Graph graph;
  CostTables tables;
};

Priced price(const std::string& zoo_name, int64_t devices) {
  Priced out;
  out.graph = load_graph(test::source_path("data/graphs/" + zoo_name + ".json"));
  Machine machine;
  machine.devices = devices;
  out.tables = build_cost_tables(out.graph, machine);
  return out;
}

std::vector<int32_t> config_of(const Priced& priced, const std::vector<int32_t>& choice, const std::string& name) {
  int v = priced.graph.find_vertex(name);
  REQUIRE(v >= 0);
  const int32_t* c = priced.tables.configs[v][choice[v]];
  return std::vector<int32_t>(c, c + priced.tables.configs[v].rank);
}

bool same_cost(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

TEST_CASE("run_baseline: valid and never cheaper than the DP optimum on the zoo") {
  McmcOptions mcmc;
  mcmc.max_iterations = 30000;
  for (const char* name : {"alexnet", "inception3", "resnet101", "rnnlm", "transformer"}) {
    for (int64_t p : {4, 8, 16, 32}) {
      CAPTURE(name);
      CAPTURE(p);
      Priced priced = price(name, p);
      Solution optimum = solve(priced.tables.objective, priced.graph.vertex_names(), SolveOptions{});
      double data_parallel = 0.0;
      for (const std::string& baseline : baseline_names()) {
        CAPTURE(baseline);
        BaselineResult result = run_baseline(baseline, priced.graph, priced.tables, mcmc);
        if (!result.applicable) {
          CHECK(result.choice.empty());
          continue;
        }
        REQUIRE(result.choice.size() == priced.graph.vertices.size());
        for (size_t v = 0; v < result.choice.size(); ++v) {
          CHECK(result.choice[v] >= 0);
          CHECK(static_cast<size_t>(result.choice[v]) < priced.tables.configs[v].size());
        }
        CHECK(same_cost(result.cost, priced.tables.objective.evaluate(result.choice)));
        PaseCostModel model(priced.tables.machine);
        CHECK(same_cost(result.cost, evaluate_strategy_direct(priced.graph, priced.tables, model, result.choice)));
        CHECK(result.cost >= optimum.cost * (1 - 1e-9));
        if (baseline == "data-parallel") data_parallel = result.cost;
        if (baseline == "mcmc") CHECK(result.cost <= data_parallel);  // it starts there and keeps the best
      }
    }
  }
}

TEST_CASE("data_parallel_choice") {
  SUBCASE("alexnet, p = 8: batch split 8 ways everywhere") {
    Priced priced = price("alexnet", 8);
    std::vector<int32_t> choice = data_parallel_choice(priced.graph, priced.tables);
    CHECK(config_of(priced, choice, "conv1") == std::vector<int32_t>{8, 1, 1, 1, 1, 1, 1});
    CHECK(config_of(priced, choice, "pool5") == std::vector<int32_t>{8, 1, 1, 1});
    CHECK(config_of(priced, choice, "flat/ravel") == std::vector<int32_t>{8, 1, 1, 1});
    CHECK(config_of(priced, choice, "fc6") == std::vector<int32_t>{8, 1, 1});
    CHECK(config_of(priced, choice, "loss") == std::vector<int32_t>{8, 1});
    double result = priced.tables.objective.evaluate(choice);
    double correct = test::baseline_cost("data-parallel", "alexnet", 8);
    CHECK(same_cost(result, correct));
  }
  SUBCASE("alexnet, p = 64: the cutoff 4 caps batch 128 at 32 ways") {
    Priced priced = price("alexnet", 64);
    std::vector<int32_t> choice = data_parallel_choice(priced.graph, priced.tables);
    CHECK(config_of(priced, choice, "conv1") == std::vector<int32_t>{32, 1, 1, 1, 1, 1, 1});
    CHECK(config_of(priced, choice, "fc8") == std::vector<int32_t>{32, 1, 1});
  }
  SUBCASE("rnnlm: lstm splits 'b', embedding 'a'") {
    Priced priced = price("rnnlm", 8);
    std::vector<int32_t> choice = data_parallel_choice(priced.graph, priced.tables);
    CHECK(config_of(priced, choice, "lstm") == std::vector<int32_t>{1, 1, 8, 1, 1});
    CHECK(config_of(priced, choice, "embedding") == std::vector<int32_t>{8, 1, 1, 1});
  }
  SUBCASE("transformer: the stacked projection splits 'b', not 's'") {
    Priced priced = price("transformer", 8);
    std::vector<int32_t> choice = data_parallel_choice(priced.graph, priced.tables);
    int v = priced.graph.find_vertex("decoder/layer0/cross/qkv");
    REQUIRE(v >= 0);
    CHECK(priced.tables.models[v].letters.substr(0, 2) == "sb");
    CHECK(config_of(priced, choice, "decoder/layer0/cross/qkv")[1] == 8);
    CHECK(config_of(priced, choice, "decoder/layer0/cross/stack") == std::vector<int32_t>{1, 8, 1, 1});
    CHECK(config_of(priced, choice, "encoder/layer0/self/unstack") == std::vector<int32_t>{1, 8, 1, 1, 1});
  }
}

TEST_CASE("owt_choice") {
  Priced priced = price("alexnet", 8);
  std::vector<int32_t> choice = owt_choice(priced.graph, priced.tables);
  CHECK(config_of(priced, choice, "conv5") == std::vector<int32_t>{8, 1, 1, 1, 1, 1, 1});
  for (const char* fc : {"fc6", "fc7", "fc8"}) CHECK(config_of(priced, choice, fc) == std::vector<int32_t>{1, 8, 1});
  double result = priced.tables.objective.evaluate(choice);
  double correct = test::baseline_cost("owt", "alexnet", 8);
  CHECK(same_cost(result, correct));
}

TEST_CASE("megatron_choice") {
  Priced priced = price("transformer", 8);
  SUBCASE("m = p, n = 1 is data parallelism") {
    double result = priced.tables.objective.evaluate(megatron_choice(priced.graph, priced.tables, 8, 1));
    double correct = priced.tables.objective.evaluate(data_parallel_choice(priced.graph, priced.tables));
    CHECK(same_cost(result, correct));
  }
  SUBCASE("m = 2, n = 4 splits heads, ff and vocab 4 ways") {
    std::vector<int32_t> choice = megatron_choice(priced.graph, priced.tables, 2, 4);
    // "ble,shek->sbhlk": domain s b h l k e
    CHECK(config_of(priced, choice, "encoder/layer0/self/qkv") == std::vector<int32_t>{1, 2, 4, 1, 1, 1});
    // softmax keeps the logits' layout (b, h split)
    CHECK(config_of(priced, choice, "encoder/layer0/self/softmax") == std::vector<int32_t>{2, 4, 1, 1});
    // row-parallel "bhlk,hek->ble": domain b l e h k, h is reduced
    CHECK(config_of(priced, choice, "encoder/layer0/self/out") == std::vector<int32_t>{2, 1, 1, 4, 1});
    CHECK(config_of(priced, choice, "encoder/layer0/self/norm") == std::vector<int32_t>{2, 1, 1});
    CHECK(config_of(priced, choice, "encoder/layer0/ff/ff1") == std::vector<int32_t>{2, 1, 4, 1});
    CHECK(config_of(priced, choice, "decoder/logits") == std::vector<int32_t>{2, 1, 4, 1});
    CHECK(config_of(priced, choice, "encoder/embedding") == std::vector<int32_t>{2, 1, 1, 4});
  }
  SUBCASE("run_baseline picks the best m") {
    BaselineResult result = run_baseline("megatron", priced.graph, priced.tables, McmcOptions{});
    for (int64_t m : {1, 2, 4, 8})
      CHECK(result.cost <= priced.tables.objective.evaluate(megatron_choice(priced.graph, priced.tables, m, 8 / m)));
  }
  SUBCASE("only transformer-like graphs") {
    CHECK(is_transformer_like(priced.graph));
    Priced alexnet = price("alexnet", 8);
    CHECK_FALSE(is_transformer_like(alexnet.graph));
    BaselineResult result = run_baseline("megatron", alexnet.graph, alexnet.tables, McmcOptions{});
    CHECK_FALSE(result.applicable);
    CHECK(result.note == "not transformer-like (no einsum with a head letter 'h')");
  }
}

TEST_CASE("run_baseline: unknown name") {
  Priced priced = price("alexnet", 4);
  try {
    (void)run_baseline("owtt", priced.graph, priced.tables, McmcOptions{});
    FAIL("expected an InputError");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()) ==
          "unknown strategy 'owtt' (did you mean 'owt'?); choose data-parallel, owt, megatron, fsdp or mcmc");
  }
}

TEST_CASE("mcmc_search") {
  Priced priced = price("alexnet", 16);
  std::vector<int32_t> start = data_parallel_choice(priced.graph, priced.tables);
  double optimum = solve(priced.tables.objective, priced.graph.vertex_names(), SolveOptions{}).cost;
  SUBCASE("deterministic for a seed") {
    McmcOptions options;
    options.seed = 7;
    McmcResult a = mcmc_search(priced.tables.objective, start, options);
    McmcResult b = mcmc_search(priced.tables.objective, start, options);
    CHECK(a.choice == b.choice);
    CHECK(a.cost == b.cost);
    CHECK(a.iterations == b.iterations);
    CHECK(a.accepted == b.accepted);
  }
  SUBCASE("between the optimum and the start, for several seeds") {
    double start_cost = priced.tables.objective.evaluate(start);
    for (uint64_t seed : {1, 2, 3, 4, 5}) {
      McmcOptions options;
      options.seed = seed;
      McmcResult result = mcmc_search(priced.tables.objective, start, options);
      CHECK(result.cost >= optimum * (1 - 1e-9));
      CHECK(result.cost <= start_cost);
      CHECK(result.cost == priced.tables.objective.evaluate(result.choice));
      CHECK(result.improvements > 0);
    }
  }
  SUBCASE("stopping rules") {
    McmcOptions options;
    options.max_iterations = 0;
    McmcResult none = mcmc_search(priced.tables.objective, start, options);
    CHECK(none.choice == start);
    CHECK(none.iterations == 0);
    options.max_iterations = 1000;
    options.min_iterations = 1000000;
    McmcResult budget = mcmc_search(priced.tables.objective, start, options);
    CHECK(budget.iterations == 1000);
    CHECK(budget.stop == McmcStop::Iterations);
    options.max_iterations = 10000000;
    options.min_iterations = 100;
    McmcResult stale = mcmc_search(priced.tables.objective, start, options);
    CHECK(stale.stop == McmcStop::NoImprovement);
    CHECK(stale.iterations < options.max_iterations);
  }
  SUBCASE("reaches the optimum of alexnet at p = 8 (seed 1, default budget)") {
    Priced alexnet = price("alexnet", 8);
    McmcResult result =
        mcmc_search(alexnet.tables.objective, data_parallel_choice(alexnet.graph, alexnet.tables), McmcOptions{});
    double correct = test::zoo_optimum("alexnet", 8);
    CHECK(same_cost(result.cost, correct));
  }
}
