// `pase solve` past the exact DP's limits: DenseNet-121's dense blocks give
// dependent sets of 12 to 25, and a bounded solve answers with its bound.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "base/text_file.h"

using namespace pase;

#ifdef PASE_HAVE_ONNX
TEST_CASE("pase solve: DenseNet-121 gets a bounded answer, or a refusal with --exact") {
  const std::string densenet = test::source_path("data/onnx/densenet121.onnx");
  std::string out = test::write_temp_file("densenet-32.json", "");
  test::CommandResult solved = test::run_pase("solve " + densenet + " --devices 32 --no-plan -o " + out);
  REQUIRE(solved.status == 0);
  CHECK(solved.error.find("note: the exact DP is past --max-table-bytes (vertex '/features/denseblock3/denselayer11/Concat' "
                          "has a dependent set of 12); a bounded solve relaxed ") == 0);
  CHECK(solved.error.find(" edges and proved its answer optimal (its lower bound meets the cost); --exact refuses instead\n") !=
        std::string::npos);
  CHECK(std::count(solved.error.begin(), solved.error.end(), '\n') == 1);
  const nlohmann::json strategy = nlohmann::json::parse(read_text_file(out));
  CHECK(strategy["exact"] == true);
  CHECK(strategy["gap"] == 0.0);
  CHECK(strategy["lower_bound_cost"].get<double>() <= strategy["total_cost"].get<double>());
  CHECK(strategy["lower_bound_cost"].get<double>() >= strategy["total_cost"].get<double>() * (1 - 1e-9));
  CHECK(strategy["solver"]["relaxed_edges"].get<int>() > 0);
  // The strategy file prices at its total: evaluate agrees.
  test::CommandResult evaluated = test::run_pase("evaluate " + densenet + " --devices 32 --strategy " + out);
  CHECK(evaluated.status == 0);

  test::CommandResult refused = test::run_pase("solve " + densenet + " --devices 32 --exact");
  CHECK(refused.status == 3);
  CHECK(refused.error.find("error: refused: the DP tables would need ") == 0);
}

// Per-layer techniques without a cap change only each layer's own cost: each
// configuration at its cheapest technique is a plain objective, bounded as
// the plain solve is. Its optimum is the plain one's (no technique lowers a
// layer's cost in the pase model; ZeRO-1's two halves cost one all-reduce).
TEST_CASE("pase solve --zero auto --recompute auto: past the DP's limits, a bounded answer over the techniques") {
  const std::string densenet = test::source_path("data/onnx/densenet121.onnx");
  const std::string out = test::write_temp_file("densenet-techniques.json", "");
  const test::CommandResult plain = test::run_pase("solve " + densenet + " --devices 32 --no-plan --json");
  const test::CommandResult solved =
      test::run_pase("solve " + densenet + " --devices 32 --no-plan --zero auto --recompute auto -o " + out);
  REQUIRE(plain.status == 0);
  REQUIRE(solved.status == 0);
  CHECK(solved.error.find("note: the exact DP is past --max-table-bytes (vertex '/features/denseblock3/denselayer11/Concat' "
                          "has a dependent set of 12); a bounded solve relaxed ") == 0);
  const nlohmann::json strategy = nlohmann::json::parse(read_text_file(out));
  const double cost = strategy["total_cost"].get<double>();
  CHECK(cost == doctest::Approx(nlohmann::json::parse(plain.output)["total_cost"].get<double>()).epsilon(1e-9));
  CHECK(strategy["lower_bound_cost"].get<double>() <= cost);
  CHECK(strategy["training"]["zero"] == "auto");
  size_t sharded = 0;
  for (const auto& layer : strategy["layers"]) sharded += layer.contains("zero") && layer["zero"].get<int>() > 0;
  CHECK(sharded > 0);  // of techniques that cost the same, the one that needs least memory
  const test::CommandResult evaluated =
      test::run_pase("evaluate " + densenet + " --strategy " + out + " --zero auto --recompute auto --json");
  REQUIRE(evaluated.status == 0);
  CHECK(nlohmann::json::parse(evaluated.output)["total_cost"].get<double>() == cost);

  const test::CommandResult refused = test::run_pase("solve " + densenet + " --devices 32 --zero auto --exact");
  CHECK(refused.status == 3);
  CHECK(refused.error.find("error: refused: the DP tables would need ") == 0);
}

// compare once solved with its own limits and no bounded solve, and refused
// what solve answers; it now takes the same request (solve/solve_request.h).
TEST_CASE("pase compare: DenseNet-121's optimum is the bounded solve that pase solve gives, not a refusal") {
  const std::string densenet = test::source_path("data/onnx/densenet121.onnx");
  test::CommandResult solved = test::run_pase("solve " + densenet + " --devices 32 --no-plan --json");
  REQUIRE(solved.status == 0);
  const double optimum = nlohmann::json::parse(solved.output)["total_cost"].get<double>();
  std::string out = test::write_temp_file("densenet-compare.json", "");
  test::CommandResult compared = test::run_pase("compare " + densenet + " --devices 32 --mcmc-iterations 1000 --json " + out);
  REQUIRE(compared.status == 0);
  CHECK(compared.error == "");
  const nlohmann::json doc = nlohmann::json::parse(read_text_file(out));
  const nlohmann::json& rows = doc["results"][0]["strategies"];
  const auto pase_row = std::find_if(rows.begin(), rows.end(), [](const nlohmann::json& row) { return row["name"] == "pase"; });
  REQUIRE(pase_row != rows.end());
  CHECK((*pase_row)["cost"].get<double>() == optimum);
  CHECK((*pase_row)["note"] == "");  // proven optimal at p = 32: no gap to report
  for (const nlohmann::json& row : rows) CHECK(row["cost"].get<double>() >= optimum * (1 - 1e-9));
}
#endif  // PASE_HAVE_ONNX

TEST_CASE("pase solve: an exact solve says so in the strategy file") {
  test::CommandResult solved = test::run_pase("solve " + test::source_path("data/graphs/alexnet.json") + " --devices 8 --json");
  REQUIRE(solved.status == 0);
  const nlohmann::json strategy = nlohmann::json::parse(solved.output);
  CHECK(strategy["exact"] == true);
  CHECK_FALSE(strategy.contains("lower_bound_cost"));
}

TEST_CASE("pase solve: limits a bounded solve cannot meet either are refused as the exact DP's") {
  test::CommandResult result = test::run_pase("solve " + test::source_path("data/graphs/transformer.json") +
                                              " --devices 8 --max-table-bytes 1000");
  CHECK(result.status == 3);
  CHECK(result.error.rfind("error: refused: the DP tables would need ", 0) == 0);
  CHECK(result.error.find("above the limit of 1000 (--max-table-bytes); the largest is vertex '") != std::string::npos);
  // Within a work limit the exact DP cannot meet, the bounded solve answers.
  test::CommandResult bounded = test::run_pase("solve " + test::source_path("data/graphs/transformer.json") +
                                               " --devices 8 --max-work 100000 --json");
  CHECK(bounded.status == 0);
  CHECK(bounded.error.rfind("note: the exact DP is past --max-work (vertex '", 0) == 0);
  const nlohmann::json strategy = nlohmann::json::parse(bounded.output);
  CHECK(strategy["lower_bound_cost"].get<double>() <= 1421082828800.0 * (1 + 1e-12));  // the exact optimum
  CHECK(strategy["total_cost"].get<double>() >= 1421082828800.0 * (1 - 1e-12));
}

// Under a cap past the exact DP's limits the capped search runs over the
// relaxation a bounded solve would run (memorycap/relaxed_cap.h): its bound
// holds for every strategy within the cap (the exact capped search's answer
// among them), and its answer fits and prices back.
TEST_CASE("pase solve under a cap, past the DP's limits: the capped search over a relaxation, with its proven gap") {
  const std::string transformer = " " + test::source_path("data/graphs/transformer.json") + " --devices 8 --no-plan";
  for (const std::string techniques : {"", " --zero auto --recompute auto"}) {
    CAPTURE(techniques);
    const std::string out = test::write_temp_file("transformer-relaxed-cap.json", "");
    const std::string cap = " --memory-per-device 3GiB --cap-gap 0.9" + techniques;
    const test::CommandResult bounded = test::run_pase("solve" + transformer + cap + " --max-work 100000 -o " + out);
    const test::CommandResult exact = test::run_pase("solve" + transformer + cap + " --json");
    REQUIRE(bounded.status == 0);
    REQUIRE(exact.status == 0);
    CHECK(bounded.error.rfind("note: the exact DP is past --max-work (vertex '", 0) == 0);
    CHECK(bounded.error.find("); the capped search ran over a relaxation of 191 of 280 edges and is at most ") !=
          std::string::npos);
    const nlohmann::json strategy = nlohmann::json::parse(read_text_file(out));
    const nlohmann::json optimum = nlohmann::json::parse(exact.output);
    const double cost = strategy["total_cost"].get<double>();
    CHECK(strategy["memory"]["per_device_bytes"].get<uint64_t>() <= uint64_t{3} << 30);
    CHECK(strategy["memory"]["lower_bound_cost"].get<double>() <= optimum["total_cost"].get<double>());
    CHECK(cost >= optimum["memory"]["lower_bound_cost"].get<double>());
    CHECK(strategy["memory"]["gap"].get<double>() ==
          doctest::Approx((cost - strategy["memory"]["lower_bound_cost"].get<double>()) /
                          strategy["memory"]["lower_bound_cost"].get<double>()));
    const test::CommandResult evaluated = test::run_pase("evaluate " + test::source_path("data/graphs/transformer.json") +
                                                         techniques + " --strategy " + out + " --json");
    REQUIRE(evaluated.status == 0);
    CHECK(nlohmann::json::parse(evaluated.output)["total_cost"].get<double>() == cost);
    const test::CommandResult refused = test::run_pase("solve" + transformer + cap + " --max-work 100000 --exact");
    CHECK(refused.status == 3);
    CHECK(refused.error.rfind("error: refused: the DP would take ", 0) == 0);
  }
}
