// The simulated step (simulate/): a chain without overlap takes exactly the
// sum the additive model prices; overlap never makes it longer; a balanced
// pipeline's bubble is (S - 1) / M of the work; the delta simulation equals a
// full one after every change; the trace is the Chrome trace format.
#include <doctest/doctest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "simulate/step_simulation.h"
#include "simulate/step_tasks.h"
#include "simulate/step_views.h"

using namespace pase;

namespace {

StepModel random_chain(std::mt19937& random, int layers, int64_t micro_batches, bool overlap) {
  std::uniform_real_distribution<double> time(0.1, 2.0);
  StepModel model;
  model.micro_batches = micro_batches;
  model.overlap = overlap;
  model.stages.emplace_back();
  for (int l = 0; l < layers; ++l) {
    SimLayer layer;
    layer.name = "layer" + std::to_string(l);
    layer.forward = time(random);
    layer.backward = time(random);
    if (l % 2 == 0) layer.step_communication = time(random);
    if (l % 3 == 0) layer.step_compute = time(random) / 10;
    model.stages[0].layers.push_back(layer);
  }
  return model;
}

double additive(const StepModel& model) {
  double sum = 0;
  for (const SimLayer& layer : model.stages[0].layers)
    sum += static_cast<double>(model.micro_batches) * (layer.forward + layer.backward) + layer.step_communication +
           layer.step_compute;
  return sum;
}

StepModel balanced_pipeline(int stages, int64_t micro_batches, SimSchedule schedule) {
  StepModel model;
  model.micro_batches = micro_batches;
  model.schedule = schedule;
  for (int k = 0; k < stages; ++k) {
    SimStage stage;
    stage.first_device = k;
    stage.layers.push_back({"block", 1.0, 2.0, 0, 0});
    model.stages.push_back(stage);
  }
  return model;
}

// One stage of `layers` layers alike, named layer0, layer1, ...
StepModel chain_of(int layers, SimLayer each) {
  StepModel model;
  model.stages.emplace_back();
  for (int l = 0; l < layers; ++l) {
    each.name = "layer" + std::to_string(l);
    model.stages[0].layers.push_back(each);
  }
  return model;
}

}  // namespace

TEST_CASE("a chain without overlap takes the additive model's sum; with it, never more") {
  std::mt19937 random(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int layers = 1 + trial % 7;
    const int64_t micro_batches = 1 + trial % 4;
    const StepModel serial = random_chain(random, layers, micro_batches, false);
    StepModel overlapped = serial;
    overlapped.overlap = true;
    const SimulatedStep a = simulate_step(step_tasks(serial), 1), b = simulate_step(step_tasks(overlapped), 1);
    CHECK(a.step == doctest::Approx(additive(serial)).epsilon(1e-12));
    CHECK(b.step <= a.step * (1 + 1e-12));
    CHECK(a.stages[0].idle == doctest::Approx(0).scale(a.step));
    // The critical path runs from the first task to the last, each start decided by the one before.
    REQUIRE(!a.critical_path.empty());
    CHECK(a.start[static_cast<size_t>(a.critical_path.front())] == 0);
    for (size_t i = 1; i < a.critical_path.size(); ++i)
      CHECK(a.start[static_cast<size_t>(a.critical_path[i])] == a.end[static_cast<size_t>(a.critical_path[i - 1])]);
  }
  // A gradient collective longer than the backward left after it: hidden but for the rest.
  StepModel model;
  model.micro_batches = 1;
  model.stages.emplace_back();
  model.stages[0].layers = {{"a", 1, 1, 0, 0}, {"b", 1, 3, 5, 0}};
  CHECK(simulate_step(step_tasks(model), 1).step == 1 + 1 + 3 + 5);  // b's sync after b's backward, beside a's
  model.stages[0].layers[1].step_communication = 0.5;
  CHECK(simulate_step(step_tasks(model), 1).step == 1 + 1 + 3 + 1);  // hidden behind a's backward
}

TEST_CASE("a balanced pipeline takes (M + S - 1) t: a bubble of (S - 1) / M of the work, 1F1B and GPipe alike") {
  for (const SimSchedule schedule : {SimSchedule::OneFOneB, SimSchedule::GPipe})
    for (int stages : {1, 2, 4})
      for (int64_t micro_batches : {1, 4, 8}) {
        CAPTURE(stages);
        CAPTURE(micro_batches);
        const StepModel model = balanced_pipeline(stages, micro_batches, schedule);
        const SimulatedStep simulated = simulate_step(step_tasks(model), stages);
        CHECK(simulated.step == doctest::Approx(double(micro_batches + stages - 1) * 3.0).epsilon(1e-12));
        const double work = double(micro_batches) * 3.0;
        for (const StageTime& time : simulated.stages) {
          CHECK(time.compute == doctest::Approx(work));
          CHECK(time.idle / work == doctest::Approx(double(stages - 1) / double(micro_batches)));
        }
      }
  // 1F1B runs S - k - 1 forwards before its first backward: stage 0 of 4 starts backward 0 after 4 forwards.
  const StepModel model = balanced_pipeline(4, 8, SimSchedule::OneFOneB);
  const TaskGraph graph = step_tasks(model);
  int forwards_before = 0;
  for (const SimTask& task : graph.tasks()) {
    if (task.stage != 0 || task.stream != StreamKind::Compute) continue;
    if (task.kind == TaskKind::Backward) break;
    ++forwards_before;
  }
  CHECK(forwards_before == 4);
}

TEST_CASE("a balanced interleaved pipeline takes M t + (S - 1) t / V: Megatron-LM's bubble, V times smaller") {
  for (int stages = 2; stages <= 4; ++stages)
    for (int chunks = 2; chunks <= 3; ++chunks)
      for (int64_t micro_batches = stages; micro_batches <= 8; micro_batches += stages) {
        CAPTURE(stages);
        CAPTURE(chunks);
        CAPTURE(micro_batches);
        StepModel model;
        model.micro_batches = micro_batches;
        model.schedule = SimSchedule::Interleaved;
        for (int k = 0; k < stages; ++k) {
          SimStage stage;
          stage.first_device = k;
          for (int v = 0; v < chunks; ++v) {
            stage.layers.push_back({"chunk", 1.0, 2.0, 0, 0});
            stage.chunks.push_back({static_cast<size_t>(v), 0, 0});
          }
          model.stages.push_back(stage);
        }
        const TaskGraph graph = step_tasks(model);
        CHECK(graph.size() == static_cast<size_t>(stages * chunks * micro_batches * 2 + (stages * chunks - 1) * micro_batches * 2));
        const SimulatedStep simulated = simulate_step(graph, stages);
        const double t = 3.0 * chunks;  // a stage's work per micro-batch
        CHECK(simulated.step == double(micro_batches) * t + (stages - 1) * t / chunks);
        for (const StageTime& time : simulated.stages)
          CHECK(time.idle == doctest::Approx((stages - 1) * t / chunks));
        // Stage 0 runs 2 (S - 1) + (V - 1) S forwards before its first backward (Megatron-LM's warm-up).
        int forwards = 0;
        for (size_t i = 0; i < graph.size() && graph.tasks()[i].kind != TaskKind::Backward; ++i)
          forwards += graph.tasks()[i].stage == 0 && graph.tasks()[i].kind == TaskKind::Forward;
        CHECK(forwards == std::min<int64_t>(2 * (stages - 1) + (chunks - 1) * stages + 1, chunks * micro_batches));
      }
}

TEST_CASE("ZeRO-3's gathers are prefetched on their own stream, its reduce-scatters run beside the backward pass") {
  SimLayer each{"", 2.0, 4.0, 0, 0};
  each.gather_forward = each.gather_backward = 1.0;
  each.scatter = 0.5;
  StepModel model = chain_of(4, each);
  // By hand: gathers 0 and 1 at once, F0 [1, 3], F1 [3, 5], the gather of layer l + 2 after F l, F3 ends at 9;
  // the backward's first two gathers after F3, B3 [10, 14], B2 [14, 18], B1 [18, 22], B0 [22, 26], its scatter to 26.5.
  const TaskGraph graph = step_tasks(model);
  CHECK(simulate_step(graph, 1).step == 26.5);
  size_t gathers = 0, scatters = 0;
  for (const SimTask& task : graph.tasks()) {
    gathers += task.kind == TaskKind::Gather && task.stream == StreamKind::IntraNode;  // no node known: NVLink
    scatters += task.kind == TaskKind::Scatter && task.stream == StreamKind::IntraNode;
  }
  CHECK(gathers == 8);
  CHECK(scatters == 4);
  // Without overlap each is in its layer's pass, as the sum adds them.
  model.overlap = false;
  CHECK(simulate_step(step_tasks(model), 1).step == 4 * (2.0 + 4.0 + 1.0 + 1.0 + 0.5));
}

TEST_CASE("collectives over one class of link queue on its stream; sends and the other class run beside them") {
  SimLayer each{"", 1.0, 2.0, 3.0, 0};
  each.gather_forward = 0.5;
  StepModel model = chain_of(2, each);
  // G0 [0, 0.5], G1 [0.5, 1], F0 [0.5, 1.5], F1 [1.5, 2.5], B1 [2.5, 4.5], its sync [4.5, 7.5], B0 [4.5, 6.5],
  // B0's sync queues behind B1's on the same links: [7.5, 10.5].
  for (const bool across : {false, true}) {
    CAPTURE(across);
    model.stages[0].across_nodes = across;
    const TaskGraph graph = step_tasks(model);
    CHECK(simulate_step(graph, 1).step == 10.5);
    for (const SimTask& task : graph.tasks())
      if (task.kind == TaskKind::GradientSync || task.kind == TaskKind::Gather)
        CHECK(task.stream == (across ? StreamKind::InterNode : StreamKind::IntraNode));
  }
  // Sends have their own stream: a pipeline's send back runs beside its stage's gradient sync.
  StepModel pipeline = balanced_pipeline(2, 1, SimSchedule::OneFOneB);  // each stage: forward 1, backward 2
  pipeline.stages[1].layers[0].step_communication = 5;
  pipeline.stages[1].send_backward = 1;
  // F0 [0, 1], F1 [1, 2], B1 [2, 4], the send [4, 5] beside the sync [4, 9], B0 [5, 7].
  CHECK(simulate_step(step_tasks(pipeline), 2).step == 9.0);
}

TEST_CASE("gradient syncs coalesce into buckets of bucket_words, each after its layers' last backward") {
  SimLayer each{"", 1.0, 1.0, 1.0, 0};
  each.step_words = 10;
  StepModel model = chain_of(4, each);
  // One per layer: S3 [5, 6], S2 [6, 7], S1 [7, 8], S0 [8, 9].
  CHECK(simulate_step(step_tasks(model), 1).step == 9.0);
  // Buckets of 25 elements: layers 3, 2, 1 after B1 (ends at 7) [7, 10], then layer 0 [10, 11].
  model.bucket_words = 25;
  const TaskGraph graph = step_tasks(model);
  CHECK(simulate_step(graph, 1).step == 11.0);
  size_t syncs = 0;
  for (const SimTask& task : graph.tasks()) syncs += task.kind == TaskKind::GradientSync;
  CHECK(syncs == 2);
}

TEST_CASE("the delta simulation equals a full one after every change") {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> time(0.0, 3.0);
  StepModel model = balanced_pipeline(3, 6, SimSchedule::OneFOneB);
  for (SimStage& stage : model.stages) {
    stage.layers.push_back({"more", 0.5, 0.7, 1.5, 0.1});
    stage.send_forward = stage.send_backward = 0.2;
  }
  TaskGraph graph = step_tasks(model);
  SimulatedStep delta = simulate_step(graph, 3);
  std::vector<SimTask> tasks = graph.tasks();
  for (int move = 0; move < 200; ++move) {
    const size_t changed = std::uniform_int_distribution<size_t>(0, tasks.size() - 1)(random);
    tasks[changed].duration = time(random);
    TaskGraph rebuilt;
    for (const SimTask& task : tasks) rebuilt.add(task);
    resimulate_from(rebuilt, 3, changed, delta);
    const SimulatedStep full = simulate_step(rebuilt, 3);
    REQUIRE(delta.start == full.start);
    REQUIRE(delta.end == full.end);
    REQUIRE(delta.step == full.step);
    REQUIRE(delta.critical_path == full.critical_path);
  }
}

TEST_CASE("retime_from after set_duration equals a full simulation; empty step tasks take no time") {
  std::mt19937 random(5);
  std::uniform_real_distribution<double> time(0.0, 2.0);
  for (const bool overlap : {true, false}) {
    StepModel model = random_chain(random, 7, 3, overlap);
    const TaskGraph only_work = step_tasks(model);
    const double sparse = simulate_step(only_work, 1).step;
    model.every_step_task = true;  // layers 1, 5 have neither step term: their tasks take no time
    TaskGraph graph = step_tasks(model);
    CHECK(graph.size() == only_work.size() + 2 * 7 - 4 - 3);
    SimulatedStep delta = simulate_step(graph, 1);
    CHECK(delta.step == doctest::Approx(sparse).epsilon(1e-15));
    for (int move = 0; move < 100; ++move) {
      const size_t changed = std::uniform_int_distribution<size_t>(0, graph.size() - 1)(random);
      graph.set_duration(changed, time(random));
      retime_from(graph, changed, delta);
      const SimulatedStep full = simulate_step(graph, 1);
      REQUIRE(delta.end == full.end);
      REQUIRE(delta.waited_for == full.waited_for);
      REQUIRE(delta.latest_end == full.latest_end);
      REQUIRE(delta.stream_free == full.stream_free);
      REQUIRE(delta.step == full.step);
    }
  }
}

TEST_CASE("the trace is the Chrome trace event format: a process per stage, a thread per stream, an event per task") {
  const StepModel model = balanced_pipeline(2, 2, SimSchedule::OneFOneB);
  const TaskGraph graph = step_tasks(model);
  const SimulatedStep simulated = simulate_step(graph, 2);
  const nlohmann::json trace = nlohmann::json::parse(chrome_trace(model, graph, simulated, "two stages"));
  size_t complete = 0, names = 0;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == "M") {
      ++names;
      CHECK(event["args"]["name"].is_string());
      continue;
    }
    REQUIRE(event["ph"] == "X");
    ++complete;
    CHECK(event["ts"].get<double>() >= 0);
    CHECK(event["dur"].get<double>() > 0);
    CHECK(event["pid"].get<int>() < 2);
    CHECK(event["name"].is_string());
    CHECK(event["args"].contains("micro_batch"));
  }
  size_t lasting = 0;  // the sends here take no time, and a task that takes none is left out
  for (const SimTask& task : graph.tasks()) lasting += task.duration > 0;
  CHECK(lasting == 8);
  CHECK(complete == lasting);
  CHECK(names == 2 * (1 + 1));      // each stage and its one stream with work (the sends take none) named
  CHECK(trace["otherData"]["step"].get<double>() == simulated.step);
  const std::string svg = timeline_svg(model, graph, simulated, "two <stages>");
  CHECK(svg.rfind("<svg ", 0) == 0);
  CHECK(svg.find("two &lt;stages&gt;") != std::string::npos);
}

TEST_CASE("step_tasks refuses a step it cannot build") {
  StepModel empty;
  CHECK_THROWS_WITH_AS((void)step_tasks(empty), "step_tasks: no stage", std::invalid_argument);
  StepModel bare;
  bare.stages.emplace_back();
  CHECK_THROWS_WITH_AS((void)step_tasks(bare), "step_tasks: a stage without layers", std::invalid_argument);
  StepModel interleaved = balanced_pipeline(2, 2, SimSchedule::Interleaved);
  CHECK_THROWS_WITH_AS((void)step_tasks(interleaved), "step_tasks: stages of other than V >= 2 chunks", std::invalid_argument);
  for (SimStage& stage : interleaved.stages) stage.chunks = {{0, 0, 0}, {1, 0, 0}};  // the second chunk: no layer
  CHECK_THROWS_WITH_AS((void)step_tasks(interleaved), "step_tasks: a chunk without layers", std::invalid_argument);
  for (SimStage& stage : interleaved.stages) stage.layers.push_back(stage.layers.front());
  interleaved.micro_batches = 3;
  CHECK_THROWS_WITH_AS((void)step_tasks(interleaved), "step_tasks: interleaved micro-batches not a multiple of the stages",
                       std::invalid_argument);
  StepModel one = balanced_pipeline(1, 2, SimSchedule::Interleaved);
  CHECK_THROWS_WITH_AS((void)step_tasks(one), "step_tasks: interleaved on one stage", std::invalid_argument);
  StepModel chunked = balanced_pipeline(2, 2, SimSchedule::OneFOneB);
  chunked.stages[0].chunks = {{0, 0, 0}};
  CHECK_THROWS_WITH_AS((void)step_tasks(chunked), "step_tasks: chunks without the interleaved schedule",
                       std::invalid_argument);
}
