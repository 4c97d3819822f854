// The interleaved schedule with each stage's share of the blocks searched
// (stages/interleaved_chunk_search.h): the chunks of given shares named by
// hand; the search against every share of the blocks solved one by one and
// Megatron-LM's equal split, with and without a cap, under both models.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_model.h"
#include "costmodel/machine_profile.h"
#include "graphs/llm_zoo.h"
#include "stages/interleaved_chunk_search.h"
#include "stages/interleaved_search.h"
#include "stages/pipeline_search.h"
#include "stages/stage_solve.h"
#include "test_support.h"

using namespace pase;

namespace {

// A GPT whose embedding and head (a vocabulary of 4096) each outweigh a block.
Graph heavy_gpt(int64_t blocks) {
  LlmShape shape;
  shape.layers = blocks, shape.d_model = 64, shape.heads = 4, shape.kv_heads = 4, shape.ff = 256, shape.seq = 16;
  shape.vocab = 4096, shape.batch = 12;
  return build_graph(build_llm_graph(LlmFamily::Gpt, shape, "gpt"), "gpt.json");
}

StageModelMaker model_maker(const std::optional<MachineProfile>& profile) {
  return [profile](const TrainingSetup& setup, int64_t n) -> std::unique_ptr<CostModel> {
    if (profile) return std::make_unique<CalibratedCostModel>(*profile, n, CalibratedOptions{setup});
    Machine machine;
    machine.devices = n;
    machine.flops_tflops = 10;
    machine.bandwidth_gbps = 16;
    return std::make_unique<PaseCostModel>(machine, setup);
  };
}

// Interleaved:2 stages of `devices`, 6 micro-batches (or `micro_batches`), the pase model.
PipelineRequest interleaved_request(int stages, int64_t devices, int64_t micro_batches = 6) {
  PipelineRequest request;
  request.stages = stages;
  request.devices = devices;
  request.schedule = {ScheduleKind::Interleaved, 2};
  request.stage.memory.micro_batches = micro_batches;
  request.make_model = model_maker(std::nullopt);
  return request;
}

int block(const Graph& graph, int b) {
  const int v = graph.find_vertex("transformer/h." + std::to_string(b) + "/ln_1");
  REQUIRE(v >= 0);
  return v;
}

// Every count of blocks per stage, each at least `least`, summing to `blocks`.
void every_share(int stages, int64_t blocks, int64_t least, std::vector<int64_t>& so_far,
                 std::vector<std::vector<int64_t>>& out) {
  if (static_cast<int>(so_far.size()) + 1 == stages) {
    if (blocks >= least) {
      so_far.push_back(blocks);
      out.push_back(so_far);
      so_far.pop_back();
    }
    return;
  }
  for (int64_t n = least; n <= blocks; ++n) {
    so_far.push_back(n);
    every_share(stages, blocks - n, least, so_far, out);
    so_far.pop_back();
  }
}

}  // namespace

TEST_CASE("interleaved_chunks_of: each stage's blocks spread over its chunks, chunk c = v S + k in graph order") {
  const Graph graph = heavy_gpt(12);
  const int n = static_cast<int>(graph.vertices.size());
  // 2, 8 and 2 blocks in 2 chunks each: in graph order 1, 4, 1, 1, 4, 1 blocks.
  CHECK(interleaved_chunks_of(graph, {2, 8, 2}, 2) ==
        std::vector<StageRanges>{{{0, block(graph, 1)}, {block(graph, 6), block(graph, 7)}},
                                 {{block(graph, 1), block(graph, 5)}, {block(graph, 7), block(graph, 11)}},
                                 {{block(graph, 5), block(graph, 6)}, {block(graph, 11), n}}});
  // 3 and 3 in 2 chunks: each stage's first chunk the larger, 2, 2, 1, 1.
  CHECK(interleaved_chunks_of(graph, {7, 5}, 2) ==
        std::vector<StageRanges>{{{0, block(graph, 4)}, {block(graph, 7), block(graph, 10)}},
                                 {{block(graph, 4), block(graph, 7)}, {block(graph, 10), n}}});
  CHECK(interleaved_chunks_of(graph, {4, 4, 4}, 2) == interleaved_chunks(graph, 3, 2));
  CHECK(interleaved_chunks_of(graph, {12}, 3) == std::vector<StageRanges>{{{0, n}}});  // one stage runs on
}

TEST_CASE("search_interleaved_chunks: the least step over every share of the blocks and the equal split, each solved "
          "alone; its lower bound under every one") {
  const Graph graph = heavy_gpt(12);
  const MachineProfile profile = parse_machine_profile(test::kTestMachineProfile, "m.json");
  std::vector<std::vector<int64_t>> shares;
  std::vector<int64_t> so_far;
  every_share(3, 12, 2, so_far, shares);
  REQUIRE(shares.size() == 28);  // C(12 - 6 + 2, 2)
  int beaten = 0, capped = 0;    // cases where a share beats the equal split; where the cap bound
  for (const std::optional<MachineProfile>& model : {std::optional<MachineProfile>{}, std::optional(profile)})
    for (const double cap_share : {0.0, 0.7}) {
      PipelineRequest request = interleaved_request(3, 6);
      request.make_model = model_maker(model);
      const PipelineOutcome equal = solve_interleaved(graph, request);
      REQUIRE(equal.solved());
      if (cap_share > 0) {  // below the equal split's largest stage: some stages solved under the cap
        uint64_t most = 0;
        for (const PipelineStage& stage : equal.stages) most = std::max(most, stage.bytes.weights + stage.bytes.activations);
        request.stage.cap = static_cast<uint64_t>(cap_share * static_cast<double>(most));
      }
      const PipelineOutcome searched = search_interleaved_chunks(graph, request);
      REQUIRE(searched.solved());
      InterleavedStages stages(graph, request);
      double least = std::numeric_limits<double>::infinity(), equal_step = least;
      for (const std::vector<std::vector<int64_t>>::value_type& share : shares) {
        const PipelineOutcome one = stages.pipeline(interleaved_chunks_of(graph, share, 2));
        if (!one.solved()) continue;
        least = std::min(least, one.step);
        CHECK(searched.lower_bound <= one.step * (1 + 1e-12));
      }
      const PipelineOutcome megatron = stages.pipeline(interleaved_chunks(graph, 3, 2));
      if (megatron.solved()) {
        equal_step = megatron.step;
        CHECK(searched.lower_bound <= equal_step * (1 + 1e-12));
      }
      INFO("model " << (model ? "calibrated" : "pase") << ", cap " << cap_share);
      CHECK(searched.step == doctest::Approx(std::min(least, equal_step)).epsilon(1e-12));
      CHECK(searched.lower_bound <= searched.step);
      beaten += searched.step < equal_step * (1 - 1e-9);
      for (const PipelineStage& stage : searched.stages) capped += stage.solve->in_flight > 1;
      for (const PipelineStage& stage : searched.stages) {
        CHECK(stage.chunks.size() == 2);
        if (request.stage.cap) CHECK(stage.bytes.weights + stage.bytes.activations <= *request.stage.cap);
      }
    }
  CHECK(beaten > 0);
  CHECK(capped > 0);
}

TEST_CASE("search_interleaved_chunks: more chunks than blocks refused as Megatron-LM's split is; one stage its solve") {
  const Graph graph = heavy_gpt(4);
  PipelineRequest request = interleaved_request(3, 3, 3);
  CHECK_THROWS_WITH_AS((void)search_interleaved_chunks(graph, request),
                       "the pipeline stages: 3 interleaved stages of 2 chunks need 6 blocks, but the graph repeats 4",
                       OptionError);
  request.stages = 1;
  request.devices = 2;
  const PipelineOutcome one = search_interleaved_chunks(graph, request);
  REQUIRE(one.solved());
  CHECK(one.step == solve_interleaved(graph, request).step);
}

TEST_CASE("interleaved searches share their stage solves: a second search solves nothing, its stages' tables dropped "
          "until solve_dropped_tables solves them again, alike") {
  const Graph graph = heavy_gpt(12);
  PipelineRequest request = interleaved_request(3, 6);
  request.shared_solves = std::make_shared<SharedStageSolves>();
  const PipelineOutcome first = search_interleaved_chunks(graph, request);
  REQUIRE(first.solved());
  CHECK(first.stage_solves > 0);
  PipelineOutcome again = search_interleaved_chunks(graph, request);
  REQUIRE(again.solved());
  CHECK(again.stage_solves == 0);
  CHECK(again.step == first.step);
  for (const PipelineStage& stage : again.stages) CHECK(stage.solve->tables_dropped);
  solve_dropped_tables(graph, request, again);
  for (size_t k = 0; k < again.stages.size(); ++k) {
    const StageSolve& solve = *again.stages[k].solve;
    CHECK_FALSE(solve.tables_dropped);
    CHECK_FALSE(solve.outcome.tables.configs.empty());
    CHECK(solve.t == first.stages[k].solve->t);
    CHECK(solve.outcome.solution.choice == first.stages[k].solve->outcome.solution.choice);
  }
}
