// Folding repeated blocks (solver/fold.h) changes nothing but the work: the
// same optimum, bit for bit, and the same strategy as the unfolded DP, on the
// zoo, on language models and on random deep objectives built from one block.
#include <doctest/doctest.h>

#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "costmodel/cost_tables.h"
#include "solver/dp.h"
#include "solver/fold.h"
#include "solver/solve.h"
#include "test_support.h"

using namespace pase;

namespace {

// `blocks` copies of one random block of `size` vertices between a prefix
// vertex and a suffix vertex. Inside a block, random edges go forward; the
// last `separators` vertices of a block feed random vertices of the next one
// (one vertex: a residual stream; two: a two-vertex separator). Copies share
// their matrices, as edges priced alike do.
Objective repeated_blocks(std::mt19937& rng, int size, int blocks, int separators) {
  Objective objective;
  std::vector<std::vector<double>> block_costs(static_cast<size_t>(size));
  for (auto& cost : block_costs) {
    cost.resize(2 + rng() % 3);
    for (double& c : cost) c = static_cast<double>(rng() % 1000);
  }
  auto matrix = [&](size_t rows, size_t cols) {
    auto m = std::make_shared<std::vector<double>>(rows * cols);
    for (double& c : *m) c = static_cast<double>(rng() % 500);
    return m;
  };
  auto identity = [](size_t configs) {
    std::vector<int32_t> map(configs);
    for (size_t i = 0; i < configs; ++i) map[i] = static_cast<int32_t>(i);
    return map;
  };
  objective.vertex_cost.push_back({5, 1, 7});  // prefix
  for (int b = 0; b < blocks; ++b)
    for (const auto& cost : block_costs) objective.vertex_cost.push_back(cost);
  objective.vertex_cost.push_back({3, 9});  // suffix
  const int suffix = 1 + size * blocks;
  auto add = [&](int u, int v, std::shared_ptr<const std::vector<double>> cost) {
    PairCost pair;
    pair.u = u;
    pair.v = v;
    pair.u_class = identity(objective.config_count(static_cast<size_t>(u)));
    pair.v_class = identity(objective.config_count(static_cast<size_t>(v)));
    pair.u_classes = static_cast<int32_t>(pair.u_class.size());
    pair.v_classes = static_cast<int32_t>(pair.v_class.size());
    pair.cost = std::move(cost);
    objective.pairs.push_back(std::move(pair));
  };
  // Inside a block: a path plus random forward edges.
  std::vector<std::tuple<int, int, std::shared_ptr<const std::vector<double>>>> inner, across;
  for (int i = 0; i + 1 < size; ++i) inner.emplace_back(i, i + 1, nullptr);
  for (int extra = 0; extra < size / 2; ++extra) {
    int a = static_cast<int>(rng() % static_cast<uint32_t>(size)), b = static_cast<int>(rng() % static_cast<uint32_t>(size));
    if (a != b) inner.emplace_back(std::min(a, b), std::max(a, b), nullptr);
  }
  for (int s = 0; s < separators; ++s) {
    const int from = size - 1 - s;
    across.emplace_back(from, static_cast<int>(rng() % static_cast<uint32_t>(size)), nullptr);
    if (rng() % 2) across.emplace_back(from, static_cast<int>(rng() % static_cast<uint32_t>(size)), nullptr);
  }
  for (auto& [a, b, m] : inner) m = matrix(block_costs[static_cast<size_t>(a)].size(), block_costs[static_cast<size_t>(b)].size());
  for (auto& [a, b, m] : across) m = matrix(block_costs[static_cast<size_t>(a)].size(), block_costs[static_cast<size_t>(b)].size());
  auto first_in = matrix(3, block_costs[0].size());
  auto last_out = matrix(block_costs[static_cast<size_t>(size - 1)].size(), 2);
  add(0, 1, first_in);
  for (int b = 0; b < blocks; ++b) {
    const int base = 1 + b * size;
    for (auto& [a, c, m] : inner) add(base + a, base + c, m);
    if (b + 1 < blocks)
      for (auto& [a, c, m] : across) add(base + a, base + size + c, m);
  }
  add(suffix - 1, suffix, last_out);
  return objective;
}

// Cost and choice of `objective` by the DP over `plan`, with and without the folding.
void check_folding_changes_nothing(const Objective& objective, const EliminationPlan& plan, const Folding& folding) {
  std::vector<std::string> names;
  for (size_t v = 0; v < objective.vertex_count(); ++v) names.push_back("v" + std::to_string(v));
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    DpOptions plain;
    plain.threads = threads;
    DpOptions folded = plain;
    folded.same_as = folding.same_as;
    DpResult a = solve_dp(objective, plan, names, plain);
    DpResult b = solve_dp(objective, plan, names, folded);
    CHECK(a.cost == b.cost);
    CHECK(a.choice == b.choice);
    CHECK(objective.evaluate(b.choice) == b.cost);
  }
}

}  // namespace

TEST_CASE("folding: random deep objectives made of one block, with one- and two-vertex separators") {
  std::mt19937 rng(1234);
  int folded = 0, tried = 0;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const int separators = 1 + trial % 2;
    Objective objective = repeated_blocks(rng, 3 + static_cast<int>(rng() % 4), 6 + static_cast<int>(rng() % 6), separators);
    const EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::MinDegree, objective.config_counts());
    std::optional<Folding> folding = find_folding(objective, plan);
    ++tried;
    if (!folding) continue;
    ++folded;
    CHECK(folding->followers > 0);
    for (size_t v = 0; v < folding->same_as.size(); ++v)
      if (folding->same_as[v] >= 0) CHECK(objective.vertex_cost[v] == objective.vertex_cost[static_cast<size_t>(folding->same_as[v])]);
    check_folding_changes_nothing(objective, plan, *folding);
  }
  MESSAGE("folded " << folded << " of " << tried);
  CHECK(folded >= tried / 2);
}

TEST_CASE("folding: the zoo's repeated blocks, same optimum and strategy") {
  struct Case {
    const char* graph;
    bool folds;
  };
  for (const Case& c : {Case{"transformer", true}, Case{"resnet101", true}, Case{"inception3", false}, Case{"alexnet", false}}) {
    Graph graph = load_graph(test::source_path(std::string("data/graphs/") + c.graph + ".json"));
    for (int64_t p : {4, 8, 16}) {
      CAPTURE(c.graph);
      CAPTURE(p);
      Machine machine;
      machine.devices = p;
      CostTables tables = build_cost_tables(graph, machine);
      SolveOptions unfolded;
      unfolded.fold = false;
      Solution a = solve(graph, tables, unfolded);
      for (int threads : {1, 2}) {
        SolveOptions options;
        options.dp.threads = threads;
        Solution b = solve(graph, tables, options);
        CHECK(b.folding.has_value() == c.folds);
        CHECK(a.cost == b.cost);
        CHECK(a.choice == b.choice);
        if (b.folding) CHECK(b.tables.total_work < a.tables.total_work);
      }
    }
  }
}

TEST_CASE("pase solve: language models fold, with the unfolded optimum; --stats says what") {
  for (const char* model : {"gpt --layers 8 --d-model 64 --heads 4 --ff 256 --seq 16 --vocab 100",
                            "llama --layers 8 --d-model 64 --heads 8 --kv-heads 2 --ff 160 --seq 16 --vocab 100"}) {
    CAPTURE(model);
    std::string file = test::write_temp_file("fold-model.json", "");
    REQUIRE(test::run_pase(std::string("models export ") + model + " --batch 8 -o " + file).status == 0);
    for (int p : {4, 16}) {
      CAPTURE(p);
      const std::string solve = "solve " + file + " --devices " + std::to_string(p) + " --no-plan";
      test::CommandResult folded = test::run_pase(solve + " --json");
      test::CommandResult unfolded = test::run_pase(solve + " --json --no-fold");
      REQUIRE(folded.status == 0);
      REQUIRE(unfolded.status == 0);
      const nlohmann::json a = nlohmann::json::parse(folded.output), b = nlohmann::json::parse(unfolded.output);
      CHECK(a["total_cost"] == b["total_cost"]);
      REQUIRE(a["layers"].size() == b["layers"].size());
      for (size_t i = 0; i < a["layers"].size(); ++i) CHECK(a["layers"][i]["config"] == b["layers"][i]["config"]);
      test::CommandResult stats = test::run_pase(solve + " --stats");
      CHECK(stats.output.find("folded: ") != std::string::npos);
      CHECK(stats.output.find(" of 8 repeated blocks of ") != std::string::npos);
    }
  }
}
