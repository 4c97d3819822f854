// `pase frontier --pipeline-stages` end to end (docs/pipeline.md, "The
// frontier"): every point is what `solve --pipeline-stages` finds under a
// cap of its memory, the points trade memory for step strictly, the fastest
// is the search without a cap, and below the least one nothing fits one
// step further down; the JSON and the refusals.
#include <doctest/doctest.h>

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::ordered_json;

namespace {

const std::string& small_gpt() {
  return test::exported_model("gpt --layers 4 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
}

const std::string kOptions = " --devices 8 --pipeline-stages 2 --micro-batches 2";

// The step and memory `solve` finds under a cap of `bytes` (nullopt: nothing fits, exit 3).
std::optional<std::pair<double, uint64_t>> solved(uint64_t bytes) {
  const test::CommandResult solved = test::run_pase("solve " + small_gpt() + kOptions + " --no-plan --json " +
                                                    "--memory-per-device " + std::to_string(bytes));
  if (solved.status == 3) return std::nullopt;
  REQUIRE(solved.status == 0);
  const json strategy = json::parse(solved.output);
  return std::pair{strategy["total_cost"].get<double>(), strategy["memory"]["per_device_bytes"].get<uint64_t>()};
}

}  // namespace

TEST_CASE("frontier --pipeline-stages: each point the capped search's step at its memory, nothing below the least") {
  const double memory_step = test::sanitized_build() ? 0.3 : 0.1;  // fewer points under the sanitizers
  const std::string out = test::write_temp_file("pipeline_frontier.json", "");
  const test::CommandResult run =
      test::run_pase("frontier " + small_gpt() + kOptions + " --memory-step " + std::to_string(memory_step) + " --json " + out);
  REQUIRE(run.status == 0);
  const json doc = json::parse(read_text_file(out));
  CHECK(doc["format"] == "pase-frontier");
  CHECK(doc["truncated"] == false);
  const json& points = doc["points"];
  REQUIRE(points.size() >= (test::sanitized_build() ? 2 : 4));
  for (size_t i = 0; i < points.size(); ++i) {
    const json& p = points[i];
    CHECK(p["pipeline"]["stages"] == 2);
    CHECK(p["pipeline"]["stage_devices"].dump() == "[4,4]");
    CHECK(p["pipeline"]["micro_batches"] == 2);
    CHECK(p["lower_bound_cost"].get<double>() <= p["cost"].get<double>());
    if (i > 0) {  // strictly more memory for a strictly faster step
      CHECK(p["per_device_bytes"].get<uint64_t>() > points[i - 1]["per_device_bytes"].get<uint64_t>());
      CHECK(p["cost"].get<double>() < points[i - 1]["cost"].get<double>());
    }
  }
  // The least, a middle and the fastest point: solve under the cap each was
  // searched under finds its step and memory; the fastest had no cap.
  CHECK(points.back()["cap_bytes"].is_null());
  for (const size_t i : {size_t{0}, points.size() / 2}) {
    REQUIRE(points[i]["cap_bytes"].is_number());
    const auto [step, bytes] = solved(points[i]["cap_bytes"].get<uint64_t>()).value();
    CHECK(step == points[i]["cost"].get<double>());
    CHECK(bytes == points[i]["per_device_bytes"].get<uint64_t>());
  }
  const test::CommandResult free = test::run_pase("solve " + small_gpt() + kOptions + " --no-plan --json");
  REQUIRE(free.status == 0);
  CHECK(json::parse(free.output)["total_cost"].get<double>() == points.back()["cost"].get<double>());
  // The search below the least point: a step of its memory lower, nothing fits.
  const auto least = points[0]["per_device_bytes"].get<uint64_t>();
  CHECK_FALSE(solved(least - static_cast<uint64_t>(static_cast<double>(least) * memory_step)).has_value());
  CHECK(run.output.find(std::to_string(points.size()) + " points from the least memory") != std::string::npos);
}

TEST_CASE("frontier --pipeline-stages --mesh auto: the fastest point is solve's with --mesh auto") {
  const std::string out = test::write_temp_file("pipeline_frontier_mesh.json", "");
  const test::CommandResult run =
      test::run_pase("frontier " + small_gpt() + kOptions + " --mesh auto --max-points 1 --json " + out);
  REQUIRE(run.status == 0);
  CHECK(run.output.rfind("gpt on 8 devices (each stage on its default mesh): step-memory frontier of pipelines", 0) == 0);
  const test::CommandResult free = test::run_pase("solve " + small_gpt() + kOptions + " --mesh auto --json");
  REQUIRE(free.status == 0);
  CHECK(json::parse(read_text_file(out))["points"][0]["cost"].get<double>() ==
        json::parse(free.output)["total_cost"].get<double>());
}

TEST_CASE("frontier --pipeline-stages: --max-points stops the sweep and says so; refusals in one line") {
  const test::CommandResult two = test::run_pase("frontier " + small_gpt() + kOptions + " --max-points 2");
  REQUIRE(two.status == 0);
  CHECK(two.output.find("2 points from the least memory") != std::string::npos);
  CHECK(two.output.find("; stopped at 2 points (--max-points): below ") != std::string::npos);
  const test::CommandResult mesh = test::run_pase("frontier " + small_gpt() + kOptions + " --mesh 2x4");
  CHECK(mesh.status == 2);
  CHECK(mesh.error ==
        "error: frontier: --mesh with --pipeline-stages: auto only (each stage on its default mesh's layouts)\n");
  const test::CommandResult step = test::run_pase("frontier " + small_gpt() + kOptions + " --memory-step 1");
  CHECK(step.status == 2);
  CHECK(step.error == "error: frontier: --memory-step must be in [0, 1)\n");
}
