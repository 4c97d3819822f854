// Progress of long solves: the DP reports every table, the line's words, and
// --plan-only's time estimate.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/progress_line.h"
#include "costmodel/cost_tables.h"
#include "dp/solve.h"
#include "test_support.h"

using namespace pase;

TEST_CASE("solve_dp: reports each table once, ending at the plan's totals") {
  Graph graph = load_graph(test::source_path("data/graphs/inception3.json"));
  Machine machine;
  machine.devices = 8;
  CostTables tables = build_cost_tables(graph, machine);
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    SolveOptions options;
    options.dp.threads = threads;
    std::vector<DpProgress> seen;
    options.dp.progress = [&seen](const DpProgress& progress) { seen.push_back(progress); };
    Solution solution = solve(tables.objective, graph.vertex_names(), options);
    REQUIRE(seen.size() == graph.vertices.size());
    for (size_t i = 0; i < seen.size(); ++i) {
      CHECK(seen[i].tables_done == i + 1);
      CHECK(seen[i].tables == graph.vertices.size());
      CHECK(seen[i].work == solution.tables.total_work);
      if (i > 0) CHECK(seen[i].work_done >= seen[i - 1].work_done);
    }
    CHECK(seen.back().work_done == solution.tables.total_work);
  }
}

TEST_CASE("ProgressLine: its words") {
  DpProgress progress;
  progress.tables = 1158;
  progress.tables_done = 300;
  progress.work = 1000;
  progress.work_done = 250;
  // A quarter done in 3 s: 9 s to go.
  CHECK(ProgressLine::text("", progress, 1, 3.0) == "solving: 300/1158 tables, 25% of the work, about 9 s left");
  progress.work_done = 0;
  CHECK(ProgressLine::text("", progress, 1, 3.0) == "solving: 300/1158 tables, 0% of the work, 3 s so far");
  // Many DP runs (a capped search, candidates): the run and the clock, no estimate.
  progress.work_done = 500;
  CHECK(ProgressLine::text("micro-batches 4 under the cap (2 of 20)", progress, 7, 12.6) ==
        "solving micro-batches 4 under the cap (2 of 20): DP run 7, 300/1158 tables, 50% of the work, 12 s so far");
  // Between DP runs (pricing, placement): the stage and the clock.
  CHECK(ProgressLine::text("mesh dp=8 x tp=8 (1 of 4)", DpProgress{}, 0, 2.0) == "solving mesh dp=8 x tp=8 (1 of 4): 2 s so far");
  CHECK(estimated_solve_seconds(uint64_t{4} * 1000 * 1000 * 1000, 2) == 2.0);
  CHECK(estimated_solve_seconds(1000, 0) == 1e-6);
}

TEST_CASE("pase solve --plan-only: an estimated time, and no progress line off a terminal") {
  const std::string transformer = test::source_path("data/graphs/transformer.json");
  test::CommandResult text = test::run_pase("solve " + transformer + " --devices 16 --plan-only --threads 1");
  REQUIRE(text.status == 0);
  CHECK(text.output.find("estimated solve time: at most about ") != std::string::npos);
  CHECK(text.output.find(" s on 1 thread (10^9 steps per second per core)\n") != std::string::npos);
  test::CommandResult json = test::run_pase("solve " + transformer + " --devices 16 --plan-only --threads 2 --json");
  REQUIRE(json.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.output);
  CHECK(doc["estimated_seconds"].get<double>() == doctest::Approx(doc["work"].get<double>() / 2e9));
  test::CommandResult solved = test::run_pase("solve " + transformer + " --devices 16");
  CHECK(solved.status == 0);
  CHECK(solved.error.empty());
}
