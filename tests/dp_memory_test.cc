// Memory discipline of the DP: a cost table is freed as soon as the vertex
// reading it is done, argmins take the narrowest unsigned type that holds a
// vertex's configuration count, and the peak is what --stats reports.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/objective.h"
#include "solver/dp.h"
#include "solver/ordering.h"
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
  objective.vertex_cost.assign(n, std::vector<double>(configs));
  for (auto& row : objective.vertex_cost)
    for (double& c : row) c = cost(rng);
  for (int v = 0; v + 1 < n; ++v) {
    PairCost pair;
    pair.u = v;
    pair.v = v + 1;
    for (int s = 0; s < configs; ++s) {
      pair.u_class.push_back(s);
      pair.v_class.push_back(s);
    }
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
  CHECK(measure_tables(objective, plan).total_bytes == 4 * sizeof(double) + argmin_bytes);
  DpResult result = run_dp(objective, plan, 1);
  CHECK(result.cost == 4.0);
  CHECK(result.choice == std::vector<int32_t>{255, 256, 65535, 65536});
  CHECK(result.stats.peak_table_bytes == argmin_bytes + sizeof(double));
}

TEST_CASE("solve_dp: a table is freed once the vertex reading it is done") {
  constexpr int kVertices = 6, kConfigs = 5;
  Objective objective = path_objective(kVertices, kConfigs, 7);
  EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::GenerateSeq, objective.config_counts());
  // GenerateSeq walks the path from vertex 0: each table is over the next vertex.
  REQUIRE(plan.order == std::vector<int>{0, 1, 2, 3, 4, 5});
  const uint64_t table = kConfigs * sizeof(double), argmins = kConfigs * 1;
  const uint64_t all_at_once = (kVertices - 1) * (table + argmins) + (sizeof(double) + 1);
  CHECK(measure_tables(objective, plan).total_bytes == all_at_once);

  // One thread: the peak is while vertex 4 fills its table and vertex 3's is
  // still read: every argmin so far and two cost tables, not all of them.
  DpResult serial = run_dp(objective, plan, 1);
  CHECK(serial.stats.peak_table_bytes == (kVertices - 1) * argmins + 2 * table);
  CHECK(serial.stats.peak_table_bytes < all_at_once);
  for (int threads : {2, 4}) {
    DpResult parallel = run_dp(objective, plan, threads);
    CHECK(parallel.cost == serial.cost);
    CHECK(parallel.choice == serial.choice);
    CHECK(parallel.stats.peak_table_bytes >= (kVertices - 1) * argmins + table);
    CHECK(parallel.stats.peak_table_bytes <= all_at_once);
  }
}

TEST_CASE("pase solve --stats reports the peak table bytes the strategy file records, and peak resident memory") {
  const std::string out = test::write_temp_file("peak.json", "");
  auto result = test::run_pase("solve " + test::source_path("data/graphs/transformer.json") +
                               " --devices 8 --threads 1 --stats -o " + out);
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
