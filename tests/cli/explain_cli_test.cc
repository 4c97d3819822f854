// `pase explain`: the text and JSON a user reads, the errors, and the marks
// `solve`, `evaluate` and `compare` give layers and baselines that leave devices idle.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using json = nlohmann::json;

namespace {

std::string alexnet() { return "\"" + pase::test::source_path("data/graphs/alexnet.json") + "\""; }

// x (8,16) -> fc1 (32 units) -> fc2 (4 units), cutoff 1 (tests/strategy/explain_test.cc works it by hand).
const char* const kTwoLayers =
    R"({"format": "pase-graph", "version": 1, "name": "two", "cutoff": 1, "tensors": {"x": [8, 16]},
        "nodes": [{"name": "fc1", "op": "fc", "inputs": ["x"], "units": 32},
                  {"name": "fc2", "op": "fc", "inputs": ["fc1"], "units": 4}]})";

// The line of `text` that starts with `start` ("" if none).
std::string line_of(const std::string& text, const std::string& start) {
  size_t at = text.rfind("\n" + start);
  if (at == std::string::npos) return "";
  size_t end = text.find('\n', at + 1);
  return text.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}

}  // namespace

TEST_CASE("pase explain: one layer of the optimum, as text") {
  pase::test::CommandResult result = pase::test::run_pase("explain " + alexnet() + " --devices 8 --layer fc6");
  REQUIRE(result.status == 0);
  CHECK(result.error == "");
  const std::string& out = result.output;
  CHECK(out.find("alexnet on 8 devices (10 TFLOP/s, 16 GB/s), cost model pase, strategy the optimum: " +
                 pase::test::flop_text(pase::test::zoo_optimum("alexnet", 8)) + " flop, 9.71 ms a step\n") == 0);
  CHECK(out.find("\nfc6: fc, dims 'bnk' (128,4096,9216), ") != std::string::npos);
  CHECK(out.find("  config ") != std::string::npos);
  CHECK(out.find("n2\u00b7k4") != std::string::npos);  // the recorded optimum's configuration (tests/expected), by its letters
  CHECK(out.find("  weight-gradient all-reduce ") != std::string::npos);
  CHECK(out.find("  redistribution of input 'flat' ") != std::string::npos);
  CHECK(out.find("  redistribution to 'fc7' ") != std::string::npos);
  CHECK(out.find("data-parallel") != std::string::npos);
  CHECK(out.find("\nwhy: Splitting 'n' 2 ways and 'k' 4 ways (n2\u00b7k4) is cheapest given its neighbours: data parallelism, "
                 "splitting the batch 'b' 8 ways (b8), would save ") != std::string::npos);
}

TEST_CASE("pase explain --all --json: every layer, locally optimal, deltas relative to the chosen") {
  pase::test::CommandResult result = pase::test::run_pase("explain " + alexnet() + " -p 8 --all --json --top 3");
  REQUIRE(result.status == 0);
  json doc = json::parse(result.output);
  CHECK(doc["format"] == "pase-explain");
  CHECK(doc["version"] == 1);
  CHECK(doc["strategy"] == "optimum");
  CHECK(doc["total_cost"].get<double>() == pase::test::zoo_optimum("alexnet", 8));
  REQUIRE(doc["layers"].size() == 14);
  for (const json& layer : doc["layers"]) {
    CAPTURE(layer["name"]);
    CHECK(layer["cheaper_alternatives"] == 0);
    CHECK(layer["chosen"]["delta"] == 0.0);
    CHECK(layer["alternatives"].size() <= 3);
    for (const json& alternative : layer["alternatives"]) CHECK(alternative["delta"].get<double>() >= 0);
    double sum = 0;
    for (const json& term : layer["chosen"]["terms"]) sum += term["cost"].get<double>();
    CHECK(sum == doctest::Approx(layer["chosen"]["local_cost"].get<double>()).epsilon(1e-12));
    CHECK(!layer["reason"].get<std::string>().empty());
  }
  CHECK(doc["layers"][10]["name"] == "fc6");
  CHECK(doc["layers"][10]["chosen"]["config"] == json({1, 2, 4}));
}

TEST_CASE("pase explain --strategy: a hand-written strategy, and the footnote for idle devices") {
  const std::string graph = pase::test::write_temp_file("two.json", kTwoLayers);
  const std::string strategy = pase::test::write_temp_file(
      "two_strategy.json",
      R"({"format": "pase-strategy", "version": 1, "graph": "two", "devices": 2,
          "layers": [{"name": "fc1", "config": [2, 1, 1]}, {"name": "fc2", "config": [1, 1, 1]}]})");
  pase::test::CommandResult result = pase::test::run_pase("explain \"" + graph + "\" --strategy \"" + strategy + "\" --layer fc2");
  REQUIRE(result.status == 0);
  CHECK(result.output.find(", strategy " + strategy + ": ") != std::string::npos);
  // fc2 on one device: 3·8·4·32 FLOP and the input gathered (2r·128 FLOP) cost more than
  // splitting the batch, which needs 64 ns of weight-gradient all-reduce but no redistribution.
  CHECK(result.output.find("\nwhy: Splitting the batch 'b' 2 ways (b2) instead would save 128 ns of redistribution of "
                           "input 'fc1' at 16 GB/s and 0.154 ns of compute but add 64 ns of weight-gradient all-reduce, "
                           "64.2 ns less a step: this strategy is not the best choice for this layer given its neighbours.\n") !=
        std::string::npos);
  CHECK(result.output.find("\n* on fewer than the 2 devices: the others idle for that layer\n") != std::string::npos);
  CHECK(result.output.find("  devices ") != std::string::npos);
  CHECK(result.output.find("1*") != std::string::npos);
}

TEST_CASE("pase explain: errors are one line with a documented exit status") {
  const std::string graph = pase::test::write_temp_file("two_errors.json", kTwoLayers);
  SUBCASE("an unknown layer, with a suggestion") {
    pase::test::CommandResult result = pase::test::run_pase("explain " + alexnet() + " --devices 8 --layer fc77");
    CHECK(result.status == 1);
    CHECK(result.error == "error: --layer: no layer 'fc77' in graph 'alexnet' (did you mean 'fc7'?)\n");
    CHECK(result.output == "");
  }
  SUBCASE("a strategy that does not match the graph") {
    const std::string strategy = pase::test::write_temp_file(
        "mismatch.json", R"({"format": "pase-strategy", "version": 1, "devices": 2,
                             "layers": [{"name": "fc1", "config": [2, 1, 1]}, {"name": "fc3", "config": [1, 1, 1]}]})");
    pase::test::CommandResult result = pase::test::run_pase("explain \"" + graph + "\" --strategy \"" + strategy + "\" --layer fc1");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + strategy + ": layer 'fc3': no such vertex in graph 'two' (did you mean 'fc1'?)\n");
  }
  SUBCASE("a configuration the graph does not allow") {
    const std::string strategy = pase::test::write_temp_file(
        "bad_config.json", R"({"format": "pase-strategy", "version": 1, "devices": 2,
                               "layers": [{"name": "fc1", "config": [2, 2, 1]}, {"name": "fc2", "config": [1, 1, 1]}]})");
    pase::test::CommandResult result = pase::test::run_pase("explain \"" + graph + "\" --strategy \"" + strategy + "\" --all");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + strategy +
                              ": layer 'fc1': field 'config': (2,2,1) is not a valid configuration (product 4 exceeds 2 devices)\n");
  }
  SUBCASE("neither --layer nor --all") {
    pase::test::CommandResult result = pase::test::run_pase("explain " + alexnet() + " --devices 8");
    CHECK(result.status == 2);
    CHECK(result.error == "error: explain: give exactly one of --layer NAME, --all or --boundary K\n");
  }
  SUBCASE("no device count") {
    pase::test::CommandResult result = pase::test::run_pase("explain " + alexnet() + " --layer fc6");
    CHECK(result.status == 2);
    CHECK(result.error == "error: --devices: required without --strategy\n");
  }
  SUBCASE("a negative --top") {
    pase::test::CommandResult result = pase::test::run_pase("explain " + alexnet() + " -p 8 --layer fc6 --top -1");
    CHECK(result.status == 2);
    CHECK(result.error == "error: --top: expected a non-negative count, got -1\n");
  }
}

TEST_CASE("pase solve and evaluate: layers on fewer devices than available are marked") {
  pase::test::CommandResult solved = pase::test::run_pase("solve " + alexnet() + " --devices 8 --no-plan");
  REQUIRE(solved.status == 0);
  // alexnet's loss splits only its classes 2 ways at the optimum (tests/expected).
  CHECK(line_of(solved.output, "loss ").find(" 2*  ") != std::string::npos);
  CHECK(line_of(solved.output, "fc6 ").find(" 8  ") != std::string::npos);
  CHECK(line_of(solved.output, "fc6 ").find("*") == std::string::npos);
  CHECK(solved.output.find("\n* on fewer than the 8 devices (the others idle for that layer): 1 of 14 layers; `pase explain "
                           "GRAPH --devices 8 --layer NAME` says why\n") != std::string::npos);
  pase::test::CommandResult evaluated = pase::test::run_pase("evaluate " + alexnet() + " --baseline data-parallel --devices 8");
  REQUIRE(evaluated.status == 0);
  CHECK(evaluated.output.find("* ") == std::string::npos);  // data parallelism uses all 8 everywhere
}

TEST_CASE("pase compare: the data-parallel baseline says when the batch leaves devices idle") {
  const std::string graph = pase::test::write_temp_file("two_compare.json", kTwoLayers);
  // A batch of 8 splits at most 8 ways: at p = 16 data parallelism uses half the devices.
  pase::test::CommandResult result = pase::test::run_pase("compare \"" + graph + "\" --devices 8,16 --mcmc-iterations 100");
  REQUIRE(result.status == 0);
  CHECK(result.output.find("the batch splits at most 8 ways: uses 8 of the 16 devices") != std::string::npos);
  CHECK(result.output.find("uses 8 of the 8") == std::string::npos);
}

// explain once took no --dtype or --optimizer and priced every strategy at
// fp32 with Adam: a bf16 plan was explained at fp32 prices (4.4 times its
// cost on dgx-a100). It now takes the file's memory setup unless told.
TEST_CASE("pase explain: a strategy file is priced at its recorded dtype and optimizer unless --dtype/--optimizer say") {
  const std::string graph = pase::test::source_path("data/graphs/transformer.json");
  const std::string calibrated = " --cost-model calibrated --machine dgx-a100";
  const std::string file = pase::test::write_temp_file("explain-bf16.json", "");
  // --no-plan: the recorded cost is the configurations' own (a plan's searched layouts are priced otherwise, below).
  REQUIRE(pase::test::run_pase("solve " + graph + " --devices 8 --dtype bf16 --optimizer sgd --no-plan" + calibrated +
                               " -o " + file).status == 0);
  const double recorded = nlohmann::json::parse(pase::read_text_file(file))["total_cost"].get<double>();
  auto explained_total = [&](const std::string& extra) {
    const pase::test::CommandResult result =
        pase::test::run_pase("explain " + graph + " --strategy " + file + " --layer encoder/layer0/ff/ff1 --json" + calibrated + extra);
    REQUIRE(result.status == 0);
    return nlohmann::json::parse(result.output)["total_cost"].get<double>();
  };
  CHECK(explained_total("") == doctest::Approx(recorded).epsilon(1e-9));
  CHECK(explained_total(" --dtype bf16 --optimizer sgd") == doctest::Approx(recorded).epsilon(1e-9));
  CHECK(explained_total(" --dtype fp32") > recorded * 2);  // told otherwise: fp32 GEMMs

  // A plan whose layouts were searched (the calibrated model's, on the default mesh): explained on its
  // axes, at the cost the solve recorded and its plan realizes.
  REQUIRE(pase::test::run_pase("solve " + graph + " --devices 8 --dtype bf16 --optimizer sgd" + calibrated + " -o " + file)
              .status == 0);
  const nlohmann::json searched = nlohmann::json::parse(pase::read_text_file(file));
  REQUIRE(searched["axis_assignment"]["proof"] == "searched");
  CHECK(explained_total("") == doctest::Approx(searched["total_cost"].get<double>()).epsilon(1e-9));
  CHECK(explained_total("") == doctest::Approx(searched["realized_total_cost"].get<double>()).epsilon(1e-9));
}
