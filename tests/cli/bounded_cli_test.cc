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
