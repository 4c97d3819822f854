// solve_request, the one entry point every command calls: each source of a
// strategy (the optimum, past the DP's limits a bounded solve, under a cap the
// capped search, a given strategy, a baseline, the frontier), its memory and
// its placement, against the libraries it composes.
#include <doctest/doctest.h>

#include <string>

#include "base/error.h"
#include "base/text_file.h"
#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "dp/solve.h"
#include "graphs/graph_file.h"
#include "plans/mesh.h"
#include "solve/solve_request.h"
#include "strategy/strategy_file.h"
#include "test_support.h"

using namespace pase;

namespace {

Graph zoo_graph(const std::string& name) {
  return load_graph(test::source_path("data/graphs/" + name + ".json"));
}

PaseCostModel eight_devices() {
  Machine machine;
  machine.devices = 8;
  return PaseCostModel(machine);
}

}  // namespace

TEST_CASE("solve_request: the optimum, its memory and its placement on the default mesh") {
  const Graph graph = zoo_graph("alexnet");
  const PaseCostModel model = eight_devices();
  const SolveOutcome out = solve_request(graph, model, SolveRequest{});
  const CostTables tables = build_cost_tables(graph, model);
  const Solution correct = solve(tables.objective, graph.vertex_names(), SolveOptions{});
  CHECK(out.solution.cost == correct.cost);
  CHECK(out.solution.choice == correct.choice);
  CHECK(out.solved());
  CHECK_FALSE(out.bounded);
  CHECK_FALSE(out.capped);
  CHECK(out.bytes.total() == plan_memory(out.memory, out.solution.choice).total());
  REQUIRE(out.placed);
  CHECK(out.placed->plan.mesh.shape == std::vector<int64_t>{2, 2, 2});
  CHECK(out.no_plan_reason.empty());
}

TEST_CASE("solve_request: past the DP's limits a bounded solve, or with exact the refusal") {
  const Graph graph = zoo_graph("transformer");
  const PaseCostModel model = eight_devices();
  SolveRequest request;
  request.solve.dp.max_work = 100000;
  request.place = false;
  const SolveOutcome out = solve_request(graph, model, request);
  REQUIRE(out.bounded);
  REQUIRE(out.refusal);
  CHECK(out.refusal->option == "max_work");
  CHECK(out.solution.cost >= out.bounded->lower_bound);
  CHECK(out.solution.cost == out.tables.objective.evaluate(out.solution.choice));
  request.exact = true;
  CHECK_THROWS_AS((void)solve_request(graph, model, request), LimitError);
}

TEST_CASE("solve_request: under a cap the capped search; a cap nothing fits is an outcome, not placed") {
  const Graph graph = zoo_graph("transformer");
  const PaseCostModel model = eight_devices();
  SolveRequest request;
  request.cap = uint64_t{3} << 30;
  const SolveOutcome fits = solve_request(graph, model, request);
  REQUIRE(fits.capped);
  CHECK(fits.capped->feasible);
  CHECK(fits.bytes.total() <= *request.cap);
  CHECK(fits.solution.cost >= fits.capped->lower_bound);
  request.cap = uint64_t{100} << 20;
  const SolveOutcome none = solve_request(graph, model, request);
  REQUIRE(none.capped);
  CHECK_FALSE(none.capped->feasible);
  CHECK_FALSE(none.solved());
  CHECK_FALSE(none.placed);
  CHECK(no_fit_words(*none.capped).rfind("no strategy fits in 104857600 bytes (0.10 GiB) per device: the least any strategy needs is ", 0) == 0);
}

TEST_CASE("solve_request: a given strategy and a baseline are priced, not solved") {
  const Graph graph = zoo_graph("alexnet");
  const PaseCostModel model = eight_devices();
  const SolveOutcome optimum = solve_request(graph, model, SolveRequest{});
  const StrategyDocument written = parse_strategy_file(
      write_strategy_file(graph, optimum.tables, optimum.solution.choice, optimum.solution.cost, nullptr), "s.json");
  SolveRequest given;
  given.source = StrategySource::Given;
  given.given = &written;
  const SolveOutcome priced = solve_request(graph, model, given);
  CHECK(priced.solution.choice == optimum.solution.choice);
  CHECK(priced.solution.cost == optimum.solution.cost);

  SolveRequest baseline;
  baseline.source = StrategySource::Baseline;
  baseline.baseline = "data-parallel";
  const SolveOutcome data_parallel = solve_request(graph, model, baseline);
  CHECK(data_parallel.solution.cost > optimum.solution.cost);
  baseline.baseline = "megatron";  // not transformer-like: bad input, named by its option
  try {
    (void)solve_request(graph, model, baseline);
    FAIL("megatron applied to alexnet");
  } catch (const OptionError& error) {
    CHECK(error.words().option == "baseline");
    CHECK(error.words().with("--baseline").rfind("--baseline: megatron does not apply to 'alexnet': ", 0) == 0);
  }
}

TEST_CASE("solve_request: on a mesh only what it realizes, placed on it; the frontier; plan only") {
  const Graph graph = zoo_graph("alexnet");
  const PaseCostModel model = eight_devices();
  SolveRequest on_mesh;
  on_mesh.mesh = parse_mesh("dp=2,tp=4", 8, 0);
  const SolveOutcome placed = solve_request(graph, model, on_mesh);
  REQUIRE(placed.placed);
  CHECK(placed.placed->plan.mesh.axes == std::vector<std::string>{"dp", "tp"});
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const ConfigSet& configs = placed.tables.configs[v];
    CHECK(realizable(*on_mesh.mesh, configs[placed.solution.choice[v]], configs.rank));
  }

  SolveRequest frontier;
  frontier.source = StrategySource::Frontier;
  const SolveOutcome points = solve_request(graph, model, frontier);
  REQUIRE(points.frontier.size() >= 2);
  CHECK(points.frontier.front().bytes.total() < points.frontier.back().bytes.total());
  CHECK(points.frontier.back().cost == doctest::Approx(solve_request(graph, model, SolveRequest{}).solution.cost));
  CHECK_FALSE(points.placed);

  SolveRequest sizing;
  sizing.plan_only = true;
  const SolveOutcome planned = solve_request(graph, model, sizing);
  CHECK(planned.solution.choice.empty());
  CHECK(planned.solution.tables.total_entries > 0);
}

TEST_CASE("solve policy: the table limit is half of the machine's memory, for every command") {
  CHECK(default_table_limit() > (uint64_t{1} << 20));
  CHECK(default_solve_options().dp.max_table_bytes == default_table_limit());
  CHECK(SolveRequest{}.solve.dp.max_table_bytes == default_table_limit());
}
