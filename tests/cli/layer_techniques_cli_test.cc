// --recompute auto and --zero auto end to end (docs/training.md): the solver
// chooses each layer's recomputation and ZeRO stage inside the capped search,
// never worse than any one mode for every layer; the strategy file records
// the choices, evaluate prices them back, the frontier spans them, and the
// baselines (which take one mode) refuse auto in one line.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

const std::string kGraph = " " + test::source_path("data/graphs/transformer.json") + " --devices 8 --dtype bf16";
const std::string kTransformer = kGraph + " --no-plan";  // for solve

// The cost of `solve` under `options` as its JSON strategy says; NaN when nothing fits.
double solved_cost(const std::string& options) {
  const test::CommandResult solved = test::run_pase("solve" + kTransformer + " --json " + options);
  if (solved.status != 0) return std::nan("");
  return json::parse(solved.output)["total_cost"].get<double>();
}

}  // namespace

TEST_CASE("--zero auto --recompute auto under a cap: never worse than one mode for every layer, each layer's choice recorded") {
  // Past the root's bound the branch and bound barely moves here (options of
  // nearly equal bytes): stop at a proven 0.1%.
  const std::string cap = " --memory-per-device 1GiB --cap-gap 0.001";
  const test::CommandResult solved =
      test::run_pase("solve" + kTransformer + " --json --zero auto --recompute auto" + cap);
  REQUIRE(solved.status == 0);
  const json strategy = json::parse(solved.output);
  const double cost = strategy["total_cost"].get<double>();
  CHECK(strategy["training"]["zero"] == "auto");
  CHECK(strategy["training"]["recompute"] == "auto");
  CHECK(strategy["memory"]["per_device_bytes"].get<uint64_t>() <= uint64_t{1} << 30);
  const double gap = strategy["memory"]["gap"].get<double>();
  CHECK(gap <= 0.001);
  const double lower_bound = strategy["memory"]["lower_bound_cost"].get<double>();
  std::set<int> stages;
  std::set<bool> recomputes;
  for (const json& layer : strategy["layers"]) {
    stages.insert(layer["zero"].get<int>());
    recomputes.insert(layer["recompute"].get<bool>());
  }
  CHECK(recomputes.size() == 2);  // some layers recompute, others keep their outputs
  int fitting = 0;
  // With one micro-batch ZeRO-1 costs what ZeRO-2 costs and holds more, so
  // its capped optimum is never below ZeRO-2's: stages 0, 2 and 3 suffice.
  for (const char* zero : {"0", "2", "3"})
    for (const char* recompute : {"none", "full"}) {
      CAPTURE(zero);
      CAPTURE(recompute);
      const double fixed = solved_cost(std::string("--zero ") + zero + " --recompute " + recompute + cap);
      if (std::isnan(fixed)) continue;
      ++fitting;
      CHECK(lower_bound <= fixed * (1 + 1e-12));  // a bound over every per-layer choice, these among them
      CHECK(cost <= fixed * (1 + 1e-12));
    }
  CHECK(fitting > 0);

  SUBCASE("evaluate prices the recorded per-layer choices: the same cost and bytes") {
    const std::string file = test::write_temp_file("layer_techniques_strategy.json", solved.output);
    const test::CommandResult priced = test::run_pase("evaluate" + kGraph + " --strategy " + file + " --json");
    REQUIRE(priced.status == 0);
    const json evaluated = json::parse(priced.output);
    CHECK(evaluated["total_cost"].get<double>() == doctest::Approx(cost).epsilon(1e-12));
    CHECK(evaluated["memory"]["per_device_bytes"] == strategy["memory"]["per_device_bytes"]);
    CHECK(evaluated["memory"]["weights_bytes"] == strategy["memory"]["weights_bytes"]);
    CHECK(evaluated["layers"][1]["zero"] == strategy["layers"][1]["zero"]);
    // One mode on the command line prices every layer at it instead.
    const test::CommandResult sharded =
        test::run_pase("evaluate" + kGraph + " --strategy " + file + " --json --zero 3 --recompute none");
    REQUIRE(sharded.status == 0);
    const json staged = json::parse(sharded.output);
    for (const json& layer : staged["layers"]) {
      CHECK(layer["zero"] == 3);
      CHECK(layer["recompute"] == false);
    }
  }
  SUBCASE("the memory line says what was chosen") {
    const test::CommandResult table =
        test::run_pase("solve" + kTransformer + " --zero auto --recompute auto --all-layers" + cap);
    REQUIRE(table.status == 0);
    CHECK(table.output.find("; bf16; ZeRO auto: ZeRO-") != std::string::npos);
    CHECK(table.output.find("), cap 1.00 GiB: lower bound ") != std::string::npos);
    // The table's last column gives each layer's techniques, as the strategy file does.
    CHECK(table.output.find("  share     time  techniques\n") != std::string::npos);
    size_t sharded_rows = 0;
    for (const json& layer : strategy["layers"]) {
      const std::string name = layer["name"].get<std::string>();
      CAPTURE(name);
      const size_t row = table.output.find("\n" + name + " ");
      REQUIRE(row != std::string::npos);
      const size_t end = table.output.find('\n', row + 1);
      const std::string line = table.output.substr(row + 1, end - row - 1);
      const std::string cell = line.substr(line.rfind("  ") + 2);
      CHECK((cell.find("recompute") != std::string::npos) == layer["recompute"].get<bool>());
      if (const size_t zero = cell.find("ZeRO-"); zero != std::string::npos) {
        ++sharded_rows;
        CHECK(cell.substr(zero + 5) == std::to_string(layer["zero"].get<int>()));
      }
      if (cell == "-") CHECK_FALSE(layer["recompute"].get<bool>());
    }
    CHECK(sharded_rows > 0);
  }
}

TEST_CASE("--zero auto under a cap: the search stops at a 1% gap unless --cap-gap says otherwise") {
  // The root's answer is within 1% here; proving further takes branching.
  const std::string options = " " + test::source_path("data/graphs/transformer.json") +
                              " --devices 8 --no-plan --json --zero auto --recompute auto --memory-per-device 1.5GiB";
  const test::CommandResult by_default = test::run_pase("solve" + options);
  const test::CommandResult proving = test::run_pase("solve" + options + " --cap-gap 0");
  REQUIRE(by_default.status == 0);
  REQUIRE(proving.status == 0);
  const json quick = json::parse(by_default.output)["memory"], closer = json::parse(proving.output)["memory"];
  CHECK(quick["gap"].get<double>() <= 0.01);
  CHECK(closer["gap"].get<double>() < quick["gap"].get<double>());
  CHECK(json::parse(proving.output)["total_cost"].get<double>() <= json::parse(by_default.output)["total_cost"].get<double>());
}

TEST_CASE("--zero auto --recompute auto without a cap: the cheapest technique per layer, ties to the least memory") {
  const double plain = solved_cost("");
  const double chosen = solved_cost("--zero auto --recompute auto");
  // No technique lowers the `pase` model's price of a layer, so the optimum
  // costs what the PaSE step's does; ZeRO-2's collectives cost an all-reduce's.
  CHECK(chosen == doctest::Approx(plain).epsilon(1e-12));
  const test::CommandResult solved = test::run_pase("solve" + kTransformer + " --json --zero auto --recompute auto");
  const json strategy = json::parse(solved.output);
  const test::CommandResult pase_step = test::run_pase("solve" + kTransformer + " --json");
  CHECK(strategy["memory"]["per_device_bytes"].get<uint64_t>() <
        json::parse(pase_step.output)["memory"]["per_device_bytes"].get<uint64_t>());
}

TEST_CASE("frontier --zero auto --recompute auto: from the least memory of any per-layer choice to the cheapest") {
  const std::string out = test::write_temp_file("layer_techniques_frontier.json", "");
  REQUIRE(test::run_pase("frontier" + kGraph + " --zero auto --recompute auto --json \"" + out + "\"").status == 0);
  const json frontier = json::parse(read_text_file(out));
  const json& points = frontier["points"];
  REQUIRE(points.size() > 2);
  // The least memory is at most the one mode that needs least (ZeRO-3, full recomputation).
  const test::CommandResult least =
      test::run_pase("solve" + kTransformer + " --json --zero 3 --recompute full --memory-per-device 1");
  CHECK(least.status != 0);
  const std::string fixed_out = test::write_temp_file("layer_techniques_frontier_fixed.json", "");
  REQUIRE(test::run_pase("frontier" + kGraph + " --zero 3 --recompute full --json \"" + fixed_out + "\"").status == 0);
  const json fixed = json::parse(read_text_file(fixed_out))["points"];
  CHECK(points[0]["per_device_bytes"].get<uint64_t>() <= fixed[0]["per_device_bytes"].get<uint64_t>());
  CHECK(points.back()["cost"].get<double>() == doctest::Approx(solved_cost("--zero auto --recompute auto")).epsilon(1e-12));
  CHECK(frontier["training"]["zero"] == "auto");
}

TEST_CASE("auto per layer: the refusals say why in one line") {
  const std::string plain = test::write_temp_file("layer_techniques_plain.json",
                                                  test::run_pase("solve" + kTransformer + " --json").output);
  const test::CommandResult no_choices =
      test::run_pase("evaluate" + kGraph + " --strategy " + plain + " --zero auto");
  CHECK(no_choices.status == 2);
  CHECK(no_choices.error == "error: --zero auto: prices the per-layer choices of a strategy file, and " + plain +
                                " records none for layer 'encoder/embedding' (give --zero a mode)\n");
  const test::CommandResult baseline = test::run_pase("evaluate" + kGraph + " --baseline data-parallel --zero auto");
  CHECK(baseline.status == 2);
  CHECK(baseline.error ==
        "error: --zero auto: the solver chooses each layer's stage; --baseline data-parallel takes one (0, 1, 2 or 3)\n");
  const test::CommandResult fsdp = test::run_pase("evaluate" + kGraph + " --baseline fsdp --recompute auto");
  CHECK(fsdp.status == 2);
  CHECK(fsdp.error ==
        "error: --recompute auto: the solver chooses each layer's; --baseline fsdp takes one mode (none or full)\n");
}

TEST_CASE("frontier --micro-batches auto: every count's frontier merged, each point's count said") {
  const std::string out = test::write_temp_file("micro_batch_frontier.json", "");
  const test::CommandResult run =
      test::run_pase("frontier" + kGraph + " --micro-batches auto --max-rows 3 --json \"" + out + "\"");
  REQUIRE(run.status == 0);
  CHECK(run.output.find("found by  micro-batches\n") != std::string::npos);
  CHECK(run.output.find("; micro-batches auto: 7 of 7 divisors of the batch\n") != std::string::npos);
  const json frontier = json::parse(read_text_file(out));
  CHECK(frontier["training"]["micro_batches"] == "auto");
  const json& points = frontier["points"];
  REQUIRE(points.size() > 2);
  std::set<int64_t> counts;
  for (size_t i = 0; i < points.size(); ++i) {
    counts.insert(points[i]["micro_batches"].get<int64_t>());
    CHECK(points[i]["lower_bound_cost"].get<double>() <= points[i]["cost"].get<double>());
    if (i > 0) CHECK(points[i]["cost"].get<double>() < points[i - 1]["cost"].get<double>());
  }
  CHECK(counts.size() > 1);  // the trade-off runs through several counts
  // Each end is the best of any count: the least memory (the most
  // micro-batches here) and the least cost (8 here; one batch costs the same
  // in the `pase` model, with more memory).
  uint64_t least = ~uint64_t{0};
  double cheapest = std::numeric_limits<double>::infinity();
  for (const char* m : {"1", "8", "64"}) {
    const std::string one = test::write_temp_file("micro_batch_frontier_one.json", "");
    REQUIRE(test::run_pase("frontier" + kGraph + " --micro-batches " + m + " --json \"" + one + "\"").status == 0);
    const json single = json::parse(read_text_file(one))["points"];
    least = std::min(least, single.front()["per_device_bytes"].get<uint64_t>());
    cheapest = std::min(cheapest, single.back()["cost"].get<double>());
  }
  CHECK(points.front()["per_device_bytes"].get<uint64_t>() == least);
  CHECK(points.back()["cost"].get<double>() == cheapest);
}

TEST_CASE("compare --zero auto --recompute auto: the optimum's per-layer choices, the fsdp row at ZeRO-3") {
  const std::string out = test::write_temp_file("layer_techniques_compare.json", "");
  const test::CommandResult run = test::run_pase("compare" + kGraph +
                                                 " --zero auto --recompute auto --memory-per-device 1GiB --cap-gap 0.01"
                                                 " --json \"" + out + "\"");
  REQUIRE(run.status == 0);
  const json document = json::parse(read_text_file(out));
  CHECK(document["training"]["zero"] == "auto");
  CHECK(document["training"]["recompute"] == "auto");
  double pase = 0, fsdp = 0;
  for (const json& row : document["results"][0]["strategies"]) {
    if (row["name"] == "pase") pase = row["cost"].get<double>();
    if (row["name"] == "fsdp") fsdp = row["cost"].get<double>();
  }
  CHECK(pase > 0);
  CHECK(pase == doctest::Approx(solved_cost("--zero auto --recompute auto --memory-per-device 1GiB --cap-gap 0.01"))
                    .epsilon(1e-12));
  CHECK(fsdp > pase);  // ZeRO-3 with full recomputation everywhere costs more than the per-layer choice
}
