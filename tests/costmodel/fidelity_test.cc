// The calibrated model against published measured training throughputs
// (tests/fixtures/published_throughputs.json, docs/calibration.md): for each
// entry the data-parallel strategy is priced at 1 and 8 GPUs, the same way
// scripts/fidelity_table.py does, and each step time must be within 35% of
// the measured one and each weak-scaling factor within 0.5 of the measured,
// unless the entry records a known gap (docs/calibration.md says why).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

// The calibrated step time of the data-parallel strategy for `gpus` GPUs.
double predicted_step(const json& entry, int gpus) {
  const int64_t batch = entry["batch_per_gpu"].get<int64_t>() * gpus;
  const std::string graph =
      test::write_temp_file("fidelity-" + entry["id"].get<std::string>() + "-" + std::to_string(gpus) + ".json", "");
  std::string command = entry["graph"].get<std::string>();
  if (command.rfind("import ", 0) == 0) command = "import " + test::source_path(command.substr(7));
  test::CommandResult made = test::run_pase(command + " --batch " + std::to_string(batch) + " -o " + graph);
  REQUIRE_MESSAGE(made.status == 0, made.error);
  test::CommandResult priced = test::run_pase("evaluate " + graph + " --baseline data-parallel --devices " +
                                              std::to_string(gpus) + " --cost-model calibrated --machine " +
                                              entry["machine"].get<std::string>() + " --dtype " +
                                              entry["dtype"].get<std::string>() + " --optimizer " +
                                              entry["optimizer"].get<std::string>() +
                                              (entry.contains("memory_format")
                                                   ? " --memory-format " + entry["memory_format"].get<std::string>()
                                                   : std::string()) +
                                              " --json");
  REQUIRE_MESSAGE(priced.status == 0, priced.error);
  return json::parse(priced.output)["total_cost"].get<double>();
}

}  // namespace

TEST_CASE("calibrated model: published data-parallel throughputs") {
  std::ifstream in(test::source_path("tests/fixtures/published_throughputs.json"));
  REQUIRE(in);
  const json fixture = json::parse(in);
  REQUIRE(fixture["entries"].size() >= 6);
  for (const json& entry : fixture["entries"]) {
#ifndef PASE_HAVE_ONNX
    if (entry["graph"].get<std::string>().rfind("import ", 0) == 0) continue;
#endif
    SUBCASE(entry["id"].get<std::string>().c_str()) {
      const double samples = entry["batch_per_gpu"].get<double>() * entry["items_per_sample"].get<double>();
      const double measured_1 = samples / entry["throughput"]["1"].get<double>();
      const double measured_8 = samples / (entry["throughput"]["8"].get<double>() / 8);
      const double predicted_1 = predicted_step(entry, 1), predicted_8 = predicted_step(entry, 8);
      INFO("predicted step ", predicted_1, " s and ", predicted_8, " s; measured ", measured_1, " s and ", measured_8, " s");
      const bool step_1 = std::fabs(predicted_1 / measured_1 - 1) <= 0.35;
      const bool step_8 = std::fabs(predicted_8 / measured_8 - 1) <= 0.35;
      const bool scaling = std::fabs(8 * predicted_1 / predicted_8 - 8 * measured_1 / measured_8) <= 0.5;
      if (entry.contains("known_gap")) {
        // A documented gap must still be one: when the model comes within the
        // bounds, the note goes and the entry is held to them.
        INFO("known gap: ", entry["known_gap"].get<std::string>());
        CHECK_FALSE((step_1 && step_8 && scaling));
      } else {
        CHECK(step_1);
        CHECK(step_8);
        CHECK(scaling);
      }
    }
  }
}
