// The cost-memory frontier: costs fall as memory rises, its ends are the
// least-memory strategy and the optimum without a cap, points found by the
// DP are optimal under a cap of their own memory and every bound holds
// (against brute force on random objectives); and `pase frontier` writes it.
#include <doctest/doctest.h>

#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "memorycap/memory_frontier.h"
#include "dp/solve.h"
#include "random_objective.h"
#include "test_support.h"
#include "base/text_file.h"

using namespace pase;

namespace {

// The cheapest strategy within `cap` bytes, by enumeration (infinity if none fits).
double best_within(const Objective& objective, const MemoryTables& memory, uint64_t cap) {
  const size_t n = objective.vertex_count();
  std::vector<int32_t> choice(n, 0);
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    if (plan_memory(memory, choice).total() <= cap) best = std::min(best, objective.evaluate(choice));
    size_t i = 0;
    for (; i < n; ++i) {
      if (++choice[i] < static_cast<int32_t>(objective.config_count(i))) break;
      choice[i] = 0;
    }
    if (i == n) return best;
  }
}

void check_shape(const std::vector<FrontierPoint>& frontier) {
  REQUIRE(!frontier.empty());
  for (size_t i = 1; i < frontier.size(); ++i) {
    CHECK(frontier[i].bytes.total() > frontier[i - 1].bytes.total());
    CHECK(frontier[i].cost < frontier[i - 1].cost);
  }
  CHECK(frontier.front().on_hull);
  CHECK(frontier.back().on_hull);
}

}  // namespace

TEST_CASE("memory_frontier: against brute force on random objectives") {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    CAPTURE(round);
    const Objective objective = test::random_objective(rng, 2 + static_cast<int>(rng() % 5), 5, round % 2 == 0);
    MemoryTables memory;
    memory.offset.push_back(0);
    for (size_t v = 0; v < objective.vertex_count(); ++v) {
      for (size_t s = 0; s < objective.config_count(v); ++s) {
        memory.weights.push_back(rng() % 60);
        memory.activations.push_back(rng() % 60);
      }
      memory.offset.push_back(memory.weights.size());
    }
    std::vector<std::string> names(objective.vertex_count(), "v");
    MemoryPricedDp dp(objective, names, memory, SolveOptions{});
    const std::vector<FrontierPoint> frontier = memory_frontier(dp, objective, memory);
    check_shape(frontier);
    std::vector<int32_t> unused;
    CHECK(frontier.back().cost == test::brute_force(objective, unused));
    CHECK(frontier.front().bytes.total() == dp.least_bytes());
    CHECK(frontier.front().cost == best_within(objective, memory, dp.least_bytes()));
    for (const FrontierPoint& point : frontier) {
      const double correct = best_within(objective, memory, point.bytes.total());
      CHECK(point.lower_bound <= correct);
      if (point.on_hull) CHECK(point.cost == correct);
      CHECK(point.cost == objective.evaluate(point.choice));
    }
  }
}

TEST_CASE("memory_frontier: alexnet at p = 8 from the least memory to the optimum") {
  Graph graph = load_graph(test::source_path("data/graphs/alexnet.json"));
  Machine machine;
  machine.devices = 8;
  CostTables tables = build_cost_tables(graph, machine);
  MemoryTables memory = build_memory_tables(graph, tables, {});
  MemoryPricedDp dp(graph, tables, memory, SolveOptions{});
  const std::vector<FrontierPoint> frontier = memory_frontier(dp, tables.objective, memory);
  check_shape(frontier);
  const Solution optimum = solve(tables.objective, graph.vertex_names(), SolveOptions{});
  CHECK(frontier.back().cost == doctest::Approx(test::zoo_optimum("alexnet", 8)).epsilon(1e-12));
  CHECK(frontier.back().bytes.total() == plan_memory(memory, optimum.choice).total());
  CHECK(frontier.front().bytes.total() == dp.least_bytes());
  CHECK(frontier.front().bytes.total() == 186001600);  // as `pase solve` refuses a smaller cap with
  CHECK(frontier.size() > 10);
}

TEST_CASE("pase frontier: table, CSV, JSON and SVG") {
  const std::string csv = test::write_temp_file("frontier.csv", ""), json = test::write_temp_file("frontier.json", "");
  const std::string svg = test::write_temp_file("frontier.svg", "");
  test::CommandResult r = test::run_pase("frontier " + test::source_path("data/graphs/alexnet.json") +
                                         " -p 8 --csv " + csv + " --json " + json + " --svg " + svg);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("alexnet on 8 devices: cost-memory frontier, cost model pase (flop), fp32, adam\n") == 0);
  // The table in units; the JSON and CSV keep the exact numbers (below).
  CHECK(r.output.find("    0         0.173         186001600   4.07 TFLOP    41.929x          0  dp\n") != std::string::npos);
  CHECK(r.output.find("   97.1 GFLOP     1.000x          0  dp\n") != std::string::npos);
  auto doc = nlohmann::json::parse(read_text_file(json));
  CHECK(doc["format"] == "pase-frontier");
  CHECK(doc["points"].front()["per_device_bytes"] == 186001600);
  CHECK(doc["points"].front()["cost"] == 4071282273472.0);
  CHECK(doc["points"].back()["cost"].get<double>() == doctest::Approx(test::zoo_optimum("alexnet", 8)).epsilon(1e-12));
  const std::string table = read_text_file(csv);
  CHECK(table.find("graph,devices,point,per_device_bytes,memory_gib,weights_bytes,activations_bytes,cost,unit,"
                   "lower_bound_cost,gap,on_hull\nalexnet,8,0,186001600,") == 0);
  const std::string chart = read_text_file(svg);
  CHECK(chart.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") == 0);
  CHECK(chart.find("memory per device (GiB)") != std::string::npos);
  CHECK(chart.find("cost (TFLOP per step)") != std::string::npos);
  CHECK(chart.substr(chart.size() - 7) == "</svg>\n");
  // A marker per point: hull points filled, points found by moves hollow, and both in the legend.
  size_t filled = 0, hollow = 0;
  for (size_t at = chart.find("<circle"); at != std::string::npos; at = chart.find("<circle", at + 1)) {
    const std::string circle = chart.substr(at, chart.find('>', at) - at);
    if (circle.find("fill=\"white\"") != std::string::npos) ++hollow;
    else ++filled;
  }
  size_t on_hull = 0;
  for (const auto& point : doc["points"]) on_hull += point["on_hull"].get<bool>();
  CHECK(filled == on_hull + 1);  // and the legend's
  CHECK(hollow == doc["points"].size() - on_hull + 1);
  CHECK(hollow >= 2);
  CHECK(chart.find(">on the hull: the least within its memory</text>") != std::string::npos);
  CHECK(chart.find(">found by moves, within its gap</text>") != std::string::npos);
  CHECK(chart.find("a device's memory for training") == std::string::npos);  // no machine given
}

TEST_CASE("pase frontier --machine: the device's memory for training as a line, or said to lie off the chart") {
  const std::string made = test::write_temp_file(
      "frontier_13b.json", test::run_pase("models export gpt3-13b --batch 8").output);
  const std::string svg = test::write_temp_file("frontier_13b.svg", "");
  REQUIRE(test::run_pase("frontier " + made + " -p 8 --machine dgx-a100 --dtype bf16 --svg " + svg).status == 0);
  const std::string chart = read_text_file(svg);
  // 80 GB less the default reserve, within the points' 64-145 GiB: the line and its value.
  CHECK(chart.find("stroke-dasharray=\"2,3\"/>") != std::string::npos);
  CHECK(chart.find(">75.1 GiB</text>") != std::string::npos);
  CHECK(chart.find(">a device's memory for training: 75.1 GiB</text>") != std::string::npos);
  // Every point needs more than it (llama2-7b at batch 16, 182-267 GiB): said in the legend.
  const std::string llama = test::write_temp_file(
      "frontier_7b.json", test::run_pase("models export llama2-7b --batch 16").output);
  REQUIRE(test::run_pase("frontier " + llama + " -p 8 --machine dgx-a100 --dtype bf16 --svg " + svg).status == 0);
  CHECK(read_text_file(svg).find(">a device's memory for training: 75.1 GiB, left of the chart</text>") !=
        std::string::npos);
}
