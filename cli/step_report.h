#pragma once
// `pase simulate` (docs/simulate.md): a priced strategy as the simulator's
// step (simulate/step_model.h), each layer's priced terms per micro-batch
// and per step; the simulated step beside the additive model's, the
// critical path, each stage's time, and the trace and timeline files.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "costmodel/cost_model.h"
#include "cli/training_solve.h"
#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "simulate/step_model.h"
#include "strategy/simulated_step.h"

namespace pase {

struct SimulateCliOptions {
  bool on = false;        ///< the command is `simulate`: the simulation instead of the table
  bool after_solve = false;  ///< `solve --simulate`: the simulation after the table
  std::string trace;      ///< --trace FILE: the Chrome trace
  std::string svg;        ///< --svg FILE: the timeline
  bool no_overlap = false;  ///< --no-overlap: gradient collectives after the backward pass, as the sum prices them
  std::string bucket_size;  ///< --bucket-size: gradient syncs in buckets of this many bytes; empty: one per layer
};

/// --bucket-size in gradient elements of `setup` (StepModel::bucket_words);
/// 0 without it. UsageError naming the option when it is no size.
[[nodiscard]] double bucket_words(const SimulateCliOptions& options, const TrainingSetup& setup);

/// --trace, --svg, --no-overlap; with `switch_flag` (solve) also --simulate.
void add_simulate_options(CLI::App* command, SimulateCliOptions& options, bool switch_flag = false);

/// A solve without pipeline stages (its graph, tables, strategy and model)
/// as one stage on `devices` devices, simulated and reported against the
/// sum the tables price (report_simulation). Returns 0.
int report_solve_simulation(const TrainingSolve& solved, int64_t devices, const std::string& title,
                            const SimulateCliOptions& options, std::ostream& out);

/// Simulates `model` and prints the report to `out` (`additive`: the step
/// the cost model sums, or the pipeline's formula), writing the trace and
/// timeline files asked for. Returns 0.
int report_simulation(const StepModel& model, double additive, const std::string& additive_words,
                      const std::string& title, const SimulateCliOptions& options, std::ostream& out);

}  // namespace pase
