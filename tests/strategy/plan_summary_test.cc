// The strategy in one line (strategy/plan_summary.h): the weight GEMMs' data
// and tensor ways, where on the nodes each runs once placed, and the
// techniques, for strategies chosen by hand.
#include <doctest/doctest.h>

#include <algorithm>

#include "costmodel/cost_tables.h"
#include "plans/mesh.h"
#include "strategy/plan_summary.h"
#include "test_support.h"

using namespace pase;

namespace {

// Two weight GEMMs (fc: dims b, n, k) and a loss without weights.
Graph mlp() { return test::two_layer_mlp(256, 256, 512, 256); }

// The index of `config` among vertex v's configurations.
int32_t index_of(const CostTables& tables, size_t v, std::vector<int32_t> config) {
  const ConfigSet& set = tables.configs[v];
  for (size_t s = 0; s < set.size(); ++s)
    if (std::equal(config.begin(), config.end(), set[s])) return static_cast<int32_t>(s);
  FAIL("no configuration");
  return -1;
}

}  // namespace

TEST_CASE("plan_summary: data and tensor ways of the weight GEMMs, then the techniques") {
  const Graph graph = mlp();
  Machine machine;
  machine.devices = 8;
  const CostTables tables = build_cost_tables(graph, machine);
  auto choice = [&](std::vector<int32_t> fc1, std::vector<int32_t> fc2) {
    return std::vector<int32_t>{index_of(tables, 0, fc1), index_of(tables, 1, fc2), index_of(tables, 2, {1, 1})};
  };
  const TrainingSetup plain;
  CHECK(plan_summary(graph, tables, choice({8, 1, 1}, {8, 1, 1}), plain, nullptr) == "data 8");
  CHECK(plan_summary(graph, tables, choice({1, 8, 1}, {1, 1, 8}), plain, nullptr) == "tensor 8");
  CHECK(plan_summary(graph, tables, choice({2, 4, 1}, {2, 1, 4}), plain, nullptr) == "tensor 4 x data 2");
  CHECK(plan_summary(graph, tables, choice({8, 1, 1}, {1, 8, 1}), plain, nullptr) ==
        "mixed: 2 patterns over 2 weight GEMMs (data 8 on 1; tensor 8 on 1)");
  CHECK(plan_summary(graph, tables, choice({1, 1, 1}, {1, 1, 1}), plain, nullptr) == "one device");
  TrainingSetup setup;
  setup.zero = 1;
  setup.recompute = Recompute::Full;
  setup.micro_batches = 4;
  CHECK(plan_summary(graph, tables, choice({8, 1, 1}, {8, 1, 1}), setup, nullptr) ==
        "data 8, ZeRO-1, recompute full, 4 micro-batches");

  SUBCASE("placed on two nodes of four: which part of each runs inside a node") {
    Plan plan;
    plan.mesh = parse_mesh("node=2,gpu=4", 8, 4);
    plan.layers.resize(3);
    plan.layers[0].mesh_axes = {{0}, {1}, {}};  // batch across the nodes, n inside them
    plan.layers[1].mesh_axes = {{0}, {}, {1}};
    plan.layers[2].mesh_axes = {{}, {}};
    CHECK(plan_summary(graph, tables, choice({2, 4, 1}, {2, 1, 4}), plain, &plan) ==
          "tensor 4 (inside nodes) x data 2 (across nodes)");
    plan.layers[0].mesh_axes = {{1, 0}, {}, {}};  // the batch over both: 4 inside x 2 across
    plan.layers[1].mesh_axes = {{1, 0}, {}, {}};
    CHECK(plan_summary(graph, tables, choice({8, 1, 1}, {8, 1, 1}), plain, &plan) ==
          "data 8 (4 inside nodes x 2 across)");
    plan.mesh.devices_per_node = 8;  // one node: nothing said of nodes
    CHECK(plan_summary(graph, tables, choice({8, 1, 1}, {8, 1, 1}), plain, &plan) == "data 8");
  }
}

TEST_CASE("plan_summary: splits that leave the weight whole are the sequence's") {
  // proj (ble,ef->blf): b the batch, l the sequence, e and f the weight's; head (fc bnk) has no sequence.
  const Graph graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "name": "rows", "cutoff": 1,
    "tensors": {"x": [8, 16, 32], "w": [32, 64]}, "parameters": ["w"],
    "nodes": [{"name": "proj", "op": "einsum", "equation": "ble,ef->blf", "inputs": ["x", "w"]},
              {"name": "flat", "op": "reshape", "inputs": ["proj"], "shape": [8, -1]},
              {"name": "head", "op": "fc", "inputs": ["flat"], "units": 16}]})");
  Machine machine;
  machine.devices = 8;
  const CostTables tables = build_cost_tables(graph, machine);
  REQUIRE(tables.models[0].letters == "blfe");
  REQUIRE(tables.models[3].letters == "bnk");  // after the reshape's two halves
  auto choice = [&](std::vector<int32_t> proj, std::vector<int32_t> head) {
    return std::vector<int32_t>{index_of(tables, 0, proj), index_of(tables, 1, {1, 1, 1}), index_of(tables, 2, {1, 1}),
                                index_of(tables, 3, head)};
  };
  const TrainingSetup plain;
  CHECK(plan_summary(graph, tables, choice({2, 4, 1, 1}, {2, 4, 1}), plain, nullptr) ==
        "mixed: 2 patterns over 2 weight GEMMs (sequence 4 x data 2 on 1; tensor 4 x data 2 on 1)");
  CHECK(plan_summary(graph, tables, choice({2, 2, 2, 1}, {2, 1, 2}), plain, nullptr) ==
        "mixed: 2 patterns over 2 weight GEMMs (tensor 2 x data 2 on 1; tensor 2 x sequence 2 x data 2 on 1)");
  CHECK(plan_summary(graph, tables, choice({1, 8, 1, 1}, {1, 1, 1}), plain, nullptr) ==
        "mixed: 2 patterns over 2 weight GEMMs (one device on 1; sequence 8 on 1)");
  // The contraction e is the weight's too: a split of it is tensor parallelism, as of f.
  CHECK(plan_summary(graph, tables, choice({2, 1, 1, 4}, {2, 4, 1}), plain, nullptr) == "tensor 4 x data 2");

  Plan plan;  // two nodes of four: the sequence inside them, the batch across
  plan.mesh = parse_mesh("node=2,gpu=4", 8, 4);
  plan.layers.resize(4);
  plan.layers[0].mesh_axes = {{0}, {1}, {}, {}};
  plan.layers[1].mesh_axes = {{}, {}, {}};
  plan.layers[2].mesh_axes = {{}, {}};
  plan.layers[3].mesh_axes = {{0}, {}, {}};
  CHECK(plan_summary(graph, tables, choice({2, 4, 1, 1}, {2, 1, 1}), plain, &plan) ==
        "mixed: 2 patterns over 2 weight GEMMs (data 2 (across nodes) on 1; sequence 4 (inside nodes) x data 2 (across "
        "nodes) on 1)");
}
