// FlexFlow's search on the simulated step (strategy/simulated_mcmc.h): the
// delta simulation equals a full one after every move, kept or undone; the
// chain is the same with it or without, only cheaper; without overlap the
// simulated step is the additive sum; the answer is never worse than where
// the chain started.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "costmodel/builtin_machines.h"
#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "simulate/step_simulation.h"
#include "simulate/step_tasks.h"
#include "strategy/baselines.h"
#include "strategy/simulated_mcmc.h"
#include "test_support.h"

using namespace pase;

namespace {

struct Priced {
  Graph graph;
  std::unique_ptr<CalibratedCostModel> model;
  CostTables tables;
};

// A zoo graph on dgx-a100, 2 micro-batches, every gradient all-reduce
// listed whole (no overlap inside the model: the simulator's to find).
Priced priced(const std::string& name, int64_t devices, int zero = 0) {
  Priced out;
  out.graph = load_graph(test::source_path("data/graphs/" + name + ".json"));
  CalibratedOptions options{{Dtype::Bf16, Optimizer::Adam}};
  options.training.micro_batches = 2;
  options.training.zero = zero;
  options.overlap_gradients = false;
  out.model = std::make_unique<CalibratedCostModel>(load_machine_profile("dgx-a100"), devices, options);
  out.tables = build_cost_tables(out.graph, *out.model);
  return out;
}

// The step simulated from a fresh task graph of the old home's stage (an independent path).
double fresh_step(const Priced& p, const std::vector<int32_t>& choice, bool overlap) {
  StepModel step;
  step.micro_batches = 2;
  step.overlap = overlap;
  step.stages.push_back(simulated_stage(p.graph, p.tables, choice, *p.model, 2));
  return simulate_step(step_tasks(step), 1).step;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

TEST_CASE("the delta simulation equals a full one after every move, kept or undone") {
  size_t plain_tasks = 0;
  for (const int zero : {0, 3}) {  // ZeRO-3: a gather and a scatter task per layer and pass
    CAPTURE(zero);
    const Priced p = priced("transformer", 8, zero);
    std::mt19937 random(3);
    for (const bool overlap : {true, false}) {
      SimulatedStepObjective objective(p.graph, p.tables, *p.model, {2, overlap, true});
      std::vector<int32_t> current = data_parallel_choice(p.graph, p.tables);
      double step = objective.begin(current);
      CHECK(near(step, fresh_step(p, current, overlap)));
      if (zero == 0 && overlap) plain_tasks = objective.task_count();
      if (zero == 3 && overlap) CHECK(objective.task_count() > plain_tasks);  // the gathers and scatters
      for (int move = 0; move < 300; ++move) {
        const int v = std::uniform_int_distribution<int>(0, static_cast<int>(current.size()) - 1)(random);
        const auto to = std::uniform_int_distribution<int32_t>(0, static_cast<int32_t>(p.tables.configs[v].size()) - 1)(random);
        std::vector<int32_t> moved = current;
        moved[static_cast<size_t>(v)] = to;
        const double delta = objective.move_delta(current, v, to);
        REQUIRE(near(step + delta, fresh_step(p, moved, overlap)));
        if (random() % 2) {
          objective.accept();
          current = moved;
          step += delta;
        } else {
          objective.reject();
        }
      }
      CHECK(near(step, objective.evaluate(current)));
    }
  }
}

TEST_CASE("simulated MCMC: the same chain with the delta simulation or without, fewer tasks re-timed") {
  const Priced p = priced("alexnet", 8);
  McmcOptions options;
  options.max_iterations = 3000;
  options.min_iterations = 3000;
  const std::vector<int32_t> start = data_parallel_choice(p.graph, p.tables);
  const SimulatedMcmcResult delta = simulated_mcmc_search(p.graph, p.tables, *p.model, {2, true, true}, start, options);
  const SimulatedMcmcResult full = simulated_mcmc_search(p.graph, p.tables, *p.model, {2, true, false}, start, options);
  CHECK(delta.chain.choice == full.chain.choice);
  CHECK(delta.chain.accepted == full.chain.accepted);
  CHECK(delta.chain.iterations == full.chain.iterations);
  CHECK(delta.chain.cost == full.chain.cost);
  CHECK(full.tasks_per_move == doctest::Approx(static_cast<double>(full.tasks)));
  CHECK(delta.tasks_per_move < full.tasks_per_move);  // one stage: every task after a changed one moves too
  // Its cost is the simulated step of its choice, never worse than the start's, better here.
  CHECK(near(delta.chain.cost, fresh_step(p, delta.chain.choice, true)));
  CHECK(delta.chain.cost < fresh_step(p, start, true));
  CHECK(near(delta.additive, p.tables.objective.evaluate(delta.chain.choice)));
  CHECK(delta.chain.improvements > 0);
}

TEST_CASE("simulated MCMC without overlap prices the additive sum") {
  const Priced p = priced("transformer", 4);
  McmcOptions options;
  options.max_iterations = 1000;
  const std::vector<int32_t> start = data_parallel_choice(p.graph, p.tables);
  const SimulatedMcmcResult result = simulated_mcmc_search(p.graph, p.tables, *p.model, {2, false, true}, start, options);
  CHECK(result.chain.cost == doctest::Approx(result.additive).epsilon(1e-9));
  CHECK(simulated_step_of(p.graph, p.tables, *p.model, {2, false, true}, start) ==
        doctest::Approx(p.tables.objective.evaluate(start)).epsilon(1e-9));
  // With overlap the step is never longer.
  CHECK(simulated_step_of(p.graph, p.tables, *p.model, {2, true, true}, start) <=
        p.tables.objective.evaluate(start) * (1 + 1e-12));
}
