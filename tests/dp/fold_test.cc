// Folding repeated blocks changes nothing but the work. The DP's own folding
// (dp/fold.h) gives the unfolded optimum and strategy bit for bit; the
// transfer-table folding (dp/chain_fold.h) gives the unfolded optimum up
// to the order of summation (relative 1e-9) with a strategy that prices at
// it, the same on any thread count. Checked on the zoo, on language models
// and on random deep objectives built from one block.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "base/error.h"
#include "graphs/llm_zoo.h"
#include "dp/block_table_cache.h"
#include "dp/bounded_solve.h"
#include "dp/chain_fold.h"
#include "dp/dp.h"
#include "dp/fold.h"
#include "dp/solve.h"
#include "random_objective.h"
#include "test_support.h"

using namespace pase;

namespace {

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

// A small GPT of `layers` identical blocks.
Graph tiny_gpt(int64_t layers) {
  LlmShape shape;
  shape.layers = layers;
  shape.d_model = 64;
  shape.heads = 4;
  shape.kv_heads = 4;
  shape.ff = 256;
  shape.seq = 16;
  shape.vocab = 100;
  shape.batch = 8;
  return build_graph(build_llm_graph(LlmFamily::Gpt, shape, "gpt"), "gpt");
}

Machine sixteen_devices() {
  Machine machine;
  machine.devices = 16;
  return machine;
}

bool near(double result, double correct) { return std::fabs(result - correct) <= 1e-9 * std::fabs(correct); }

std::vector<std::string> vertex_names(const Objective& objective) {
  std::vector<std::string> names;
  for (size_t v = 0; v < objective.vertex_count(); ++v) names.push_back("v" + std::to_string(v));
  return names;
}

}  // namespace

TEST_CASE("chain folding: random deep objectives with one- and two-vertex separators, against the unfolded DP") {
  std::mt19937 rng(99);
  int folded = 0, two_vertex = 0;
  for (int trial = 0; trial < 80; ++trial) {
    CAPTURE(trial);
    const int separators = 1 + trial % 2;
    Objective objective = test::repeated_blocks(rng, 3 + static_cast<int>(rng() % 4), 3 + static_cast<int>(rng() % 9), separators);
    const std::vector<std::string> names = vertex_names(objective);
    const EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::MinDegree, objective.config_counts());
    DpOptions plain;
    plain.threads = 1;
    const DpResult correct = solve_dp(objective, plan, names, plain);
    std::optional<ChainFold> chain = find_chain(objective);
    if (!chain) continue;
    ++folded;
    if (chain->separator.size() == 2) ++two_vertex;
    CHECK(chain->blocks >= 2);
    std::optional<ChainSolution> first;
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      DpOptions options;
      options.threads = threads;
      std::optional<ChainSolution> result = solve_chained(objective, names, options, OrderKind::MinDegree);
      REQUIRE(result.has_value());
      CHECK(near(result->result.cost, correct.cost));
      CHECK(near(objective.evaluate(result->result.choice), result->result.cost));
      if (!first) first = std::move(result);
      else {
        CHECK(result->result.cost == first->result.cost);  // deterministic whatever the thread count
        CHECK(result->result.choice == first->result.choice);
      }
    }
    // With a block cache the rest's parts that hang off the run's two ends
    // (here the prefix with the first block, and the suffix) are solved on
    // their own and kept: the same optimum, and the second solve, from the
    // cache, the first's to the bit.
    DpOptions cached;
    cached.threads = 1;
    cached.block_tables = std::make_shared<BlockTableCache>();
    std::optional<ChainSolution> fresh;
    for (int again = 0; again < 2; ++again) {
      CAPTURE(again);
      std::optional<ChainSolution> result = solve_chained(objective, names, cached, OrderKind::MinDegree);
      REQUIRE(result.has_value());
      CHECK(near(result->result.cost, correct.cost));
      CHECK(near(objective.evaluate(result->result.choice), result->result.cost));
      if (!fresh) fresh = std::move(result);
      else {
        CHECK(result->result.cost == fresh->result.cost);
        CHECK(result->result.choice == fresh->result.choice);
        CHECK(cached.block_tables->hits() >= 3);  // the block, T^k and what hangs off the first separator
      }
    }
  }
  MESSAGE("chain-folded " << folded << " of 80, " << two_vertex << " with two-vertex separators");
  CHECK(folded >= 60);
  CHECK(two_vertex >= 20);
}

TEST_CASE("chain folding: a one-vertex separator's run, worked by hand") {
  // prefix - [a - s] - [a - s] - [a - s] - suffix: each block a vertex `a` and
  // its separator `s`; T is the same for every block, so three blocks fold.
  Objective objective;
  objective.vertex_cost = {{0, 4}, {1, 0}, {0, 2}, {1, 0}, {0, 2}, {1, 0}, {0, 2}, {3, 0}};
  auto identity = [] { return std::vector<int32_t>{0, 1}; };
  auto cross = std::make_shared<std::vector<double>>(std::vector<double>{0, 5, 5, 0});  // 5 unless equal
  for (int v = 0; v + 1 < 8; ++v) {
    PairCost pair;
    pair.u = v;
    pair.v = v + 1;
    pair.u_class = pair.v_class = identity();
    pair.u_classes = pair.v_classes = 2;
    pair.cost = cross;
    objective.pairs.push_back(pair);
  }
  std::optional<ChainFold> chain = find_chain(objective);
  REQUIRE(chain.has_value());
  CHECK(chain->period == 2);
  CHECK(chain->blocks == 3);
  CHECK(chain->separator == std::vector<int>{1});
  DpOptions options;
  options.threads = 1;
  std::optional<ChainSolution> result = solve_chained(objective, vertex_names(objective), options, OrderKind::MinDegree);
  REQUIRE(result.has_value());
  // Everything at configuration 0 costs 1 + 1 + 1 + 3 = 6; switching to 1 once
  // (5) and staying there saves at most 3 at the end: 6 is optimal.
  CHECK(result->result.cost == 6);
  CHECK(result->result.choice == std::vector<int32_t>(8, 0));
  CHECK(objective.evaluate(result->result.choice) == 6);
}

TEST_CASE("chain folding: the tables of a deeper model grow by a few bytes per block") {
  // A GPT of 6 and of 24 layers: the same block, the same separator, so the
  // same block tables; the chain holds one argmin per block and separator
  // configuration more (4 bytes each).
  auto plan = [](int64_t layers) {
    return plan_only(build_cost_tables(tiny_gpt(layers), sixteen_devices()).objective, OrderKind::MinDegree, 1, true);
  };
  const Solution shallow = plan(6), deep = plan(24);
  REQUIRE(shallow.chains.size() == 1);
  REQUIRE(deep.chains.size() == 1);
  CHECK(deep.chains[0].fold.blocks == 24);
  CHECK(deep.chains[0].block_entries == shallow.chains[0].block_entries);
  const uint64_t c = deep.chains[0].fold.separator_configs;
  CHECK(deep.tables.table_bytes - shallow.tables.table_bytes == 18 * c * sizeof(int32_t));
}

TEST_CASE("build_cost_tables: a deeper model's identical blocks share their tables") {
  // Copies of a block hold the first copy's arrays (vertex costs,
  // configurations, class maps, matrices, memory bytes): 24 layers hold no
  // more table bytes than 6.
  const Graph shallow_graph = tiny_gpt(6), deep_graph = tiny_gpt(24);
  const CostTables shallow = build_cost_tables(shallow_graph, sixteen_devices());
  const CostTables deep = build_cost_tables(deep_graph, sixteen_devices());
  const TableFootprint a = table_footprint(shallow), b = table_footprint(deep);
  CHECK(a.arrays > 10);
  CHECK(b.arrays == a.arrays);
  CHECK(b.bytes == a.bytes);
  // Restated: the vertices of blocks 3 and 20 share storage with block 2's.
  std::optional<ChainFold> fold = find_chain(deep.objective);
  REQUIRE(fold.has_value());
  REQUIRE(fold->blocks >= 22);
  for (size_t o = 0; o < fold->period; ++o)
    for (size_t j : {size_t{3}, size_t{20}}) {
      const size_t v = fold->first + 2 * fold->period + o, w = fold->first + j * fold->period + o;
      CHECK(deep.objective.vertex_cost[w].shares_with(deep.objective.vertex_cost[v]));
      CHECK(deep.configs[w].splits.shares_with(deep.configs[v].splits));
      CHECK(deep.models.shared(w) == deep.models.shared(v));
    }
  // The bytes per device: one entry per configuration of each kind of vertex.
  const MemoryTables shallow_memory = build_memory_tables(shallow_graph, shallow, TrainingSetup{});
  const MemoryTables deep_memory = build_memory_tables(deep_graph, deep, TrainingSetup{});
  CHECK(deep_memory.weights.size() == shallow_memory.weights.size());
  for (size_t o = 0; o < fold->period; ++o) {  // shared entries: equal offsets for a block's copies
    const size_t v = fold->first + 2 * fold->period + o, w = fold->first + 20 * fold->period + o;
    CHECK(deep_memory.offset[w] == deep_memory.offset[v]);
  }
  // Same optimum as before sharing: a solve over the shared tables equals the unfolded DP's.
  SolveOptions options;
  options.dp.threads = 1;
  const Solution folded = solve(deep.objective, deep_graph.vertex_names(), options);
  options.fold = false;
  const Solution unfolded = solve(deep.objective, deep_graph.vertex_names(), options);
  CHECK(near(folded.cost, unfolded.cost));
}

TEST_CASE("chain folding: the limits count the whole folded solve") {
  // --max-work counts every DP's steps, C^3 per min-plus product and
  // back-substitution's; --max-table-bytes every part's tables with T and
  // T^k. Just below what plan_only reports refuses before solving (solve:
  // LimitError; solve_or_bound: the bounded solve); at it, it solves.
  const Graph graph = tiny_gpt(8);
  const CostTables tables = build_cost_tables(graph, sixteen_devices());
  const Solution sized = plan_only(tables.objective, OrderKind::MinDegree, 1, true);
  REQUIRE(sized.chains.size() == 1);
  const uint64_t c = sized.chains[0].fold.separator_configs;
  CHECK(sized.tables.total_work >= 3 * c * c * c + 8 * c * c);  // 8 = 2^3: three squarings
  CHECK(sized.tables.total_bytes >= sized.tables.table_bytes + sized.tables.working_bytes);
  CHECK(sized.tables.table_bytes >= 4 * c * c * sizeof(double));
  SolveOptions options;
  options.dp.threads = 1;
  options.fold = false;
  const double correct = solve(tables.objective, graph.vertex_names(), options).cost;
  options.fold = true;
  for (const char* limit : {"max_work", "max_table_bytes"}) {
    CAPTURE(limit);
    SolveOptions below = options, at = options;
    if (std::string(limit) == "max_work") {
      below.dp.max_work = sized.tables.total_work - 1;
      at.dp.max_work = sized.tables.total_work;
    } else {
      below.dp.max_table_bytes = sized.tables.total_bytes - 1;
      at.dp.max_table_bytes = sized.tables.total_bytes;
    }
    bool refused = false;
    try {
      (void)solve(tables.objective, graph.vertex_names(), below);
    } catch (const LimitError& error) {
      refused = true;
      CHECK(error.words().option == limit);
      CHECK(std::string(error.what()).find("; folded: ") != std::string::npos);
    }
    CHECK(refused);
    const Solution solved = solve(tables.objective, graph.vertex_names(), at);
    CHECK(solved.chains.size() == 1);
    CHECK(near(solved.cost, correct));
    CHECK(solved.stats.peak_table_bytes <= sized.tables.total_bytes);
    const Answer answer = solve_or_bound(tables.objective, graph.vertex_names(), below, /*exact=*/false);
    CHECK(answer.refusal.has_value());
    CHECK(answer.bounded.has_value());
    CHECK(answer.solution.cost >= correct * (1 - 1e-9));
  }
}

TEST_CASE("chain folding: one progress over the whole solve") {
  // The block's DP, the min-plus products, the rest's DP and back-substitution
  // report as one solve: against the planned totals, never going back, and
  // ending at them.
  const Graph graph = tiny_gpt(8);
  const CostTables tables = build_cost_tables(graph, sixteen_devices());
  std::vector<std::string> names;
  for (const Vertex& vertex : graph.vertices) names.push_back(vertex.name);
  DpOptions options;
  options.threads = 1;
  const std::optional<ChainSolution> sized = solve_chained(tables.objective, names, options, OrderKind::MinDegree, false);
  REQUIRE(sized.has_value());
  std::vector<DpProgress> seen;
  options.progress = [&](const DpProgress& progress) { seen.push_back(progress); };
  const std::optional<ChainSolution> solved = solve_chained(tables.objective, names, options, OrderKind::MinDegree);
  REQUIRE(solved.has_value());
  REQUIRE(!seen.empty());
  const uint64_t c = sized->folds[0].fold.separator_configs;
  // One block's tables, three products, the rest's DP, back-substitution.
  CHECK(sized->progress_tables == solved->progress_tables);
  CHECK(sized->progress_tables > 3 + 1);
  for (size_t i = 0; i < seen.size(); ++i) {
    CAPTURE(i);
    CHECK(seen[i].tables == sized->progress_tables);
    CHECK(seen[i].work == sized->tables.total_work);
    CHECK(seen[i].tables_done <= seen[i].tables);
    CHECK(seen[i].work_done <= seen[i].work);
    if (i > 0) {
      CHECK(seen[i].tables_done >= seen[i - 1].tables_done);
      CHECK(seen[i].work_done >= seen[i - 1].work_done);
    }
  }
  CHECK(seen.back().tables_done == seen.back().tables);
  CHECK(seen.back().work_done == seen.back().work);
  // The products' steps arrive as products: some report moves by exactly C^3.
  bool product_seen = false;
  for (size_t i = 1; i < seen.size(); ++i) product_seen = product_seen || seen[i].work_done - seen[i - 1].work_done == c * c * c;
  CHECK(product_seen);
}

TEST_CASE("pase solve --plan-only: the planned work is the folded solve's limit") {
  // The work --plan-only reports (products and back-substitution included)
  // is what --max-work must allow: one step less is refused (--exact: exit
  // status 3) or answered by a bounded solve, at it the folded solve runs.
  std::string file = test::write_temp_file("fold-budget.json", "");
  REQUIRE(test::run_pase("models export gpt --layers 8 --d-model 64 --heads 4 --ff 256 --seq 16 --vocab 100 --batch 8 -o " +
                         file).status == 0);
  const std::string solve = "solve " + file + " --devices 16 --no-plan --threads 1";
  test::CommandResult plan = test::run_pase(solve + " --plan-only --json");
  REQUIRE(plan.status == 0);
  const uint64_t work = nlohmann::json::parse(plan.output)["work"].get<uint64_t>();
  test::CommandResult at = test::run_pase(solve + " --stats --max-work " + std::to_string(work));
  CHECK(at.status == 0);
  CHECK(at.output.find("as one block's transfer table") != std::string::npos);
  test::CommandResult below = test::run_pase(solve + " --exact --max-work " + std::to_string(work - 1));
  CHECK(below.status == 3);
  CHECK(below.error == "error: refused: the DP would take " + std::to_string(work) +
                           " steps (table entries x configurations; folded: C^3 per min-plus product of transfer tables), "
                           "above the limit of " + std::to_string(work - 1) +
                           " (--max-work; about 10^9 steps per second per core); the largest table is vertex '" +
                           nlohmann::json::parse(plan.output)["largest_table_vertex"].get<std::string>() + "' with " +
                           std::to_string(nlohmann::json::parse(plan.output)["largest_table_entries"].get<uint64_t>()) +
                           " entries\n");
  test::CommandResult bounded = test::run_pase(solve + " --max-work " + std::to_string(work - 1));
  CHECK(bounded.status == 0);
  CHECK(bounded.error.find("note: the exact DP is past --max-work") == 0);
}

TEST_CASE("folding: random deep objectives made of one block, with one- and two-vertex separators") {
  std::mt19937 rng(1234);
  int folded = 0, tried = 0;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const int separators = 1 + trial % 2;
    Objective objective = test::repeated_blocks(rng, 3 + static_cast<int>(rng() % 4), 6 + static_cast<int>(rng() % 6), separators);
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
      Solution a = solve(tables.objective, graph.vertex_names(), unfolded);
      std::vector<int32_t> first_choice;
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        SolveOptions options;
        options.dp.threads = threads;
        Solution b = solve(tables.objective, graph.vertex_names(), options);
        CHECK((b.folding.has_value() || !b.chains.empty()) == c.folds);
        CHECK(near(b.cost, a.cost));
        CHECK(near(tables.objective.evaluate(b.choice), b.cost));
        if (b.chains.empty()) CHECK(a.choice == b.choice);  // the DP's own folding: bit for bit
        if (first_choice.empty()) first_choice = b.choice;
        else CHECK(b.choice == first_choice);
        if (c.folds) CHECK(b.tables.total_work < a.tables.total_work);
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
    for (int p : {4, 16, 64}) {
      CAPTURE(p);
      const std::string solve = "solve " + file + " --devices " + std::to_string(p) + " --no-plan";
      test::CommandResult folded = test::run_pase(solve + " --json");
      test::CommandResult unfolded = test::run_pase(solve + " --json --no-fold");
      REQUIRE(folded.status == 0);
      REQUIRE(unfolded.status == 0);
      const nlohmann::json a = nlohmann::json::parse(folded.output), b = nlohmann::json::parse(unfolded.output);
      CHECK(near(a["total_cost"].get<double>(), b["total_cost"].get<double>()));
      REQUIRE(a["layers"].size() == b["layers"].size());
      test::CommandResult stats = test::run_pase(solve + " --stats");
      // LLaMA's first layer reads the embedding unlike the others: the run
      // starts mid-layer 0 and holds 7 blocks.
      CHECK(stats.output.find(std::string("\nfolded: ") + (model[0] == 'g' ? "8" : "7") + " repeated blocks of ") != std::string::npos);
      CHECK(stats.output.find("as one block's transfer table") != std::string::npos);
      test::CommandResult dp_fold = test::run_pase(solve + " --stats --no-fold");
      CHECK(dp_fold.output.find("\nfolded: nothing") != std::string::npos);
    }
  }
}
