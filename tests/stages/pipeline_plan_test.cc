// A pipeline's plan (stages/pipeline_plan.h): each stage placed as a plain
// solve's placement would place its strategy on its own devices, the sends
// marked with what the model and the layouts move, and the step priced again
// with each stage's realized redistributions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/machine_profile.h"
#include "graphs/llm_zoo.h"
#include "plans/build_plan.h"
#include "plans/mesh.h"
#include "plans/stage_plans.h"
#include "solve/solve_request.h"
#include "stages/pipeline_document.h"
#include "stages/pipeline_plan.h"
#include "stages/pipeline_schedule.h"
#include "stages/pipeline_search.h"
#include "stages/stage_cuts.h"
#include "stages/stage_key.h"
#include "test_support.h"

using namespace pase;

namespace {

Graph small_gpt() {
  LlmShape shape;
  shape.layers = 4, shape.d_model = 64, shape.heads = 4, shape.kv_heads = 4, shape.ff = 256, shape.seq = 16;
  shape.vocab = 128, shape.batch = 8;
  return build_graph(build_llm_graph(LlmFamily::Gpt, shape, "gpt"), "gpt.json");
}

PipelineRequest calibrated_request(int stages, int64_t devices, int64_t micro_batches) {
  PipelineRequest request;
  request.stages = stages;
  request.devices = devices;
  request.stage.memory.micro_batches = micro_batches;
  const MachineProfile profile = parse_machine_profile(test::kTestMachineProfile, "test");
  request.make_model = [profile](const TrainingSetup& setup, int64_t n) -> std::unique_ptr<CostModel> {
    return std::make_unique<CalibratedCostModel>(profile, n, CalibratedOptions{setup});
  };
  return request;
}

}  // namespace

TEST_CASE("each stage is placed as a plain solve places its strategy, and the step is priced again as placed") {
  const Graph graph = small_gpt();
  for (int stages : {2, 4}) {
    CAPTURE(stages);
    const PipelineRequest request = calibrated_request(stages, 16, 4);
    const PipelineOutcome outcome = solve_pipeline(graph, request);
    REQUIRE(outcome.solved());
    const PipelinePlacement placement = place_pipeline(graph, outcome, request, 8);
    REQUIRE(placement.plan);
    const Plan& plan = *placement.plan;
    REQUIRE(plan.stages.size() == static_cast<size_t>(stages));
    CHECK(plan.mesh.shape.empty());
    std::vector<double> t, w;
    size_t layer = 0;
    for (size_t k = 0; k < outcome.stages.size(); ++k) {
      const PipelineStage& stage = outcome.stages[k];
      CHECK(plan.stages[k].first_device == stage.first_device);
      CHECK(plan.stages[k].mesh.devices() == stage.devices);
      // The stage alone, placed on its mesh as a plain solve's placement would.
      const Graph named = solved_stage_graph(graph, stage);
      TrainingSetup setup = request.stage.memory;
      setup.activations_in_flight = stage.solve->in_flight;
      const PlanResult alone = build_plan(named, stage.solve->outcome.tables, stage.solve->outcome.solution.choice,
                                          default_mesh(stage.devices, 8), *request.make_model(setup, stage.devices),
                                          PlanOptions{});
      for (const PlannedLayer& placed : alone.plan.layers) {
        REQUIRE(layer < plan.layers.size());
        CHECK(plan.layers[layer].name == placed.name);
        CHECK(plan.layers[layer].stage == static_cast<int>(k));
        CHECK(plan.layers[layer].mesh_axes == placed.mesh_axes);
        ++layer;
      }
      // What the layouts add per micro-batch: the realized edges less the model's, over M.
      t.push_back(stage.value.t + (alone.realized_edge_cost - alone.model_edge_cost) / 4.0);
      w.push_back(stage.value.w);
      CHECK(plan.stages[k].realized_cost == doctest::Approx(t.back()).epsilon(1e-12));
    }
    CHECK(layer == plan.layers.size());
    CHECK(plan.realized_total_cost == doctest::Approx(pipeline_step_time(t, w, 4, request.schedule)).epsilon(1e-12));
    CHECK(plan.realized_total_lower_bound <= plan.realized_total_cost * (1 + 1e-12));
  }
}

TEST_CASE("an input an earlier stage makes is a send: the model's pairs, the receiving tile") {
  const Graph graph = small_gpt();
  const PipelineRequest request = calibrated_request(2, 16, 4);
  const PipelineOutcome outcome = solve_pipeline(graph, request);
  REQUIRE(outcome.solved());
  const Plan plan = *place_pipeline(graph, outcome, request, 8).plan;
  size_t sends = 0;
  for (const PlannedLayer& layer : plan.layers)
    for (const PlannedTensor& input : layer.inputs) {
      const std::optional<TensorSourceRef> source = find_producer(plan, input.name);
      const bool crosses = source && plan.layers[source->layer].stage != layer.stage;
      CHECK(input.from_stage.has_value() == crosses);
      if (!crosses) continue;
      ++sends;
      CHECK(*input.from_stage == 0);
      CHECK(layer.stage == 1);
      // 8 devices each side: the tensor over 8 pairs; the receiver's largest tile, by hand.
      int64_t elements = 1, tile = 1;
      for (size_t d = 0; d < input.shape.size(); ++d) {
        elements *= input.shape[d];
        tile *= (input.shape[d] + input.split[d] - 1) / input.split[d];
      }
      CHECK(*input.model_words == doctest::Approx(static_cast<double>(elements) / 8));
      CHECK(*input.realized_words == static_cast<double>(tile));
    }
  CHECK(sends >= 1);
}

TEST_CASE("largest_tile: the most any device holds, blocks cut as XLA cuts them") {
  Mesh mesh;
  mesh.shape = {2, 3};
  mesh.axes = {"x0", "x1"};
  CHECK(largest_tile({10, 7}, {{0}, {1}}, mesh) == 5 * 3);      // 7 in 3 blocks: 3, 3, 1
  CHECK(largest_tile({10, 7}, {{}, {0, 1}}, mesh) == 10 * 2);   // 7 in 6 blocks: 2, 2, 2, 1, 0, 0
  CHECK(largest_tile({10, 7}, {{}, {}}, mesh) == 70);
}

TEST_CASE("stages priced on their meshes' layouts: the plan is the pipeline as priced, each stage as it prices alone") {
  const Graph graph = small_gpt();
  PipelineRequest request = calibrated_request(2, 16, 4);
  request.stage_layouts = true;
  const PipelineOutcome outcome = solve_pipeline(graph, request);
  REQUIRE(outcome.solved());
  const Plan plan = *place_pipeline(graph, outcome, request, 8).plan;
  CHECK(plan.assignment_proof == "searched");
  CHECK(plan.realized_total_cost == doctest::Approx(outcome.step).epsilon(1e-12));
  std::vector<double> t, w;
  for (const PipelineStage& stage : outcome.stages) {
    // The stage alone on the default mesh of its devices, its layouts searched.
    const Graph named = solved_stage_graph(graph, stage);
    SolveRequest alone;
    alone.memory = request.stage.memory;
    alone.memory.activations_in_flight = stage.solve->in_flight;
    alone.mesh = default_mesh(stage.devices, 8);
    alone.search_layouts = true;
    alone.place = false;
    const SolveOutcome solved = solve_request(named, *request.make_model(alone.memory, stage.devices), alone);
    CHECK(stage.solve->step_cost == doctest::Approx(solved.solution.cost).epsilon(1e-12));
    // Its time per micro-batch: the chosen strategy on the tables of one micro-batch without the step's terms.
    SolveRequest one = alone;
    one.memory.micro_batches = 1;
    one.memory.step_weight = 0;
    const PricedLayouts timed = price_graph_layouts(named, *request.make_model(one.memory, stage.devices), one);
    const double t_alone = timed.tables.objective.evaluate(stage.solve->outcome.solution.choice);
    CHECK(stage.solve->t == doctest::Approx(t_alone).epsilon(1e-12));
    t.push_back(stage.value.t);
    w.push_back(stage.value.w);
  }
  CHECK(outcome.step == doctest::Approx(pipeline_step_time(t, w, 4, request.schedule)).epsilon(1e-12));
}

TEST_CASE("on the stages' layouts the bound from one stage's DP holds for every partition at whole blocks, capped or not") {
  const Graph graph = small_gpt();
  const int positions = static_cast<int>(stage_cut_vertices(graph, StageKeys(graph), StageCuts::Blocks).size()) - 1;
  int raised = 0;
  for (const std::pair<int, int64_t>& counts : {std::pair<int, int64_t>{2, 8}, {4, 2}}) {
    const int stages = counts.first;
    const int64_t micro_batches = counts.second;
    CAPTURE(stages);
    CAPTURE(micro_batches);
    PipelineRequest request = calibrated_request(stages, 8, micro_batches);
    request.cuts = StageCuts::Blocks;
    request.stage_layouts = true;
    const PipelineOutcome best = solve_pipeline(graph, request);
    REQUIRE(best.solved());
    const double block = pipeline_block_bound(graph, request);
    CHECK(block > 0);
    // Each partition's stages fixed, each solved on its mesh's layouts: none steps below the bound.
    double least = INFINITY;
    test::each_partition(positions, stages, [&](const std::vector<int>& bounds) {
      PipelineRequest fixed = request;
      fixed.fixed_starts.clear();
      const std::vector<int> cuts = stage_cut_vertices(graph, StageKeys(graph), StageCuts::Blocks);
      for (int b : bounds) fixed.fixed_starts.push_back(cuts[static_cast<size_t>(b)]);
      const PipelineOutcome one = solve_pipeline(graph, fixed);
      REQUIRE(one.solved());
      CHECK(block <= one.step * (1 + 1e-12));
      least = std::min(least, one.step);
    });
    CHECK(least == doctest::Approx(best.step).epsilon(1e-12));  // the search's optimum is the best partition's
    raised += block > pipeline_least_step(graph, request) * (1 + 1e-9);
    // Under a cap below the optimum's largest stage: the bound still holds for the capped optimum.
    uint64_t largest = 0;
    for (const PipelineStage& stage : best.stages) largest = std::max(largest, stage.bytes.total());
    request.stage.cap = largest * 9 / 10;
    const PipelineOutcome capped = solve_pipeline(graph, request);
    REQUIRE(capped.solved());
    CHECK(pipeline_block_bound(graph, request) <= capped.step * (1 + 1e-12));
  }
  CHECK(raised >= 1);  // tighter than the bound without a DP somewhere (4 stages, 2 micro-batches)
}
