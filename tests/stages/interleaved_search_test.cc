// Megatron-LM's interleaved schedule in the search (stages/interleaved_search.h):
// the chunks are the equal split of the blocks, chunk c on stage c mod S; each
// stage's strategy is its chunks' optimum together, solved here on its own;
// its sends and the step are priced again here by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "costmodel/cost_tables.h"
#include "costmodel/cost_model.h"
#include "graphs/llm_zoo.h"
#include "graphs/stage_graph.h"
#include "solve/solve_request.h"
#include "stages/interleaved_search.h"
#include "stages/pipeline_document.h"
#include "stages/pipeline_schedule.h"
#include "stages/pipeline_search.h"

using namespace pase;

namespace {

Graph gpt_of_blocks(int64_t blocks) {
  LlmShape shape;
  shape.layers = blocks, shape.d_model = 64, shape.heads = 4, shape.kv_heads = 4, shape.ff = 256, shape.seq = 16;
  shape.vocab = 128, shape.batch = 8;
  return build_graph(build_llm_graph(LlmFamily::Gpt, shape, "gpt"), "gpt.json");
}

std::unique_ptr<CostModel> pase_model(const TrainingSetup& setup, int64_t devices) {
  Machine machine;
  machine.devices = devices;
  machine.flops_tflops = 10;
  machine.bandwidth_gbps = 16;
  return std::make_unique<PaseCostModel>(machine, setup);
}

PipelineRequest interleaved_request(int stages, int64_t chunks, int64_t devices, int64_t micro_batches) {
  PipelineRequest request;
  request.stages = stages;
  request.devices = devices;
  request.schedule = {ScheduleKind::Interleaved, chunks};
  request.stage.memory.micro_batches = micro_batches;
  request.make_model = pase_model;
  return request;
}

// Vertex index of block b's first layer ("transformer/h.B/ln_1"), or of `name`.
int at(const Graph& graph, const std::string& name) {
  const int v = graph.find_vertex(name);
  REQUIRE(v >= 0);
  return v;
}
int block(const Graph& graph, int b) { return at(graph, "transformer/h." + std::to_string(b) + "/ln_1"); }

}  // namespace

TEST_CASE("interleaved chunks: Megatron-LM's equal split of the blocks, chunk c on stage c mod S") {
  const Graph graph = gpt_of_blocks(8);
  const int n = static_cast<int>(graph.vertices.size());
  // 2 stages x 2 chunks of 2 blocks: the first chunk with the embedding, the last with the head.
  CHECK(interleaved_chunks(graph, 2, 2) ==
        std::vector<StageRanges>{{{0, block(graph, 2)}, {block(graph, 4), block(graph, 6)}},
                                 {{block(graph, 2), block(graph, 4)}, {block(graph, 6), n}}});
  // 3 x 2 = 6 chunks of 8 blocks: the first two chunks one block more.
  CHECK(interleaved_chunks(graph, 3, 2) ==
        std::vector<StageRanges>{{{0, block(graph, 2)}, {block(graph, 5), block(graph, 6)}},
                                 {{block(graph, 2), block(graph, 4)}, {block(graph, 6), block(graph, 7)}},
                                 {{block(graph, 4), block(graph, 5)}, {block(graph, 7), n}}});
  // One stage: its chunks run on into one range.
  CHECK(interleaved_chunks(graph, 1, 4) == std::vector<StageRanges>{{{0, n}}});
  CHECK_THROWS_WITH_AS((void)interleaved_chunks(graph, 3, 3),
                       "the pipeline stages: 3 interleaved stages of 3 chunks need 9 blocks, but the graph repeats 8",
                       OptionError);
}

TEST_CASE("solve_interleaved: each stage its chunks' optimum, its sends per chunk boundary, the interleaved step") {
  const Graph graph = gpt_of_blocks(8);
  for (const int64_t micro_batches : {2, 4}) {
    CAPTURE(micro_batches);
    const PipelineRequest request = interleaved_request(2, 2, 8, micro_batches);
    const PipelineOutcome outcome = solve_pipeline(graph, request);
    REQUIRE(outcome.solved());
    REQUIRE(outcome.stages.size() == 2);
    const std::vector<StageRanges> chunks = interleaved_chunks(graph, 2, 2);
    // Each boundary between chunks, one direction per micro-batch: the crossing tensor over 4 pairs.
    const std::unique_ptr<CostModel> link = pase_model(TrainingSetup{}, 8);
    const auto send = [&](int cut) { return link->fetch_cost(double(crossing_elements(graph, cut)) / 4, 2) / 2; };
    const double sends = send(block(graph, 2)) + send(block(graph, 4)) + send(block(graph, 6));  // each stage: all three
    // The token table, read by the embedding (stage 0) and the head (stage 1): its gradient all-reduced between them.
    const double tied = link->fetch_cost(128.0 * 64 / 4, 2) / 2;
    std::vector<double> t, w;
    for (int k = 0; k < 2; ++k) {
      CAPTURE(k);
      const PipelineStage& stage = outcome.stages[static_cast<size_t>(k)];
      CHECK(stage.chunks == chunks[static_cast<size_t>(k)]);
      CHECK(stage.devices == 4);
      CHECK(stage.first_device == 4 * k);
      CHECK(stage.in_flight == micro_batches_in_flight(k, 2, micro_batches, request.schedule));
      // The stage's own graph (both chunks) solved alone for M t + w; t its strategy at one micro-batch.
      const Graph alone = stage_graph(graph, chunks[static_cast<size_t>(k)]);
      TrainingSetup setup;
      setup.micro_batches = micro_batches;
      SolveRequest ask;
      ask.memory = setup;
      ask.place = false;
      const SolveOutcome solved = solve_request(alone, *pase_model(setup, 4), ask);
      TrainingSetup one = setup;
      one.micro_batches = 1;
      one.step_weight = 0;
      const double time = evaluate_strategy_direct(alone, solved.tables, *pase_model(one, 4), solved.solution.choice);
      CHECK(stage.solve->step_cost == doctest::Approx(solved.solution.cost).epsilon(1e-12));
      CHECK(stage.send_time == doctest::Approx(sends).epsilon(1e-12));
      t.push_back(time + sends);
      w.push_back(solved.solution.cost - double(micro_batches) * time + tied);
    }
    const double slowest = std::max(t[0], t[1]);
    CHECK(outcome.step == doctest::Approx(double(micro_batches) * slowest + (t[0] + t[1] - slowest) / 2 +
                                          std::max(w[0], w[1]))
                              .epsilon(1e-12));
    CHECK(outcome.lower_bound <= outcome.step);
    // For every stage b the step is at least M t_b + w_b and the others' t over V: the bound is the largest.
    for (int b = 0; b < 2; ++b)
      CHECK(outcome.step >= double(micro_batches) * t[static_cast<size_t>(b)] + w[static_cast<size_t>(b)] +
                                t[static_cast<size_t>(1 - b)] / 2 - 1e-12 * outcome.step);
    double largest = 0;
    for (const PipelineStage& stage : outcome.stages)
      largest = std::max(largest, stage.value.step_bound + (outcome.stages[0].value.time_bound +
                                                            outcome.stages[1].value.time_bound - stage.value.time_bound) / 2);
    CHECK(outcome.lower_bound == doctest::Approx(std::min(largest, outcome.step)).epsilon(1e-12));
    CHECK(pipeline_least_step(graph, request) <= outcome.step * (1 + 1e-12));
  }
}

TEST_CASE("an interleaved pipeline's document reads back as its stages and chunks, and prices the same") {
  const Graph graph = gpt_of_blocks(8);
  const PipelineRequest request = interleaved_request(2, 2, 8, 4);
  const PipelineOutcome outcome = solve_pipeline(graph, request);
  REQUIRE(outcome.solved());
  TrainingSetup setup;
  setup.micro_batches = 4;
  const StrategyDocument document = pipeline_document(graph, outcome, setup, 2, request.schedule, 8, std::nullopt);
  REQUIRE(document.layers.size() == graph.vertices.size());
  for (size_t v = 0; v < graph.vertices.size(); ++v) CHECK(document.layers[v].name == graph.vertices[v].name);
  CHECK(document.layers[static_cast<size_t>(block(graph, 4))].stage == 0);  // chunk 2
  CHECK(document.layers[static_cast<size_t>(block(graph, 6))].stage == 1);  // chunk 3
  const GivenPipeline given = given_pipeline(graph, document, "p.json");
  CHECK(given.chunks == interleaved_chunks(graph, 2, 2));
  PipelineRequest as_given = request;
  as_given.stage.source = StrategySource::Given;
  as_given.given_starts = given.starts;
  as_given.given_stages = given.stages;
  as_given.given_chunks = given.chunks;
  const PipelineOutcome priced = solve_pipeline(graph, as_given);
  REQUIRE(priced.solved());
  CHECK(priced.step == doctest::Approx(outcome.step).epsilon(1e-12));
  // A chunk out of turn: the first is stage 0's.
  StrategyDocument wrong = document;
  wrong.layers[0].stage = 1;
  CHECK_THROWS_WITH_AS((void)given_pipeline(graph, wrong, "p.json"),
                       "p.json: layer 'transformer/wte': field 'stage': 1, but chunk 0 is stage 0's (interleaved: "
                       "the stages' chunks in turn, 2 times round)",
                       InputError);
}

TEST_CASE("solve_interleaved: micro-batches not a multiple of the stages are refused, as Megatron-LM refuses them") {
  const Graph graph = gpt_of_blocks(8);
  for (const int64_t micro_batches : {1, 3}) {
    CAPTURE(micro_batches);
    try {
      (void)solve_pipeline(graph, interleaved_request(2, 2, 8, micro_batches));
      FAIL("solved");
    } catch (const OptionError& error) {
      CHECK(error.words().option == "micro_batches");
      CHECK(std::string(error.what()) ==
            "the micro-batches: " + std::to_string(micro_batches) +
                " is not a multiple of the 2 stages (Megatron-LM's interleaved schedule runs the micro-batches in "
                "groups of the stage count)");
    }
  }
}
