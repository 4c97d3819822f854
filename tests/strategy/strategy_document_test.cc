// The strategy file as one document type: what the writer writes, the reader
// reads back, field for field, and writing it again gives the same bytes.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/text_file.h"
#include "strategy/strategy_document.h"
#include "test_support.h"

using namespace pase;

namespace {

std::string graph_path(const std::string& name) { return "\"" + test::source_path("data/graphs/" + name + ".json") + "\""; }

// The file a command writes, read back (with its plan) and written again.
void check_round_trip(const std::string& args) {
  CAPTURE(args);
  const test::CommandResult result = test::run_pase(args);
  REQUIRE(result.status == 0);
  const StrategyDocument read = parse_strategy_file(result.output, "written.json", /*with_plan=*/true);
  CHECK(write_strategy(read) == result.output);
}

}  // namespace

TEST_CASE("strategy document: every field the writer writes is read back to the same bytes") {
  SUBCASE("placed optimum: plan, solver record, memory") {
    check_round_trip("solve " + graph_path("alexnet") + " --devices 8 --json");
    check_round_trip("solve " + graph_path("transformer") + " --devices 8 --mesh dp=2,tp=4 --json");
  }
  SUBCASE("capped: the cap, its bound and gap") {
    check_round_trip("solve " + graph_path("transformer") + " --devices 8 --memory-per-device 3GiB --json");
  }
  SUBCASE("bounded: not exact, lower bound, gap, relaxed edges") {
    check_round_trip("solve " + graph_path("transformer") + " --devices 8 --max-work 100000 --json");
  }
  SUBCASE("timings, calibrated model and dtype") {
    check_round_trip("solve " + graph_path("rnnlm") +
                     " --devices 16 --timings --cost-model calibrated --machine dgx-a100 --dtype bf16 --optimizer sgd --json");
  }
  SUBCASE("no plan on the default mesh: the reason") {
    const test::CommandResult result = test::run_pase("solve " + graph_path("rnnlm") + " --devices 12 --json");
    REQUIRE(result.status == 0);
    REQUIRE(result.output.find("\"plan_unavailable\": ") != std::string::npos);
    CHECK(write_strategy(parse_strategy_file(result.output, "written.json", true)) == result.output);
  }
  SUBCASE("an evaluated baseline: no solver record") {
    check_round_trip("evaluate " + graph_path("alexnet") + " --devices 8 --baseline owt --json");
  }
  SUBCASE("a lenient import's replaced nodes") {
    nlohmann::json graph = nlohmann::json::parse(read_text_file(test::source_path("data/graphs/alexnet.json")));
    graph["replaced"] = {{{"op", "Foo"}, {"name", "/foo/Foo"}, {"flop_share", 0.015}}};
    const std::string file = test::write_temp_file("round-trip-replaced.json", graph.dump());
    check_round_trip("solve " + file + " --devices 4 --json");
  }
}

TEST_CASE("strategy document: the memory setup is read back") {
  const test::CommandResult result =
      test::run_pase("solve " + graph_path("alexnet") + " --devices 8 --dtype bf16 --optimizer sgd --memory-per-device 1GiB --json");
  REQUIRE(result.status == 0);
  const StrategyDocument read = parse_strategy_file(result.output, "s.json");
  REQUIRE(read.memory);
  CHECK(read.memory->options.dtype == Dtype::Bf16);
  CHECK(read.memory->options.optimizer == Optimizer::Sgd);
  CHECK(read.memory->cap == uint64_t{1} << 30);
  CHECK_FALSE(read.plan);  // the plan is the plan reader's unless asked for
}

TEST_CASE("strategy document: malformed fields are named") {
  auto error_of = [](const std::string& text) {
    try {
      (void)parse_strategy_file(text, "s.json");
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  const std::string head = R"({"format": "pase-strategy", "version": 1, )";
  const std::string layers = R"("layers": [{"name": "a", "config": [1]}])";
  CHECK(error_of(head + R"("memory": {"weights_bytes": 1, "activations_bytes": 2, "per_device_bytes": 4, "dtype": "fp32", "optimizer": "adam"}, )" + layers + "}") ==
        "s.json: field 'memory.per_device_bytes': expected weights_bytes + activations_bytes, 3, got 4");
  CHECK(error_of(head + R"("memory": {"weights_bytes": 1, "activations_bytes": 2, "dtype": "fp8", "optimizer": "adam"}, )" + layers + "}")
            .rfind("s.json: field 'memory.dtype': ", 0) == 0);
  CHECK(error_of(head + R"("solver": {"table_entries": -1}, )" + layers + "}") ==
        "s.json: field 'solver.table_entries': expected a non-negative integer, got -1");
  CHECK(error_of(head + R"("layers": [{"name": "a", "config": [1], "inputs": [{"tensor": 3}]}]})") ==
        "s.json: layer 'a': field 'inputs[0].tensor': expected a string, got an integer");
  // A hand-written file with names and configurations alone still reads.
  const StrategyDocument minimal = parse_strategy_file(head + layers + "}", "s.json");
  REQUIRE(minimal.layers.size() == 1);
  CHECK_FALSE(minimal.layers[0].dims);
  CHECK_FALSE(minimal.memory);
}
