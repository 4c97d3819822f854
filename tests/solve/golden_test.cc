// The golden optima of tests/expected/zoo_optima.json (with the strategies
// recorded there), and the committed zoo files matching what the builders write.
#include <doctest/doctest.h>

#include <cmath>

#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "graphs/zoo.h"
#include "dp/solve.h"
#include "test_support.h"
#include "base/text_file.h"

using namespace pase;

TEST_CASE("solve: golden optima of tests/expected/zoo_optima.json") {
  const std::vector<test::Golden>& entries = test::goldens("zoo_optima");
  REQUIRE(!entries.empty());
  for (const test::Golden& golden : entries) {
    CAPTURE(golden.graph);
    CAPTURE(golden.devices);
    REQUIRE(golden.strategy == "pase");
    REQUIRE(golden.cost_model == "pase");
    Graph graph = load_graph(test::source_path(golden.file));
    CHECK(graph.name == golden.graph);
    Machine machine;
    machine.devices = golden.devices;
    machine.flops_tflops = golden.flops_tflops;
    machine.bandwidth_gbps = golden.bandwidth_gbps;
    CostTables tables = build_cost_tables(graph, machine);
    Solution solution = solve(tables.objective, graph.vertex_names(), SolveOptions{});
    double result = solution.cost;
    double correct = golden.total_cost;
    CHECK(std::fabs(result - correct) <= 1e-9 * correct);
    // Where the strategy is recorded, every layer's configuration is checked.
    if (golden.layers.empty()) continue;
    CHECK(graph.vertices.size() == golden.layers.size());
    for (const auto& [name, config] : golden.layers) {
      CAPTURE_BOUND(name);
      int v = graph.find_vertex(name);
      REQUIRE(v >= 0);
      const int32_t* c = tables.configs[v][solution.choice[v]];
      CHECK(std::vector<int32_t>(c, c + tables.configs[v].rank) == config);
    }
  }
}

TEST_CASE("solve: the golden optima include alexnet p = 8 and rnnlm p = 16, alexnet's strategy recorded") {
  CHECK(test::golden("zoo_optima", "alexnet", 8).layers.size() == 14);
  CHECK(test::golden("zoo_optima", "rnnlm", 16).total_cost > 0);
}

TEST_CASE("zoo: committed graph files equal what the builders write") {
  for (const ZooEntry& entry : zoo_entries()) {
    CAPTURE(entry.name);
    std::string correct = write_graph_file(build_zoo_graph(entry.name, entry.default_batch));
    std::string result = read_text_file(test::source_path("data/graphs/" + entry.name + ".json"));
    CHECK(result == correct);
  }
}

TEST_CASE("zoo: graph sizes") {
  auto vertices = [](const std::string& name) {
    return build_graph(build_zoo_graph(name, 8), name).vertices.size();
  };
  CHECK(vertices("alexnet") == 14);
  CHECK(vertices("rnnlm") == 4);
  // 2 + 6 x 12 (encoder) + 2 + 6 x 21 (decoder) + 2
  CHECK(vertices("transformer") == 204);
  // stem 3 + 33 blocks x 7 + 4 shortcut x 2 + 3 head
  CHECK(vertices("resnet101") == 3 + 33 * 7 + 4 * 2 + 3);
}
