// The calibrated model against published measured steps of large language
// models under FSDP (tests/fixtures/published_llm_runs.json,
// docs/calibration.md#large-language-models-under-fsdp): each run priced as
// its configuration, its step within 30% of the measured one, and the
// memory it needs within the 80 GiB the run had. No factor per entry.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

TEST_CASE("calibrated model: published FSDP steps of large language models, within 30%") {
  const json runs = json::parse(read_text_file(test::source_path("tests/fixtures/published_llm_runs.json")));
  REQUIRE(runs["entries"].size() >= 3);
  for (const json& run : runs["entries"]) {
    const std::string id = run["id"].get<std::string>();
    CAPTURE(id);
    const std::string graph = test::write_temp_file("llm-fidelity-" + id + ".json", "");
    const test::CommandResult made = test::run_pase(run["graph"].get<std::string>() + " -o " + graph);
    REQUIRE_MESSAGE(made.status == 0, made.error);
    const test::CommandResult priced = test::run_pase(
        "evaluate " + graph + " --devices " + std::to_string(run["devices"].get<int>()) +
        " --baseline fsdp --cost-model calibrated --machine dgx-a100 --dtype bf16 --attention fused " +
        run["options"].get<std::string>() + " --json");
    REQUIRE_MESSAGE(priced.status == 0, priced.error);
    const json strategy = json::parse(priced.output);
    const double measured = run["global_batch"].get<double>() * run["seq"].get<double>() /
                            (run["devices"].get<double>() * run["tokens_per_second_per_gpu"].get<double>());
    const double predicted = strategy["total_cost"].get<double>();
    CAPTURE(predicted);
    CAPTURE(measured);
    CHECK(std::fabs(predicted / measured - 1) <= 0.30);
    CHECK(strategy["memory"]["per_device_bytes"].get<double>() <= 80.0 * (1 << 30));
  }
}
