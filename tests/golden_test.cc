// The two golden optima of cost-model.md, the AlexNet p=8 strategy, and the
// committed zoo files matching what the builders write.
#include <doctest/doctest.h>

#include <cmath>

#include "costmodel/cost_tables.h"
#include "graphs/graph_file.h"
#include "graphs/zoo.h"
#include "solver/solve.h"
#include "test_support.h"

using namespace pase;

namespace {

Solution solve_file(const std::string& relative, int64_t devices, const CostTables** out_tables = nullptr) {
  static Graph graph;
  static CostTables tables;
  graph = load_graph(test::source_path(relative));
  Machine machine;
  machine.devices = devices;
  tables = build_cost_tables(graph, machine);
  if (out_tables) *out_tables = &tables;
  return solve(graph, tables, SolveOptions{});
}

}  // namespace

TEST_CASE("solve: golden optima of cost-model.md") {
  SUBCASE("alexnet, batch 128, p = 8") {
    double result = solve_file("data/graphs/alexnet.json", 8).cost;
    double correct = 97098296512.0;
    CHECK(std::fabs(result - correct) <= 1e-9 * correct);
  }
  SUBCASE("rnnlm, batch 64, p = 16") {
    double result = solve_file("data/graphs/rnnlm.json", 16).cost;
    double correct = 2476066881536.0;
    CHECK(std::fabs(result - correct) <= 1e-9 * correct);
  }
}

TEST_CASE("solve: alexnet p = 8 strategy") {
  const CostTables* tables = nullptr;
  Solution solution = solve_file("data/graphs/alexnet.json", 8, &tables);
  Graph graph = load_graph(test::source_path("data/graphs/alexnet.json"));
  auto config_of = [&](const std::string& name) {
    int v = graph.find_vertex(name);
    REQUIRE(v >= 0);
    const int32_t* c = tables->configs[v][solution.choice[v]];
    return std::vector<int32_t>(c, c + tables->configs[v].rank);
  };
  for (const char* name : {"conv1", "conv2", "conv3", "conv4", "conv5"})
    CHECK(config_of(name) == std::vector<int32_t>{8, 1, 1, 1, 1, 1, 1});
  for (const char* name : {"pool1", "pool2", "pool5"}) CHECK(config_of(name) == std::vector<int32_t>{8, 1, 1, 1});
  CHECK(config_of("fc6") == std::vector<int32_t>{1, 2, 4});
  CHECK(config_of("fc7") == std::vector<int32_t>{1, 4, 2});
  CHECK(config_of("fc8") == std::vector<int32_t>{1, 2, 4});
  CHECK(graph.vertices.size() == 14);
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
