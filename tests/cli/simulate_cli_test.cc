// `pase simulate` end to end (docs/simulate.md): without overlap a plan's
// simulated step is the step evaluate prices, to the digit; a pipeline's
// stages each get their row; the trace and the timeline are written; what
// cannot be simulated is refused in one line.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

const std::string& small_gpt() {
  return test::exported_model("gpt --layers 4 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
}

// The number after `label` in `text` ("simulated step 0.0050724 seconds": 0.0050724).
std::string number_after(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  REQUIRE(at != std::string::npos);
  const size_t from = at + label.size();
  return text.substr(from, text.find(' ', from) - from);
}

}  // namespace

TEST_CASE("simulate --no-overlap: a plan without stages takes exactly the step evaluate prices") {
  const std::string file = test::write_temp_file("simulate_plan.json", "");
  REQUIRE(test::run_pase("solve " + small_gpt() + " --devices 8 --micro-batches 4 --machine dgx-a100 --zero 1 -o \"" +
                         file + "\"").status == 0);
  const test::CommandResult simulated = test::run_pase("simulate " + small_gpt() + " --strategy \"" + file + "\" --no-overlap");
  REQUIRE(simulated.status == 0);
  const json strategy = json::parse(read_text_file(file));
  const std::string total = number_after(simulated.output, "the additive model's ");
  CHECK(number_after(simulated.output, "simulated step ") == total);
  CHECK(std::stod(total) == doctest::Approx(strategy["total_cost"].get<double>()).epsilon(1e-9));
  CHECK(simulated.output.find("gradient collectives after it (--no-overlap)") != std::string::npos);
  CHECK(simulated.output.find("    0            0-7 ") != std::string::npos);
  // With overlap: never longer.
  const test::CommandResult overlapped = test::run_pase("simulate " + small_gpt() + " --strategy \"" + file + "\"");
  REQUIRE(overlapped.status == 0);
  CHECK(std::stod(number_after(overlapped.output, "simulated step ")) <= std::stod(total) * (1 + 1e-12));
}

TEST_CASE("simulate a pipeline: a row per stage, the formula beside it, the trace and the timeline written") {
  const std::string file = test::write_temp_file("simulate_pipeline.json", "");
  REQUIRE(test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 4 --micro-batches 8 --machine dgx-a100 -o \"" +
                         file + "\"").status == 0);
  const std::string trace = test::write_temp_file("simulate_trace.json", ""), svg = test::write_temp_file("simulate.svg", "");
  const test::CommandResult simulated = test::run_pase("simulate " + small_gpt() + " --strategy \"" + file + "\" --trace \"" +
                                                       trace + "\" --svg \"" + svg + "\"");
  REQUIRE(simulated.status == 0);
  CHECK(simulated.output.find("in 4 pipeline stages (1f1b): ") != std::string::npos);
  CHECK(simulated.output.find("the pipeline's formula (docs/pipeline.md) ") != std::string::npos);
  for (const char* row : {"    0            0-1 ", "    1            2-3 ", "    2            4-5 ", "    3            6-7 "})
    CHECK(simulated.output.find(row) != std::string::npos);
  const json events = json::parse(read_text_file(trace));
  CHECK(events["traceEvents"].size() > 100);
  CHECK(read_text_file(svg).rfind("<svg ", 0) == 0);
}

TEST_CASE("simulate refuses in one line what it cannot run") {
  const test::CommandResult none = test::run_pase("simulate " + small_gpt());
  CHECK(none.status == 1);
  CHECK(none.error == "error: simulate: give exactly one of --strategy FILE or --baseline NAME\n");
}

TEST_CASE("simulate an interleaved pipeline: each stage's chunks in Megatron-LM's order, a send per chunk boundary") {
  const std::string file = test::write_temp_file("simulate_interleaved.json", "");
  REQUIRE(test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --schedule interleaved:2 "
                         "--micro-batches 4 --machine dgx-a100 -o \"" + file + "\"").status == 0);
  const std::string trace = test::write_temp_file("simulate_interleaved_trace.json", "");
  const test::CommandResult simulated =
      test::run_pase("simulate " + small_gpt() + " --strategy \"" + file + "\" --trace \"" + trace + "\"");
  REQUIRE(simulated.status == 0);
  CHECK(simulated.output.find("in 2 pipeline stages (interleaved:2): ") != std::string::npos);
  for (const char* row : {"    0            0-3 ", "    1            4-7 "}) CHECK(simulated.output.find(row) != std::string::npos);
  // Sends: 3 chunk boundaries, each way, per micro-batch.
  size_t sends = 0, round = 0;
  const json events = json::parse(read_text_file(trace));
  for (const json& event : events["traceEvents"]) {
    if (event.value("ph", "") != "X" || event["name"].get<std::string>().rfind("send", 0) != 0) continue;
    ++sends;
    // Chunk 1 (stage 1) hands on to chunk 2 (stage 0), whose gradient goes back: round the stages.
    if (event["name"] == "send activations to stage 0" || event["name"] == "send gradients to stage 1") ++round;
  }
  CHECK(sends == 3 * 2 * 4);
  CHECK(round == 2 * 4);
  // Sends overlap compute: close to the formula, which adds them.
  const double step = std::stod(number_after(simulated.output, "simulated step "));
  const double formula = std::stod(number_after(simulated.output, "the pipeline's formula (docs/pipeline.md) "));
  CHECK(step == doctest::Approx(formula).epsilon(0.05));
}

TEST_CASE("solve --simulate: the table, then the optimum's step simulated; the simulation's files need it") {
  const test::CommandResult solved = test::run_pase("solve " + small_gpt() + " --devices 8 --micro-batches 2 --simulate");
  REQUIRE(solved.status == 0);
  const size_t table = solved.output.find("total cost "), simulated = solved.output.find("gpt on 8 devices, the optimum: ");
  REQUIRE(table != std::string::npos);
  REQUIRE(simulated != std::string::npos);
  CHECK(table < simulated);
  // The `pase` model lists no once-per-step term: the simulated step is the sum, to the digit.
  CHECK(number_after(solved.output, "simulated step ") == number_after(solved.output, "the additive model's "));
  CHECK(solved.output.find("(simulated 0.0% from it)") != std::string::npos);
  const test::CommandResult refused = test::run_pase("solve " + small_gpt() + " --devices 8 --svg x.svg");
  CHECK(refused.status == 2);
  CHECK(refused.error == "error: --svg: applies with --simulate\n");
}

TEST_CASE("simulate --bucket-size: the gradient syncs in buckets, each after its layers' last backward") {
  const std::string file = test::write_temp_file("simulate_buckets.json", "");
  REQUIRE(test::run_pase("solve " + small_gpt() + " --devices 8 --micro-batches 2 --machine dgx-a100 "
                         "--gradient-overlap off -o \"" + file + "\"").status == 0);
  const std::string common = "simulate " + small_gpt() + " --strategy \"" + file + "\" --gradient-overlap off";
  const auto syncs_and_step = [&](const std::string& options) {
    const std::string trace = test::write_temp_file("simulate_buckets_trace.json", "");
    const test::CommandResult run = test::run_pase(common + " " + options + " --trace \"" + trace + "\"");
    REQUIRE(run.status == 0);
    size_t syncs = 0;
    const json events = json::parse(read_text_file(trace));
    for (const json& event : events["traceEvents"]) syncs += event.value("cat", "") == "gradient sync";
    return std::make_pair(syncs, std::stod(number_after(run.output, "simulated step ")));
  };
  const auto [per_layer, step] = syncs_and_step("");
  const auto [one_bucket, bucketed_step] = syncs_and_step("--bucket-size 1GiB");
  CHECK(per_layer > 10);
  CHECK(one_bucket == 1);  // every gradient in one bucket, sent after the last backward
  CHECK(bucketed_step >= step);
  const test::CommandResult bad = test::run_pase(common + " --bucket-size lots");
  CHECK(bad.status == 2);
  CHECK(bad.error == "error: --bucket-size: expected a size (25MiB, 100MB, bytes), got 'lots'\n");
}
