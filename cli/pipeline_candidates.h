#pragma once
// The candidates of a pipeline search (docs/pipeline.md): every micro-batch
// count, stage count and device split, each a pipeline search
// (stages/pipeline_search.h) run best bound first while its bound is below
// the best step found; with --stage-devices auto the splits are listed by
// their bounds (stages/split_bounds.h).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/exit_status.h"
#include "cli/pipeline_solve.h"
#include "stages/pipeline_document.h"
#include "stages/pipeline_search.h"
#include "stages/split_candidates.h"

namespace pase {

// --stage-devices auto: splits listed per stage count, the least bounds first.
constexpr size_t kSplitsPerCount = 4096;

struct PipelineBest {
  PipelineOutcome outcome;
  Graph graph;
  TrainingSetup setup;
  int64_t micro_batch_size = 0;
};

struct SearchCounts {
  size_t tried = 0, fitted = 0, stage_solves = 0, ranges = 0, bounded_out = 0;
  size_t out_of_time = 0;  ///< candidates left at the time limit, their bounds kept
  /// No pipeline of the counts tried steps faster: the least of the solved
  /// ones' bounds and of the bounds that ruled the others out.
  double lower_bound = std::numeric_limits<double>::infinity();
  std::string first_refusal;
  std::string first_mistake;  ///< the first option a count refused (more interleaved chunks than blocks, ...)
  size_t splits_left_out = 0;  ///< counts with more splits below the best step than the limit (their least bound kept)
  size_t refused = 0;              ///< counts whose search went past the DP's limits
  std::exception_ptr first_limit;  ///< the first of those refusals
};

/// The request of one pipeline search: `stages` stages on `stage_devices`
/// (empty: equal), the input's options, `setup`'s micro-batches.
[[nodiscard]] PipelineRequest pipeline_request(const PipelineSolveInput& input, const PipelineSchedule& schedule,
                                               const std::vector<int64_t>& stage_devices, const TrainingSetup& setup,
                                               int stages);

// Every (micro-batch count, stage count), best first: each with the bound no
// DP is needed for (pipeline_least_step), then, when it is the least left,
// the tighter one of a stage's DP (pipeline_block_bound), and solved when
// that is still the least; each only while its bound is below the best step
// found, so the first pipelines solved are those most likely to be best.
class PipelineCandidates {
 public:
  /// `splits[i]`: the stage devices to try with `counts[i]` stages (one
  /// empty vector: equal devices).
  /// With `split_unit` (--stage-devices auto where the layers' least costs
  /// bound the step): `splits` is not read; each count's first splits are
  /// its equal one and the greedy split of least bound (split_bounds.h),
  /// and add_splits_below lists the others that may step faster.
  PipelineCandidates(const PipelineSolveInput& input, const PipelineSchedule& schedule, const std::vector<int>& counts,
                     const std::vector<std::vector<std::vector<int64_t>>>& splits, SearchCounts& searched,
                     int64_t split_unit = 0);

  /// Every split of every count and graph whose bound (split_bounds.h) is
  /// below `step` and not yet listed, at most kSplitsPerCount per count (the
  /// least bounds; the rest's least bound kept in the lower bound).
  void add_splits_below(double step);

  /// The distinct splits made candidates (over every micro-batch count).
  [[nodiscard]] size_t splits_listed() const;

  /// The best pipeline found (after search), taken out, each stage with its
  /// tables (an interleaved stage another search shared is solved again).
  std::optional<PipelineBest> take_best();
  [[nodiscard]] double best_step() const;

  void search();

 private:
  struct Candidate {
    size_t graph = 0;
    TrainingSetup setup;
    int stages = 1;
    std::vector<int64_t> devices;  // each stage's; empty: equal
    double bound = 0;
    bool tightened = false;  // pipeline_block_bound taken
    bool by_split = false;   // bounded by its split's least costs (split_bounds.h), tighter than pipeline_least_step
  };

  // The splits given for a count, unbounded.
  static std::vector<DeviceSplit> given_splits(const std::vector<std::vector<int64_t>>& splits);

  // A count's first splits (SplitCandidates::first) for the graph just added.
  std::vector<DeviceSplit> first_splits(int s);

  // The graph of one micro-batch of `m`; false where the batch does not split so.
  bool add_graph(int64_t m);

  // Each candidate's bound that needs no DP (pricing alone), in parallel,
  // once per distinct bound: with stages of unequal devices it depends on
  // the most devices a stage has alone (pipeline_least_step), so the splits
  // of one count share it (a split listed by its least costs keeps that
  // bound, the tighter). Then, in order, the candidates kept and the first
  // error thrown.
  void bound_all(std::vector<Candidate>& pending);

  [[nodiscard]] PipelineRequest request_for(const Candidate& c) const;

  static UsageError option_mistake(const OptionError& error);

  void solve(const Candidate& c);

  const PipelineSolveInput& input_;
  const PipelineSchedule& schedule_;
  size_t started_ = 0;  // candidates solved so far, for the progress line
  const bool searching_;
  SearchCounts& searched_;
  std::vector<Graph> graphs_;
  std::vector<TrainingSetup> setups_;  // per graph
  std::vector<std::shared_ptr<SharedStageSolves>> shared_;  // per graph: the stage solves its searches share
  std::vector<GivenPipeline> givens_;  // per graph, with a given strategy file: its stages
  std::vector<Candidate> candidates_;
  size_t searched_up_to_ = 0;  // candidates_ before it: in a search already
  std::optional<PipelineBest> best_;
  Candidate best_candidate_;  // whose search found best_
  const std::vector<int> counts_;
  const int64_t split_unit_;  // > 0: splits listed by their bounds
  std::vector<SplitCandidates> split_lists_;  // per graph, with split_unit_
};

}  // namespace pase
