// Per-layer techniques (solve/layer_techniques.h): each vertex's least cost
// over its configurations and techniques, against fresh pricings of the
// graph with every vertex set to each variant in turn.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/machine_profile.h"
#include "graphs/llm_zoo.h"
#include "graphs/recompute.h"
#include "solve/layer_techniques.h"
#include "test_support.h"

using namespace pase;

TEST_CASE("least_vertex_costs_with_techniques: each vertex's least over every variant it may take, as fresh "
          "pricings of each variant price it") {
  LlmShape shape;
  shape.layers = 2, shape.d_model = 64, shape.heads = 4, shape.kv_heads = 4, shape.ff = 256, shape.seq = 16;
  shape.vocab = 128, shape.batch = 8;
  const Graph graph = build_graph(build_llm_graph(LlmFamily::Gpt, shape, "gpt"), "gpt.json");
  const MachineProfile profile = parse_machine_profile(test::kTestMachineProfile, "m.json");
  CalibratedOptions options;
  options.training.optimizer = Optimizer::Adam;
  const CalibratedCostModel model(profile, 8, options);
  TrainingSetup setup;
  setup.optimizer = Optimizer::Adam;
  setup.zero = kZeroAuto;
  setup.recompute = Recompute::Auto;
  const std::vector<double> least =
      least_vertex_costs_with_techniques(graph, model, build_cost_tables(graph, model), setup);
  REQUIRE(least.size() == graph.vertices.size());
  // Recomputation only off the block boundaries; ZeRO 0 to 3 everywhere.
  const std::vector<char> boundary = block_boundaries(graph);
  std::vector<double> expected(graph.vertices.size(), std::numeric_limits<double>::infinity());
  for (bool recompute : {false, true})
    for (int zero = 0; zero <= 3; ++zero) {
      Graph variant = graph;
      for (Vertex& vertex : variant.vertices) vertex.recompute = recompute, vertex.zero = zero;
      const CostTables fresh = build_cost_tables(variant, model);
      for (size_t v = 0; v < expected.size(); ++v) {
        if (recompute && boundary[v]) continue;
        const auto& costs = fresh.objective.vertex_cost[v];
        expected[v] = std::min(expected[v], *std::min_element(costs.begin(), costs.end()));
      }
    }
  for (size_t v = 0; v < least.size(); ++v) {
    CAPTURE(graph.vertices[v].name);
    CHECK(least[v] == doctest::Approx(expected[v]).epsilon(1e-12));
  }
}
