// A strategy that needs more memory than a device of the --machine has is
// said in one line by solve, evaluate, compare and batch (docs/memory.md,
// "The cap"), and nothing is said when it fits or no machine is given.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "costmodel/cost_model.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

// The test profile with `memory_gb` per device.
std::string profile_with_memory(const std::string& name, double memory_gb) {
  json profile = json::parse(test::kTestMachineProfile);
  profile["device"]["memory_gb"] = memory_gb;
  return test::write_temp_file(name, profile.dump());
}

// The words for a strategy of `gib` GiB per device on the 0.1 GB (0.09 GiB)
// machine, which keeps a quarter (its reserve's cap under 1 GiB) from training.
std::string over_words(const std::string& gib) {
  return "the strategy needs " + gib + " GiB per device, more than the 0.07 GiB a device of the machine has for "
         "training (0.09 GiB less a 0.02 GiB reserve; --memory-per-device machine finds the best strategy that fits)";
}

}  // namespace

TEST_CASE("a strategy over the machine's memory is said in one line") {
  const std::string alexnet = test::source_path("data/graphs/alexnet.json");
  const std::string small = profile_with_memory("machine_memory_small.json", 0.1);  // 0.09 GiB
  const std::string large = profile_with_memory("machine_memory_large.json", 1000);
  const std::string calibrated = " --devices 8 --cost-model calibrated --machine ";
  SUBCASE("solve: on stderr, exit 0; not when it fits, nor without a machine") {
    test::CommandResult over = test::run_pase("solve " + alexnet + calibrated + small);
    CHECK(over.status == 0);
    CHECK(over.error == "warning: " + over_words("0.22") + "\n");
    CHECK(test::run_pase("solve " + alexnet + calibrated + small + " --json").error ==
          "warning: " + over_words("0.22") + "\n");
    CHECK(test::run_pase("solve " + alexnet + calibrated + large).error.empty());
    CHECK(test::run_pase("solve " + alexnet + " --devices 8").error.empty());
  }
  SUBCASE("evaluate: on stderr, exit 0") {
    test::CommandResult over = test::run_pase("evaluate " + alexnet + calibrated + small + " --baseline data-parallel");
    CHECK(over.status == 0);
    CHECK(over.error == "warning: " + over_words("0.99") + "\n");
  }
  SUBCASE("compare: each row over it says so in its note") {
    test::CommandResult over = test::run_pase("compare " + alexnet + calibrated + small);
    CHECK(over.status == 0);
    CHECK(over.output.find("over the machine's memory") != std::string::npos);
    CHECK(test::run_pase("compare " + alexnet + calibrated + large).output.find("over the machine's memory") ==
          std::string::npos);
  }
  SUBCASE("batch: in the result's message") {
    const std::string summary = test::write_temp_file("machine_memory_batch.json", "");
    test::CommandResult over =
        test::run_pase("batch " + alexnet + calibrated + small + " --summary \"" + summary + "\"");
    CHECK(over.status == 0);
    const json result = json::parse(read_text_file(summary))["results"][0];
    CHECK(result["status"] == "ok");
    CHECK(result["message"] == over_words("0.22"));
  }
}

TEST_CASE("the machine's reserve: a strategy between the usable and the whole memory is said; --memory-reserve moves the line") {
  const std::string alexnet = test::source_path("data/graphs/alexnet.json");
  // 0.25 GB: 0.233 GiB, of which a quarter is kept; the strategy needs 0.22 GiB.
  const std::string machine = profile_with_memory("machine_memory_reserve.json", 0.25);
  const std::string calibrated = " --devices 8 --cost-model calibrated --machine " + machine;
  CHECK(test::run_pase("solve " + alexnet + calibrated).error ==
        "warning: the strategy needs 0.22 GiB per device, more than the 0.17 GiB a device of the machine has for "
        "training (0.23 GiB less a 0.06 GiB reserve; --memory-per-device machine finds the best strategy that fits)\n");
  CHECK(test::run_pase("solve " + alexnet + calibrated + " --memory-reserve 0").error.empty());
  CHECK(default_memory_reserve(80 * (uint64_t{1} << 30)) == (uint64_t{1} << 30) + 79 * (uint64_t{1} << 30) / 20);
  CHECK(default_memory_reserve(1000) == 250);
}
