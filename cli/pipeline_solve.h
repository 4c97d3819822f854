#pragma once
// `pase solve` with pipeline stages (docs/pipeline.md): the search over
// stage counts and micro-batch counts, each a pipeline search
// (stages/pipeline_search.h), the best printed as a table of stages and
// written as one strategy document.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/model_options.h"
#include "cli/step_report.h"
#include "cli/training_solve.h"
#include "graphs/graph_file.h"
#include "solve/request.h"
#include "stages/pipeline_search.h"
#include "strategy/strategy_document.h"

namespace pase {

struct PipelineCliOptions {
  std::string stages = "1";   ///< --pipeline-stages S|auto
  std::string schedule = "1f1b";
  std::string stage_devices;  ///< --stage-devices 12,4
  std::string chunks = "equal";  ///< --chunks equal|auto (interleaved: each stage's share of the blocks)
  /// Whether any option asks for a pipeline (one stage under 1f1b is the plain solve).
  [[nodiscard]] bool requested() const {
    return stages != "1" || schedule != "1f1b" || !stage_devices.empty() || chunks != "equal";
  }
};

void add_pipeline_options(CLI::App* command, PipelineCliOptions& options);

/// What the command asks, besides the pipeline options.
struct PipelineSolveInput {
  const GraphFileV1* file = nullptr;
  std::string path;
  int64_t devices = 0;
  std::vector<int64_t> micro_batch_counts;
  SolveRequest request;  ///< the training setup, cap and DP options of every stage's solve
  StageModelMaker make_model;
  /// `evaluate` of a pipeline strategy file: the file (its stages priced as
  /// it gives them, each with its own strategy) and its path.
  const StrategyDocument* given = nullptr;
  bool stage_layouts = false;  ///< --mesh auto: each stage on its default mesh's layouts (PipelineRequest::stage_layouts)
  bool search_chunks = false;  ///< --chunks auto (PipelineRequest::search_chunks)
  std::string given_path;
  std::string out;       ///< write the strategy file here (empty: no file)
  bool json = false;     ///< print the strategy file instead of the table
  /// `simulate`: the best pipeline simulated (cli/step_report.h) instead of its table.
  const SimulateCliOptions* simulate = nullptr;
};

/// What `solve` and `evaluate` ask: the graph file at `path`, its devices and
/// micro-batch counts, the request, the cost model's options (a model per
/// stage's devices), where the strategy goes.
[[nodiscard]] PipelineSolveInput pipeline_input(const GraphFileV1& file, const std::string& path, int64_t devices,
                                                const std::vector<int64_t>& counts, const SolveRequest& request,
                                                const CostModelOptions& model, const std::string& out, bool json);

/// The best pipeline a search finds, with what it tried (docs/pipeline.md).
struct PipelineAnswer {
  PipelineOutcome outcome;  ///< its lower bound the least over every count searched (NaN: nothing searched)
  Graph graph;              ///< one micro-batch
  TrainingSetup setup;      ///< its micro-batch count
  int64_t micro_batch_size = 0;
  PipelineSchedule schedule;
  std::vector<int64_t> stage_devices;  ///< the best's, each stage's
  std::vector<int> stage_counts;  ///< the stage counts tried
  double split_count = 0;         ///< device splits over every stage count (one each without auto)
  /// --stage-devices auto, where the layers' least costs bound the splits:
  /// the splits searched (the rest's bounds reach the best step, or, past the
  /// limit per count, their least bound is kept in the lower bound).
  size_t splits_listed = 0;
  size_t splits_left_out = 0;     ///< counts with splits left out for the limit
  size_t refused = 0;             ///< counts whose search went past the DP's limits (their bounds kept)
  size_t out_of_time = 0;         ///< counts left at the time limit (their bounds kept)
  size_t tried = 0, fitted = 0, bounded_out = 0, stage_solves = 0, ranges = 0;
  double seconds = 0;
};

/// Searches without printing; ResourceError when nothing fits (exit 3),
/// UsageError for options the devices or graph do not allow.
[[nodiscard]] PipelineAnswer best_pipeline(const PipelineCliOptions& options, const PipelineSolveInput& input);

/// The pipeline `answer` as the simulator's step (docs/simulate.md): each
/// stage's layers priced as its solve priced them, its chunks, the sends
/// between them, the schedule; overlap and buckets as `options` ask.
[[nodiscard]] StepModel pipeline_step_model(const PipelineAnswer& answer, const PipelineSolveInput& input,
                                            const SimulateCliOptions& options);

/// Solves and prints; returns the exit status (3 when nothing fits).
[[nodiscard]] int run_pipeline_solve(const PipelineCliOptions& options, const PipelineSolveInput& input);

}  // namespace pase
