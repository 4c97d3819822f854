// pase's pipeline search (stages/pipeline_search.h): one stage is the plain
// solve to the last bit; with more, the step it finds is the least over every
// partition of the cut positions, each stage solved on its own and its sends
// priced independently here; a stage's memory holds its micro-batches in flight.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/machine_profile.h"
#include "costmodel/memory_model.h"
#include "graphs/llm_zoo.h"
#include "graphs/stage_graph.h"
#include "solve/solve_request.h"
#include "stages/pipeline_document.h"
#include "stages/pipeline_search.h"
#include "stages/split_candidates.h"
#include "stages/stage_cuts.h"
#include "test_support.h"

using namespace pase;

namespace {

Graph small_gpt(int64_t layers, int64_t batch) {
  LlmShape shape;
  shape.layers = layers, shape.d_model = 64, shape.heads = 4, shape.kv_heads = 4, shape.ff = 256, shape.seq = 16;
  shape.vocab = 128, shape.batch = batch;
  return build_graph(build_llm_graph(LlmFamily::Gpt, shape, "gpt"), "gpt.json");
}

Machine test_machine() {
  Machine machine;
  machine.devices = 1;
  machine.flops_tflops = 10;
  machine.bandwidth_gbps = 16;
  return machine;
}

// A maker of the `pase` model, or with a profile the calibrated one, on a number of devices.
StageModelMaker model_maker(const std::optional<MachineProfile>& profile) {
  return [profile](const TrainingSetup& setup, int64_t n) -> std::unique_ptr<CostModel> {
    if (profile) return std::make_unique<CalibratedCostModel>(*profile, n, CalibratedOptions{setup});
    Machine machine = test_machine();
    machine.devices = n;
    return std::make_unique<PaseCostModel>(machine, setup);
  };
}

PipelineRequest pipeline_request(int stages, int64_t devices, int64_t micro_batches,
                                 const std::optional<MachineProfile>& profile = std::nullopt) {
  PipelineRequest request;
  request.stages = stages;
  request.devices = devices;
  request.stage.memory.micro_batches = micro_batches;
  request.cuts = StageCuts::Boundaries;  // every position, as stage_starts lists them
  request.make_model = model_maker(profile);
  return request;
}


// A stage's own optimum of M t + w, and its t: the same strategy priced at one micro-batch without the step's terms.
std::pair<double, double> stage_optimum(const Graph& stage, int64_t devices, int64_t micro_batches,
                                        const StageModelMaker& make) {
  TrainingSetup setup;
  setup.micro_batches = micro_batches;
  SolveRequest request;
  request.memory = setup;
  request.place = false;
  const SolveOutcome outcome = solve_request(stage, *make(setup, devices), request);
  TrainingSetup time = setup;
  time.micro_batches = 1;
  time.step_weight = 0;
  return {outcome.solution.cost,
          evaluate_strategy_direct(stage, outcome.tables, *make(time, devices), outcome.solution.choice)};
}

}  // namespace

TEST_CASE("a pipeline of one stage is the plain solve, to the last bit") {
  const Graph graph = small_gpt(2, 8);
  const PipelineRequest request = pipeline_request(1, 4, 2);
  const PipelineOutcome outcome = solve_pipeline(graph, request);
  REQUIRE(outcome.solved());
  const std::unique_ptr<CostModel> model = request.make_model(request.stage.memory, 4);
  SolveRequest plain;
  plain.memory = request.stage.memory;
  plain.place = false;
  const SolveOutcome solved = solve_request(graph, *model, plain);
  CHECK(outcome.step == solved.solution.cost);
  CHECK(outcome.lower_bound == solved.solution.cost);
  CHECK(outcome.stages[0].solve->outcome.solution.choice == solved.solution.choice);
  CHECK(outcome.stages[0].send_time == 0);
}

TEST_CASE("the pipeline search finds the least step over every partition, each stage solved on its own") {
  const Graph graph = small_gpt(2, 8);
  const std::vector<int> starts = stage_starts(graph);
  const int positions = static_cast<int>(starts.size()) - 1;
  REQUIRE(positions >= 6);  // the embeddings, two half blocks per block, the head
  // The calibrated model prices a tied weight's update at its first reader
  // only in one graph, at both stages' copies in a pipeline.
  for (const std::optional<MachineProfile>& profile :
       {std::optional<MachineProfile>{}, std::optional<MachineProfile>{parse_machine_profile(test::kTestMachineProfile, "test")}}) {
    CAPTURE(profile.has_value());
    const StageModelMaker make = model_maker(profile);
    for (const auto& config : std::vector<std::tuple<int, int64_t, int64_t>>{{2, 4, 4}, {3, 3, 2}, {2, 2, 1}}) {
      // Plain variables: lambdas below capture them (a structured binding cannot be captured in C++17).
      const int stages = std::get<0>(config);
      const int64_t devices = std::get<1>(config), m = std::get<2>(config);
      CAPTURE(stages);
      CAPTURE(m);
      const PipelineRequest request = pipeline_request(stages, devices, m, profile);
      const PipelineOutcome outcome = solve_pipeline(graph, request);
      REQUIRE(outcome.solved());
      const int64_t n = devices / stages;
      // One direction of a send: half of what a fetch of the crossing words over n pairs costs, forward and backward.
      const std::unique_ptr<CostModel> link = make(TrainingSetup{}, devices);
      auto send = [&](int cut) { return link->fetch_cost(double(crossing_elements(graph, cut)) / double(n), 2) / 2; };
      // The tied token table (vocab 128 x d 64): its gradient all-reduced between the first and the last stage's copies.
      const double tied = link->fetch_cost(128.0 * 64.0 / double(n), 2) / 2;
      double brute = INFINITY;
      test::each_partition(positions, stages, [&](const std::vector<int>& bounds) {
        std::vector<double> t, w;
        for (int k = 0; k < stages; ++k) {
          const auto [step, time] = stage_optimum(stage_graph(graph, starts[bounds[k]], starts[bounds[k + 1]]), n, m, make);
          double sends = 0;
          if (k + 1 < stages) sends += send(starts[bounds[k + 1]]);
          if (k > 0) sends += send(starts[bounds[k]]);
          t.push_back(time + sends);
          w.push_back(std::max(0.0, step - double(m) * time) + ((k == 0 || k + 1 == stages) ? tied : 0.0));
        }
        brute = std::min(brute, pipeline_step_time(t, w, m, PipelineSchedule{}));
      });
      CHECK(outcome.step == doctest::Approx(brute).epsilon(1e-9));
      CHECK(outcome.lower_bound <= outcome.step);
      CHECK(outcome.lower_bound > 0.5 * outcome.step);
      // The stages tile the graph in order.
      CHECK(outcome.stages.front().begin == 0);
      CHECK(outcome.stages.back().end == static_cast<int>(graph.vertices.size()));
      for (size_t k = 1; k < outcome.stages.size(); ++k) CHECK(outcome.stages[k].begin == outcome.stages[k - 1].end);
    }
  }
}

TEST_CASE("a stage holds the activations of its micro-batches in flight (1f1b: S - k; gpipe: M)") {
  const Graph graph = small_gpt(2, 8);
  for (const char* name : {"1f1b", "gpipe"}) {
    CAPTURE(name);
    PipelineRequest request = pipeline_request(2, 4, 4);
    request.schedule = parse_schedule(name);
    const PipelineOutcome outcome = solve_pipeline(graph, request);
    REQUIRE(outcome.solved());
    for (size_t k = 0; k < outcome.stages.size(); ++k) {
      const PipelineStage& stage = outcome.stages[k];
      CHECK(stage.in_flight == (std::string(name) == "gpipe" ? 4 : 2 - static_cast<int64_t>(k)));
      // One micro-batch's bytes, counted here from the stage's own tables.
      const Graph named = solved_stage_graph(graph, stage);
      const MemoryTables memory = build_memory_tables(named, stage.solve->outcome.tables, request.stage.memory);
      const PlanMemory one = plan_memory(memory, stage.solve->outcome.solution.choice);
      CHECK(stage.bytes.weights == one.weights);
      CHECK(stage.bytes.activations == one.activations * static_cast<uint64_t>(stage.in_flight));
      // The memory model counts three micro-batches in flight as three times one's activations.
      TrainingSetup three = request.stage.memory;
      three.activations_in_flight = 3;
      const PlanMemory held = plan_memory(build_memory_tables(named, stage.solve->outcome.tables, three),
                                          stage.solve->outcome.solution.choice);
      CHECK(held.weights == one.weights);
      CHECK(held.activations == 3 * one.activations);
    }
  }
}

TEST_CASE("under a cap every stage fits with its micro-batches in flight, and a cap nothing fits is no pipeline") {
  const Graph graph = small_gpt(2, 8);
  PipelineRequest request = pipeline_request(2, 4, 4);
  const PipelineOutcome free = solve_pipeline(graph, request);
  REQUIRE(free.solved());
  uint64_t largest = 0;
  for (const PipelineStage& stage : free.stages) largest = std::max(largest, stage.bytes.total());
  request.stage.cap = largest * 3 / 4;
  const PipelineOutcome capped = solve_pipeline(graph, request);
  REQUIRE(capped.solved());
  for (const PipelineStage& stage : capped.stages) CHECK(stage.bytes.total() <= *request.stage.cap);
  CHECK(capped.step >= free.lower_bound);
  CHECK(capped.lower_bound <= capped.step);
  // Against every partition, each stage solved under the cap with its micro-batches in flight.
  const std::vector<int> starts = stage_starts(graph);
  const int positions = static_cast<int>(starts.size()) - 1;
  const std::unique_ptr<CostModel> link = request.make_model(TrainingSetup{}, 4);
  auto send = [&](int cut) { return link->fetch_cost(double(crossing_elements(graph, cut)) / 2.0, 2) / 2; };
  double brute = INFINITY;
  test::each_partition(positions, 2, [&](const std::vector<int>& bounds) {
    std::vector<double> t, w;
    for (int k = 0; k < 2; ++k) {
      SolveRequest ask;
      ask.memory.micro_batches = 4;
      ask.memory.activations_in_flight = 2 - k;
      ask.cap = request.stage.cap;
      ask.place = false;
      const Graph stage = stage_graph(graph, starts[bounds[k]], starts[bounds[k + 1]]);
      const SolveOutcome out = solve_request(stage, *request.make_model(ask.memory, 2), ask);
      if (!out.solved()) return;
      TrainingSetup time = ask.memory;
      time.micro_batches = 1;
      time.step_weight = 0;
      const double per = evaluate_strategy_direct(out.graph ? *out.graph : stage, out.tables,
                                                  *request.make_model(time, 2), out.solution.choice);
      t.push_back(per + send(starts[bounds[1]]));  // stage 0 sends its output, stage 1 the gradient back
      w.push_back(std::max(0.0, out.solution.cost - 4 * per) + link->fetch_cost(128.0 * 64.0 / 2.0, 2) / 2);  // the tied table
    }
    brute = std::min(brute, pipeline_step_time(t, w, 4, PipelineSchedule{}));
  });
  CHECK(capped.step == doctest::Approx(brute).epsilon(1e-9));
  // Another pipeline's step as the incumbent: above the best, the same
  // answer; at or below every partition's, no stage is searched under the
  // cap that a partition faster than it would need, and none is found.
  for (double over : {1.5, 1.01, 1 + 1e-9}) {  // the stages' Lagrangian bounds and the outer bound prune only what cannot win
    CAPTURE(over);
    request.incumbent = capped.step * over;
    const PipelineOutcome above = solve_pipeline(graph, request);
    REQUIRE(above.solved());
    CHECK(above.step == capped.step);
  }
  request.incumbent = capped.lower_bound * 0.5;
  const PipelineOutcome below = solve_pipeline(graph, request);
  CHECK(below.cut);
  if (below.solved()) CHECK(below.step >= capped.step);  // only partitions of stages that fit as they are
  request.incumbent = INFINITY;
  CHECK(solve_pipeline(graph, request).step == capped.step);
  request.stage.cap = 1000;
  CHECK_FALSE(solve_pipeline(graph, request).solved());
}

TEST_CASE("the least step without a DP is below every partition's step, with the once-per-step work counted") {
  const Graph graph = small_gpt(2, 8);
  for (int stages : {1, 2, 4}) {
    for (int64_t micro_batches : {1, 4}) {
      CAPTURE(stages);
      CAPTURE(micro_batches);
      PipelineRequest request = pipeline_request(stages, 8, micro_batches);
      const PipelineOutcome best = solve_pipeline(graph, request);
      REQUIRE(best.solved());
      const double least = pipeline_least_step(graph, request);
      CHECK(least <= best.lower_bound * (1 + 1e-12));
      // Independently: each layer alone at its least ((S + M - 1) t + w) / S,
      // t and w priced apart on a stage's devices.
      TrainingSetup per_micro_batch, per_step;
      per_micro_batch.micro_batches = 1, per_micro_batch.step_weight = 0;
      per_step.micro_batches = 1, per_step.step_weight = 1;
      const int64_t n = 8 / stages;
      const CostTables t = build_cost_tables(graph, *request.make_model(per_micro_batch, n));
      const CostTables tw = build_cost_tables(graph, *request.make_model(per_step, n));
      double sum = 0;
      for (size_t v = 0; v < t.objective.vertex_count(); ++v) {
        double low = INFINITY;
        for (size_t c = 0; c < t.objective.config_count(v); ++c) {
          const double time = t.objective.vertex_cost[v][c], work = tw.objective.vertex_cost[v][c] - time;
          low = std::min(low, (double(stages + micro_batches - 1) * time + work) / double(stages));
        }
        sum += low;
      }
      CHECK(least == doctest::Approx(sum).epsilon(1e-12));
    }
  }
}

TEST_CASE("the bound from one stage's DP is below every partition's step at whole blocks, and above the one without") {
  const Graph graph = small_gpt(4, 8);
  int tighter = 0;
  for (int stages : {2, 4}) {
    for (int64_t micro_batches : {1, 4, 8}) {
      CAPTURE(stages);
      CAPTURE(micro_batches);
      PipelineRequest request = pipeline_request(stages, 8, micro_batches);
      request.cuts = StageCuts::Blocks;
      const PipelineOutcome best = solve_pipeline(graph, request);
      REQUIRE(best.solved());
      const double block = pipeline_block_bound(graph, request);
      CHECK(block > 0);
      CHECK(block <= best.step * (1 + 1e-12));
      // Every partition at whole blocks, each stage its own optimum: none steps below it.
      const std::vector<int> starts = stage_cut_vertices(graph, StageKeys(graph), StageCuts::Blocks);
      const int positions = static_cast<int>(starts.size()) - 1;
      const std::unique_ptr<CostModel> link = request.make_model(TrainingSetup{}, 8);
      auto send = [&](int cut) { return link->fetch_cost(double(crossing_elements(graph, cut)) / double(8 / stages), 2) / 2; };
      test::each_partition(positions, stages, [&](const std::vector<int>& bounds) {
        std::vector<double> t, w;
        for (int k = 0; k < stages; ++k) {
          const Graph stage = stage_graph(graph, starts[bounds[k]], starts[bounds[k + 1]]);
          const auto [step, time] = stage_optimum(stage, 8 / stages, micro_batches, request.make_model);
          double sends = 0;
          if (k > 0) sends += send(starts[bounds[k]]);
          if (k + 1 < stages) sends += send(starts[bounds[k + 1]]);
          t.push_back(time + sends);
          w.push_back(std::max(0.0, step - double(micro_batches) * time));
        }
        CHECK(block <= pipeline_step_time(t, w, micro_batches, PipelineSchedule{}) * (1 + 1e-12));
      });
      if (block > pipeline_least_step(graph, request)) ++tighter;
    }
  }
  CHECK(tighter >= 3);
  PipelineRequest unequal = pipeline_request(2, 8, 4);
  unequal.cuts = StageCuts::Blocks;
  unequal.stage_devices = {6, 2};
  CHECK(pipeline_block_bound(graph, unequal) == 0);  // equal stages only
}

TEST_CASE("under a cap both bounds count the memory, stay below the capped step, and say when nothing fits") {
  const Graph graph = small_gpt(4, 8);
  int raised = 0;
  for (int stages : {1, 2, 4}) {
    CAPTURE(stages);
    PipelineRequest request = pipeline_request(stages, 8, 4);
    request.cuts = StageCuts::Blocks;
    const PipelineOutcome free = solve_pipeline(graph, request);
    REQUIRE(free.solved());
    uint64_t largest = 0;
    for (const PipelineStage& stage : free.stages) largest = std::max(largest, stage.bytes.total());
    const double least_free = pipeline_least_step(graph, request), block_free = pipeline_block_bound(graph, request);
    request.stage.cap = largest / 2;
    const PipelineOutcome capped = solve_pipeline(graph, request);
    REQUIRE(capped.solved());  // exact against every partition: "under a cap every stage fits ..."
    const double least = pipeline_least_step(graph, request), block = pipeline_block_bound(graph, request);
    CHECK(least >= least_free);
    CHECK(least <= capped.step * (1 + 1e-12));
    CHECK(block <= capped.step * (1 + 1e-12));
    if (stages > 1) CHECK(block >= block_free * (1 - 1e-12));  // the Lagrangian at price 0 is the optimum without the cap
    raised += least > least_free * (1 + 1e-9) || block > block_free * (1 + 1e-9);
    request.stage.cap = 1000;  // below any layer's weights: nothing fits, and the bound without a DP says so
    CHECK(pipeline_least_step(graph, request) == INFINITY);
    CHECK(pipeline_block_bound(graph, request) == INFINITY);
  }
  CHECK(raised >= 2);
}

TEST_CASE("pipeline requests the devices or the graph cannot take are refused by option") {
  const Graph graph = small_gpt(1, 8);
  PipelineRequest request = pipeline_request(3, 8, 2);
  CHECK_THROWS_WITH_AS((void)solve_pipeline(graph, request),
                       "the pipeline stages: 3 stages do not divide 8 devices evenly (give each stage's devices)",
                       OptionError);
  request.stage_devices = {6, 1};
  CHECK_THROWS_WITH_AS((void)solve_pipeline(graph, request), "the stage devices add up to 7, not the 8 devices",
                       OptionError);
  request = pipeline_request(64, 64, 2);
  CHECK_THROWS_WITH_AS((void)solve_pipeline(graph, request),
                       "the pipeline stages: 64 stages, but the graph has 7 places a stage may begin (after each block "
                       "boundary)",
                       OptionError);
}

TEST_CASE("stages begin at whole blocks inside a run of identical blocks, at every boundary outside it") {
  const Graph graph = small_gpt(4, 8);
  auto names = [&](StageCuts cuts) {
    std::vector<std::string> firsts;
    for (int v : stage_cut_vertices(graph, StageKeys(graph), cuts))
      firsts.push_back(v < static_cast<int>(graph.vertices.size()) ? graph.vertices[v].name : "end");
    return firsts;
  };
  CHECK(names(StageCuts::Blocks) ==
        std::vector<std::string>{"transformer/wte", "transformer/wpe", "transformer/h.0/ln_1", "transformer/h.1/ln_1",
                                 "transformer/h.2/ln_1", "transformer/h.3/ln_1", "transformer/ln_f", "lm_head", "loss",
                                 "end"});
  CHECK(names(StageCuts::Boundaries).size() == 14);  // and the four attention halves' ends
  CHECK(names(StageCuts::Boundaries)[3] == "transformer/h.0/ln_2");
}

TEST_CASE("searches sharing their stage solves answer as each alone, solve fewer, and place what they share") {
  const Graph graph = small_gpt(2, 8);
  PipelineRequest request = pipeline_request(3, 6, 4);
  request.stage_devices = {2, 2, 2};
  const PipelineOutcome free = solve_pipeline(graph, request);
  REQUIRE(free.solved());
  uint64_t largest = 0;
  for (const PipelineStage& stage : free.stages) largest = std::max(largest, stage.bytes.total());
  // Without a cap, and under one that binds: 1 + 2 + 3 and 2 + 1 + 3 devices
  // both ask each last stage's range on 3 devices, holding one micro-batch;
  // under the cap the second's answer takes a capped search of the first's,
  // solved again to be placed.
  for (const std::optional<uint64_t> cap : {std::optional<uint64_t>(), std::optional<uint64_t>(largest * 2 / 5)}) {
    CAPTURE(cap.value_or(0));
    request.stage.cap = cap;
    const auto shared = std::make_shared<SharedStageSolves>();
    size_t alone_solves = 0, shared_solves = 0;
    for (const std::vector<int64_t>& split : {std::vector<int64_t>{1, 2, 3}, std::vector<int64_t>{2, 1, 3}}) {
      CAPTURE(split[0]);
      request.stage_devices = split;
      request.shared_solves = nullptr;
      const PipelineOutcome alone = solve_pipeline(graph, request);
      request.shared_solves = shared;
      const PipelineOutcome together = solve_pipeline(graph, request);
      REQUIRE(alone.solved());
      REQUIRE(together.solved());
      CHECK(together.step == alone.step);
      CHECK(together.lower_bound == alone.lower_bound);
      alone_solves += alone.stage_solves, shared_solves += together.stage_solves;
      for (size_t k = 0; k < alone.stages.size(); ++k) {
        const PipelineStage &a = alone.stages[k], &b = together.stages[k];
        CHECK(b.begin == a.begin);
        CHECK(b.solve->outcome.solution.choice == a.solve->outcome.solution.choice);
        // A stage whose solve was shared without its tables is solved again, with them, to be placed.
        CHECK_FALSE(b.solve->tables_dropped);
        CHECK(b.solve->outcome.tables.objective.vertex_count() == a.solve->outcome.tables.objective.vertex_count());
      }
    }
    CHECK(shared_solves < alone_solves);
    CHECK_FALSE(shared->solves.empty());
    // Under the cap, capped searches that ran to their end are shared too.
    CHECK(std::any_of(shared->solves.begin(), shared->solves.end(),
                      [](const auto& each) { return std::get<3>(each.first); }) == cap.has_value());
    for (const auto& [key, solve] : shared->solves) CHECK(solve->tables_dropped);
  }
}

TEST_CASE("against an incumbent, ranges ruled out by their layers' least costs are not solved, and the answer stands") {
  const Graph graph = small_gpt(4, 8);
  // Fixed techniques; then each layer's ZeRO stage and recomputation the
  // solver's, each layer at its least over every technique it may take.
  for (const bool techniques : {false, true}) {
    CAPTURE(techniques);
    PipelineRequest request = pipeline_request(3, 6, 8);
    request.stage_devices = {1, 2, 3};
    if (techniques) request.stage.memory.zero = kZeroAuto, request.stage.memory.recompute = Recompute::Auto;
    const PipelineOutcome alone = solve_pipeline(graph, request);
    REQUIRE(alone.solved());
    request.incumbent = alone.step * 1.001;
    const PipelineOutcome told = solve_pipeline(graph, request);
    REQUIRE(told.solved());
    CHECK(told.step == alone.step);
    CHECK(told.lower_bound == alone.lower_bound);
    CHECK(told.stage_solves < alone.stage_solves);  // the ranges far from balanced, unsolved
    CHECK(told.cut);
    // Below every partition's bound: nothing is solved that could beat it, and nothing is found.
    request.incumbent = alone.lower_bound * 0.5;
    const PipelineOutcome below = solve_pipeline(graph, request);
    CHECK(below.cut);
    CHECK_FALSE(below.solved());
    CHECK(below.stage_solves == 0);
  }
}

TEST_CASE("SplitCandidates: each split once, its bound at most the step its search finds, under both models") {
  const Graph graph = small_gpt(3, 8);
  const MachineProfile profile = parse_machine_profile(test::kTestMachineProfile, "m.json");
  for (const std::optional<MachineProfile>& model : {std::optional<MachineProfile>{}, std::optional(profile)}) {
    PipelineRequest request = pipeline_request(3, 8, 8, model);
    SplitCandidates lists(graph, request, 1, 3);
    const std::vector<DeviceSplit> one = lists.first(1);
    REQUIRE(one.size() == 1);
    CHECK(one[0].devices == std::vector<int64_t>{8});
    const std::vector<DeviceSplit> first = lists.first(3);  // 8 units do not split in 3 alike: the greedy split only
    REQUIRE(first.size() == 1);
    CHECK(lists.first(3).empty());  // listed already
    double left_out = INFINITY;
    const std::vector<DeviceSplit> rest = lists.below(3, INFINITY, 100, left_out);
    CHECK(rest.size() == 20);  // C(7, 2) = 21 splits, the greedy one listed before
    CHECK(left_out == INFINITY);
    CHECK(lists.listed().size() == 22);
    std::vector<DeviceSplit> every = first;
    every.insert(every.end(), rest.begin(), rest.end());
    for (const DeviceSplit& split : every) {
      INFO(split.devices[0] << "," << split.devices[1] << "," << split.devices[2]);
      CHECK(split.devices[0] + split.devices[1] + split.devices[2] == 8);
      request.stage_devices = split.devices;
      const PipelineOutcome searched = solve_pipeline(graph, request);
      REQUIRE(searched.solved());
      CHECK(split.bound <= searched.step * (1 + 1e-12));
      CHECK(split.bound > 0);
    }
  }
}

TEST_CASE("SplitCandidates, interleaved: every split listed once, its bound at most the lower bound its search proves; "
          "with each stage's share of the blocks searched too") {
  const MachineProfile profile = parse_machine_profile(test::kTestMachineProfile, "m.json");
  for (const bool shares : {false, true})
  for (const auto& [stages, devices] : {std::pair<int, int64_t>{2, 8}, std::pair<int, int64_t>{3, 6}}) {
    const Graph graph = small_gpt(2 * stages + (shares ? 2 : 0), 6);
    for (const std::optional<MachineProfile>& model : {std::optional<MachineProfile>{}, std::optional(profile)}) {
      PipelineRequest request = pipeline_request(stages, devices, 6, model);
      request.schedule = {ScheduleKind::Interleaved, 2};
      request.search_chunks = shares;
      SplitCandidates lists(graph, request, 1, stages + 1);
      std::vector<DeviceSplit> every = lists.first(stages);
      REQUIRE_FALSE(every.empty());
      double left_out = INFINITY;
      const std::vector<DeviceSplit> rest = lists.below(stages, INFINITY, 100, left_out);
      every.insert(every.end(), rest.begin(), rest.end());
      CHECK(every.size() == (stages == 2 ? 7u : 10u));  // C(7, 1), C(5, 2)
      CHECK(lists.listed().size() == every.size());
      CHECK(left_out == INFINITY);
      if (!shares) {  // stages + 1 interleaved stages of 2 chunks need more blocks than the graph repeats: one split, unbounded
        const std::vector<DeviceSplit> refused = lists.first(stages + 1);
        REQUIRE(refused.size() == 1);
        CHECK(refused[0].bound == 0);
        double none = INFINITY;
        CHECK(lists.below(stages + 1, INFINITY, 100, none).empty());
      }
      for (const DeviceSplit& split : every) {
        request.stage_devices = split.devices;
        const PipelineOutcome searched = solve_pipeline(graph, request);
        REQUIRE(searched.solved());
        CHECK(split.bound > 0);
        CHECK(split.bound <= searched.lower_bound * (1 + 1e-12));
        CHECK(searched.lower_bound <= searched.step * (1 + 1e-12));
      }
    }
  }
}
