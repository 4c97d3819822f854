// The calibrated model against training steps timed on an H100
// (tests/fixtures/gpu-h100/steps.json, docs/calibration.md "Measured on an
// H100"): each step is priced on one GPU with the profile measured there
// (h100-measured) and with the public-specification one (dgx-h100), the
// way scripts/gpu_calibration.py does, and must be within 35% of the
// measured median, unless tests/fixtures/gpu_step_graphs.json records a
// known gap, which must then still be one.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

json read_fixture(const std::string& relative) {
  std::ifstream in(test::source_path(relative));
  REQUIRE_MESSAGE(in, relative);
  return json::parse(in);
}

// The calibrated one-GPU step time of `model`'s graph, in milliseconds.
double predicted_ms(const json& graphs, const std::string& model, const std::string& dtype, const std::string& machine) {
  const json& entry = graphs.at(model);
  std::string command = entry["graph"].get<std::string>();
  if (command.rfind("import ", 0) == 0) command = "import " + test::source_path(command.substr(7));
  const std::string graph = test::write_temp_file("gpu-step-" + model + ".json", "");
  test::CommandResult made = test::run_pase(command + " -o " + graph);
  REQUIRE_MESSAGE(made.status == 0, made.error);
  test::CommandResult priced =
      test::run_pase("evaluate " + graph + " --baseline data-parallel --devices 1 --cost-model calibrated --machine " +
                     machine + " --dtype " + dtype + " " + entry["options"].get<std::string>() + " --json");
  REQUIRE_MESSAGE(priced.status == 0, priced.error);
  return json::parse(priced.output)["total_cost"].get<double>() * 1e3;
}

}  // namespace

TEST_CASE("calibrated model: training steps timed on an H100") {
  const json steps = read_fixture("tests/fixtures/gpu-h100/steps.json");
  const json fixture = read_fixture("tests/fixtures/gpu_step_graphs.json");
  REQUIRE(steps["cases"].size() == 7);
  for (const json& step : steps["cases"]) {
    const std::string model = step["model"], dtype = step["dtype"];
#ifndef PASE_HAVE_ONNX
    if (fixture["graphs"][model]["graph"].get<std::string>().rfind("import ", 0) == 0) continue;
#endif
    for (const char* machine : {"h100-measured", "dgx-h100"}) {
      const std::string id = model + ":" + dtype + ":" + machine;
      SUBCASE(id.c_str()) {
        const double measured = step["median_ms"], predicted = predicted_ms(fixture["graphs"], model, dtype, machine);
        INFO(id, ": predicted ", predicted, " ms, measured ", measured, " ms");
        const bool within = std::fabs(predicted / measured - 1) <= 0.35;
        if (fixture["known_gaps"].contains(id)) {
          INFO("known gap: ", fixture["known_gaps"][id].get<std::string>());
          CHECK_FALSE(within);
        } else {
          CHECK(within);
        }
      }
    }
  }
}
