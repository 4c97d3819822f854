// Memory discipline of the DP: a cost table is freed as soon as the vertex
// reading it is done, argmins take the narrowest unsigned type that holds a
// vertex's configuration count, the working buffers a table is computed with
// count in the peak and in the plan's bound, and the peak is what --stats
// reports.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/cost_tables.h"
#include "dp/objective.h"
#include "base/error.h"
#include "graphs/zoo.h"
#include "dp/dp.h"
#include "dp/ordering.h"
#include "test_support.h"

using namespace pase;

namespace {

DpResult run_dp(const Objective& objective, const EliminationPlan& plan, int threads) {
  DpOptions options;
  options.threads = threads;
  return solve_dp(objective, plan, std::vector<std::string>(objective.vertex_count(), "v"), options);
}

// A path 0 - 1 - ... - (n-1), every vertex with `configs` configurations,
// every configuration its own class, random costs.
Objective path_objective(int n, int configs, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> cost(1.0, 100.0);
  Objective objective;
  for (int v = 0; v < n; ++v) {
    std::vector<double> row(static_cast<size_t>(configs));
    for (double& c : row) c = cost(rng);
    objective.vertex_cost.push_back(std::move(row));
  }
  for (int v = 0; v + 1 < n; ++v) {
    PairCost pair;
    pair.u = v;
    pair.v = v + 1;
    std::vector<int32_t> classes(static_cast<size_t>(configs));
    for (int s = 0; s < configs; ++s) classes[static_cast<size_t>(s)] = s;
    pair.u_class = pair.v_class = classes;
    pair.u_classes = pair.v_classes = configs;
    auto matrix = std::make_shared<std::vector<double>>(static_cast<size_t>(configs) * configs);
    for (double& c : *matrix) c = cost(rng);
    pair.cost = std::move(matrix);
    objective.pairs.push_back(std::move(pair));
  }
  return objective;
}

}  // namespace

TEST_CASE("measure_tables and solve_dp: argmins in the narrowest type, one cost table alive at a time") {
  // Unconnected vertices: each table is one entry, its cost freed as soon as
  // it is written (the vertex is a whole component), its argmin kept.
  Objective objective;
  for (size_t configs : {256, 257, 65536, 65537}) {
    std::vector<double> cost(configs, 5.0);
    cost[configs - 1] = 1.0;  // the last configuration is the cheapest
    objective.vertex_cost.push_back(cost);
  }
  EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::GenerateSeq, objective.config_counts());
  const uint64_t argmin_bytes = 1 + 2 + 2 + 4;  // up to 256 configurations: 1 byte; 65536: 2; more: 4
  // Working buffers: a table's one compact argmin (4 bytes) while it is
  // filled, and the thread's two rows over the most configurations.
  const uint64_t compact_argmin = sizeof(uint32_t), fill_rows = 2 * 65537 * sizeof(double);
  const TablePlan sizes = measure_tables(objective, plan);
  CHECK(sizes.table_bytes == 4 * sizeof(double) + argmin_bytes);
  CHECK(sizes.working_bytes == compact_argmin + fill_rows);
  CHECK(sizes.total_bytes == sizes.table_bytes + sizes.working_bytes);
  DpResult result = run_dp(objective, plan, 1);
  CHECK(result.cost == 4.0);
  CHECK(result.choice == std::vector<int32_t>{255, 256, 65535, 65536});
  CHECK(result.stats.peak_table_bytes == argmin_bytes + sizeof(double) + compact_argmin + fill_rows);
}

TEST_CASE("solve_dp: a table is freed once the vertex reading it is done") {
  constexpr int kVertices = 6, kConfigs = 5;
  Objective objective = path_objective(kVertices, kConfigs, 7);
  EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::GenerateSeq, objective.config_counts());
  // GenerateSeq walks the path from vertex 0: each table is over the next vertex.
  REQUIRE(plan.order == std::vector<int>{0, 1, 2, 3, 4, 5});
  const uint64_t table = kConfigs * sizeof(double), argmins = kConfigs * 1;
  const uint64_t all_at_once = (kVertices - 1) * (table + argmins) + (sizeof(double) + 1);
  // Vertex v < 5 computes its table with: the rows of its edge to v + 1 (one
  // per class of v + 1, every configuration its own class), the class digit
  // of each configuration of v + 1 and a row pointer per digit, and one
  // compact argmin per entry (no compact costs: 5 class digits, 5 entries).
  const uint64_t edge_rows = kConfigs * kConfigs * sizeof(double);
  const uint64_t digits = kConfigs * sizeof(int32_t), pointers = kConfigs * sizeof(const double*);
  const uint64_t working = edge_rows + digits + pointers + kConfigs * sizeof(uint32_t);
  // The one thread's fill buffers: two rows of 5 configurations, one digit,
  // and an offset and a row pointer for each of at most 2 factors (an edge
  // and a waiting table).
  const uint64_t fill = 2 * kConfigs * sizeof(double) + sizeof(uint64_t) + 2 * (sizeof(uint64_t) + sizeof(const double*));
  // The bound cannot know the class digits are all distinct: it allows
  // compact costs too.
  const uint64_t working_bound = working + kConfigs * sizeof(double);
  const TablePlan sizes = measure_tables(objective, plan);
  CHECK(sizes.table_bytes == all_at_once);
  CHECK(sizes.working_bytes == working_bound + fill);
  CHECK(sizes.total_bytes == all_at_once + working_bound + fill);

  // One thread: the peak is while vertex 4 fills its table and vertex 3's is
  // still read: every argmin so far, two cost tables (not all of them), and
  // vertex 4's working buffers and the thread's.
  DpResult serial = run_dp(objective, plan, 1);
  CHECK(serial.stats.peak_table_bytes == (kVertices - 1) * argmins + 2 * table + working + fill);
  CHECK(serial.stats.peak_table_bytes < sizes.total_bytes);
  for (int threads : {2, 4}) {
    DpResult parallel = run_dp(objective, plan, threads);
    CHECK(parallel.cost == serial.cost);
    CHECK(parallel.choice == serial.choice);
    CHECK(parallel.stats.peak_table_bytes >= (kVertices - 1) * argmins + table + working + fill);
    CHECK(parallel.stats.peak_table_bytes <= measure_tables(objective, plan, threads).total_bytes);
  }
}

TEST_CASE("solve_dp: the table byte limit covers the working buffers") {
  Objective objective = path_objective(6, 5, 11);
  EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::GenerateSeq, objective.config_counts());
  const TablePlan sizes = measure_tables(objective, plan);
  REQUIRE(sizes.working_bytes > 0);
  DpOptions options;
  options.threads = 1;
  const std::vector<std::string> names(objective.vertex_count(), "v");
  // Room for every table but not for the buffers they are computed with.
  options.max_table_bytes = sizes.table_bytes;
  CHECK_THROWS_AS((void)solve_dp(objective, plan, names, options), ResourceError);
  options.max_table_bytes = sizes.total_bytes - 1;
  CHECK_THROWS_AS((void)solve_dp(objective, plan, names, options), ResourceError);
  options.max_table_bytes = sizes.total_bytes;
  CHECK(solve_dp(objective, plan, names, options).stats.peak_table_bytes <= sizes.total_bytes);
}

TEST_CASE("solve_dp: the peak never exceeds the plan's bound, whatever the thread count") {
  for (const char* name : {"inception3", "transformer"}) {
    CAPTURE(name);
    Graph graph = build_graph(build_zoo_graph(name, 32), name);
    Machine machine;
    machine.devices = 8;
    const CostTables tables = build_cost_tables(graph, machine);
    const Objective& objective = tables.objective;
    EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::MinDegree, objective.config_counts());
    for (int threads : {1, 2, 4}) {
      CAPTURE(threads);
      const TablePlan sizes = measure_tables(objective, plan, threads);
      CHECK(sizes.threads == threads);
      for (int repeat = 0; repeat < 3; ++repeat) {
        const DpResult result = run_dp(objective, plan, threads);
        CHECK(result.stats.peak_table_bytes <= sizes.total_bytes);
      }
    }
  }
}

TEST_CASE("pase solve --stats reports the peak table bytes the strategy file records, and peak resident memory") {
  const std::string out = test::write_temp_file("peak.json", "");
  auto result = test::run_pase("solve " + test::source_path("data/graphs/transformer.json") +
                               " --devices 8 --threads 1 --stats --timings -o " + out);
  REQUIRE(result.status == 0);
  const std::string label = "peak table bytes ";
  const size_t at = result.output.find(label);
  REQUIRE(at != std::string::npos);
  const uint64_t reported = std::stoull(result.output.substr(at + label.size()));
  std::ifstream file(out);
  const nlohmann::json strategy = nlohmann::json::parse(file);
  CHECK(reported == strategy["solver"]["peak_table_bytes"].get<uint64_t>());
  // Below what every table alive at once would take (8 bytes of cost an entry alone).
  CHECK(reported > 0);
  CHECK(reported < strategy["solver"]["table_entries"].get<uint64_t>() * sizeof(double));
#if defined(__linux__)
  // Every live table entry is written, so the process held at least that much.
  const std::string resident_label = "peak resident memory ";
  const size_t resident_at = result.output.find(resident_label);
  REQUIRE(resident_at != std::string::npos);
  CHECK(std::stoull(result.output.substr(resident_at + resident_label.size())) >= reported);
#endif
}
