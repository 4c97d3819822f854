// --splits from the command line: under the calibrated model a solve keeps
// every tensor of every layer in rows of at least 128 elements per device,
// recounted here from the strategy file alone (each tensor's shape and
// split), and --splits all gives the paper's space back.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

const std::string kCalibrated = " --cost-model calibrated --machine dgx-a100 --dtype bf16";

// The shortest row any tensor of the strategy file leaves a device: below a
// tensor's innermost split dimension d, shape[d] / split[d] times the
// extents after d (a tensor not split at all has no short row).
int64_t shortest_row(const json& strategy) {
  int64_t shortest = std::numeric_limits<int64_t>::max();
  for (const json& layer : strategy["layers"])
    for (const char* role : {"inputs", "outputs", "weights"}) {
      if (!layer.contains(role)) continue;
      for (const json& tensor : layer[role]) {
        const std::vector<int64_t> shape = tensor["shape"], split = tensor["split"];
        int64_t after = 1;
        for (size_t i = shape.size(); i-- > 0;) {
          if (split[i] > 1) {
            shortest = std::min(shortest, shape[i] / split[i] * after);
            break;
          }
          after *= shape[i];
        }
      }
    }
  return shortest;
}

}  // namespace

TEST_CASE("solve --splits: the calibrated model's searches keep rows of 128, --splits all does not") {
  const std::string graph = test::write_temp_file("kernel_splits_transformer.json", "");
  REQUIRE(test::run_pase("models export transformer -o " + graph).status == 0);
  const test::CommandResult kernels = test::run_pase("solve " + graph + " --devices 64" + kCalibrated + " --json");
  REQUIRE(kernels.status == 0);
  const json kept = json::parse(kernels.output);
  CHECK(shortest_row(kept) >= 128);
  const test::CommandResult all =
      test::run_pase("solve " + graph + " --devices 64" + kCalibrated + " --splits all --json");
  REQUIRE(all.status == 0);
  const json whole = json::parse(all.output);
  CHECK(shortest_row(whole) < 128);  // the whole space's optimum cuts some row shorter
  CHECK(whole["total_cost"].get<double>() < kept["total_cost"].get<double>());
  // A given strategy is priced as it is: the whole space's optimum evaluates
  // at its own cost under the default rule.
  const std::string file = test::write_temp_file("kernel_splits_all.json", all.output);
  const test::CommandResult evaluated =
      test::run_pase("evaluate " + graph + " --devices 64" + kCalibrated + " --strategy " + file + " --json");
  REQUIRE(evaluated.status == 0);
  CHECK(json::parse(evaluated.output)["total_cost"].get<double>() ==
        doctest::Approx(whole["total_cost"].get<double>()).epsilon(1e-12));
}

TEST_CASE("--splits: a value other than kernels or all is refused in one line") {
  const test::CommandResult bad =
      test::run_pase("solve " + test::source_path("data/graphs/alexnet.json") + " --devices 8 --splits some");
  CHECK(bad.status == 2);
  CHECK(bad.error == "error: --splits: expected kernels or all, got 'some'\n");
}
