// `pase solve --pipeline-stages` end to end (docs/pipeline.md): the strategy
// file's pipeline and each layer's stage, read back byte for byte; the table
// of stages; the schedules' memory; and the exact one-line refusals.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "strategy/strategy_document.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::ordered_json;

namespace {

// A GPT of four blocks, small enough to solve in a blink.
const std::string& small_gpt() {
  static const std::string path = [] {
    const test::CommandResult made = test::run_pase(
        "models export gpt --layers 4 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
    REQUIRE(made.status == 0);
    return test::write_temp_file("pipeline_gpt.json", made.output);
  }();
  return path;
}

}  // namespace

TEST_CASE("solve --pipeline-stages 2: the pipeline object, every layer's stage, read back byte for byte") {
  const test::CommandResult solved =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json");
  REQUIRE(solved.status == 0);
  const json strategy = json::parse(solved.output);
  const json& pipeline = strategy["training"]["pipeline"];
  CHECK(pipeline["stages"] == 2);
  CHECK(pipeline["schedule"] == "1f1b");
  CHECK(pipeline["stage_devices"].dump() == "[4,4]");
  REQUIRE(pipeline["stage_cost"].size() == 2);
  REQUIRE(pipeline["stage_memory_bytes"].size() == 2);
  const double t0 = pipeline["stage_cost"][0], t1 = pipeline["stage_cost"][1];
  // The step: sum t + (M - 1) max t + the largest step work (at least nothing).
  const double total = strategy["total_cost"];
  CHECK(total >= t0 + t1 + 3 * std::max(t0, t1) - 1e-6 * total);
  CHECK(strategy["memory"]["lower_bound_cost"].get<double>() <= total);
  CHECK(strategy["memory"]["per_device_bytes"] ==
        std::max(pipeline["stage_memory_bytes"][0].get<uint64_t>(), pipeline["stage_memory_bytes"][1].get<uint64_t>()));
  // Stages are contiguous in layer order, each on at most its own devices.
  int stage = 0;
  for (const json& layer : strategy["layers"]) {
    CHECK(layer["stage"] >= stage);
    stage = layer["stage"];
    CHECK(layer["devices_used"] <= 4);
  }
  CHECK(stage == 1);
  CHECK(strategy["layers"][0]["stage"] == 0);
  // Read back and written again: the same bytes.
  CHECK(write_strategy(parse_strategy_file(solved.output, "pipeline.json")) == solved.output);
}

TEST_CASE("solve --pipeline-stages: the table of stages, and what the search tried") {
  const test::CommandResult solved =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages auto --micro-batches 4");
  REQUIRE(solved.status == 0);
  CHECK(solved.output.rfind("gpt on 8 devices in ", 0) == 0);
  CHECK(solved.output.find("stage  layers") != std::string::npos);
  CHECK(solved.output.find("step time ") != std::string::npos);
  // auto: the divisors of 8 (1, 2, 4, 8), least bound first.
  CHECK(solved.output.find("pipelines of 4 stage counts x 1 micro-batch counts") != std::string::npos);
}

TEST_CASE("gpipe holds every micro-batch on every stage, 1f1b S - k on stage k") {
  auto stage_bytes = [](const std::string& schedule) {
    const test::CommandResult solved = test::run_pase("solve " + small_gpt() +
                                                      " --devices 8 --pipeline-stages 2 --micro-batches 8 --json --schedule " + schedule);
    REQUIRE(solved.status == 0);
    return json::parse(solved.output)["training"]["pipeline"]["stage_memory_bytes"];
  };
  const json onef = stage_bytes("1f1b"), gpipe = stage_bytes("gpipe");
  CHECK(gpipe[0].get<uint64_t>() > onef[0].get<uint64_t>());
  CHECK(gpipe[1].get<uint64_t>() > onef[1].get<uint64_t>());
}

TEST_CASE("pipeline options a run cannot take are refused in one line") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--pipeline-stages 3", "error: --pipeline-stages: 3 stages do not divide 8 devices evenly (give each stage's devices)\n"},
      {"--pipeline-stages two", "error: --pipeline-stages: expected a number of stages or auto, got 'two'\n"},
      {"--stage-devices 6,1", "error: --stage-devices add up to 7, not the 8 devices\n"},
      {"--stage-devices 6,x", "error: --stage-devices: expected positive device counts separated by commas (12,4), got '6,x'\n"},
      {"--stage-devices 4,4 --pipeline-stages 3", "error: --stage-devices: gives 2 stages, but --pipeline-stages is 3\n"},
      {"--schedule zb", "error: --schedule: expected 1f1b, gpipe or interleaved:V (V from 2 to 9999 chunks per stage), got 'zb'\n"},
      {"--schedule interleaved:2 --pipeline-stages 2",
       "error: --schedule interleaved:2: the search places each stage's layers in one contiguous range; interleaved "
       "stages (V ranges per device) are not searched yet (1f1b or gpipe)\n"},
      {"--pipeline-stages 2 --mesh 2x4",
       "error: --mesh: not with pipeline stages yet (each stage is solved without a mesh; docs/pipeline.md)\n"},
  };
  for (const auto& [options, message] : cases) {
    CAPTURE_BOUND(options);
    const test::CommandResult run = test::run_pase("solve " + small_gpt() + " --devices 8 " + options);
    CHECK(run.status == 2);
    CHECK(run.error == message);
  }
  const test::CommandResult many = test::run_pase("solve " + small_gpt() + " --devices 10 --pipeline-stages 10");
  CHECK(many.status == 2);
  CHECK(many.error == "error: --pipeline-stages: 10 stages, but the graph has 9 places a stage may begin (at each block)\n");
  const test::CommandResult tight =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --memory-per-device 1MiB");
  CHECK(tight.status == 3);
  CHECK(tight.error ==
        "error: refused: no pipeline of the stages tried fits the memory cap: some stage of every partition needs more "
        "than 1048576 bytes (0.00 GiB) per device\n");
}

TEST_CASE("a pipeline strategy is refused where one stage of every device is priced") {
  const test::CommandResult solved =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json");
  REQUIRE(solved.status == 0);
  const std::string file = test::write_temp_file("pipeline_strategy.json", solved.output);
  const test::CommandResult evaluated = test::run_pase("evaluate " + small_gpt() + " --strategy " + file);
  CHECK(evaluated.status == 1);
  CHECK(evaluated.error == "error: " + file +
                               ": training.pipeline: 2 stages; evaluate prices a strategy of one stage (pase solve "
                               "--pipeline-stages prices pipelines)\n");
  const test::CommandResult exported = test::run_pase("export " + file + " --format jax");
  CHECK(exported.status == 1);
  CHECK(exported.error == "error: " + file + ": has no plan: its 2 pipeline stages are not placed on meshes yet (docs/pipeline.md)\n");
}

TEST_CASE("evaluate --baseline megatron --pipeline-stages: Megatron-LM's equal stages, above the search's bound") {
  const test::CommandResult baseline = test::run_pase("evaluate " + small_gpt() +
                                                      " --devices 8 --pipeline-stages 2 --micro-batches 4 --baseline "
                                                      "megatron --tensor-parallel 2 --json");
  REQUIRE(baseline.status == 0);
  const json strategy = json::parse(baseline.output);
  // Two blocks each; the embeddings with the first, the head with the last.
  for (const json& layer : strategy["layers"]) {
    const std::string name = layer["name"];
    const int expected = name.rfind("transformer/h.2/", 0) == 0 || name.rfind("transformer/h.3/", 0) == 0 ||
                                 name == "transformer/ln_f" || name == "lm_head" || name == "loss"
                             ? 1
                             : 0;
    CAPTURE(name);
    CHECK(layer["stage"] == expected);
  }
  CHECK(strategy["memory"]["lower_bound_cost"].is_null());  // nothing searched
  const test::CommandResult searched =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json");
  REQUIRE(searched.status == 0);
  const json optimum = json::parse(searched.output);
  CHECK(optimum["memory"]["lower_bound_cost"].get<double>() <= strategy["total_cost"].get<double>());
  CHECK(optimum["total_cost"].get<double>() <= strategy["total_cost"].get<double>());
  const test::CommandResult given = test::run_pase("evaluate " + small_gpt() + " --devices 8 --pipeline-stages 2 --strategy " +
                                                   test::write_temp_file("pipeline_given.json", searched.output));
  CHECK(given.status == 1);  // a strategy file is refused before its stages are looked at
}
