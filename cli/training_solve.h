#pragma once
// A command's solve under a training setup (docs/training.md): the graph at
// the setup's micro-batch size, priced by a model of the same setup, at one
// micro-batch count or at each of several (--micro-batches auto), keeping
// the best. Every command that takes --micro-batches solves through it.
#include <cstdint>
#include <functional>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "solve/outcome.h"
#include "solve/request.h"

namespace pase {

/// One micro-batch count's solve, and what it was solved with.
struct TrainingSolve {
  TrainingSetup setup;         ///< with its micro-batch count
  int64_t micro_batch_size = 0;
  Graph graph;
  std::unique_ptr<CostModel> model;
  SolveOutcome outcome;
};

/// What a search over micro-batch counts tried: each count and its cost (NaN: nothing fits, or refused).
struct MicroBatchTrial {
  int64_t micro_batches = 1;
  double cost = 0;
  std::string refused;  ///< why it gave no strategy, else empty
  /// Under a cap: not searched to the end, as a bound on its capped optimum
  /// (its optimum without the cap, or its capped search's first bound)
  /// already reached the best cost found (at another count, or another mesh).
  bool pruned = false;
  /// Not searched: the command's time limit (CapOptions::deadline) had
  /// passed once an answer was found; under a cap its bound is kept.
  bool out_of_time = false;
};

struct TrainingSearch {
  /// The best answer found; null only when an incumbent bounded every count out.
  std::unique_ptr<TrainingSolve> best;
  std::vector<MicroBatchTrial> trials;  ///< one per count tried, in order
  /// Under a cap: no count's capped optimum costs less (the least of the
  /// counts' bounds; NaN when not computed).
  double least_bound = std::nan("");
  /// Whether some count was bounded out (MicroBatchTrial::pruned).
  [[nodiscard]] bool bounded_out() const {
    for (const MicroBatchTrial& trial : trials)
      if (trial.pruned) return true;
    return false;
  }
  /// Counts left unsearched at the time limit (MicroBatchTrial::out_of_time).
  [[nodiscard]] size_t out_of_time() const {
    size_t n = 0;
    for (const MicroBatchTrial& trial : trials) n += trial.out_of_time;
    return n;
  }
};

using ModelMaker = std::function<std::unique_ptr<CostModel>(const TrainingSetup&)>;

/// Solves `request` (its `memory` the setup, its micro-batch count replaced
/// by each of `counts`) and keeps the cheapest strategy found; under a cap
/// nothing fits at any count, the one that needs the least memory. With one
/// count its errors propagate; with several a count whose graph does not
/// build or whose solve is refused is skipped (its trial says why), and if
/// every count fails the first error propagates. Under a cap every count is
/// first bounded without a DP (least_cost_bound: each layer at its least
/// cost); the capped search then runs in the order of those bounds, only
/// where a bound is below the best cost found and below `incumbent` (a cost
/// found elsewhere, e.g. on another mesh: a count that cannot beat it is not
/// searched, and when none can, `best` is null), and stops where its first
/// bound reaches that cost. Once an answer is found, a count not started by
/// the request's time limit (cap_search.deadline) is left out (its trial
/// says so; under a cap its bound stays in least_bound).
[[nodiscard]] TrainingSearch solve_training(const GraphFileV1& file, const std::string& path,
                                            const std::vector<int64_t>& counts, const ModelMaker& make_model,
                                            const SolveRequest& request,
                                            double incumbent = std::numeric_limits<double>::infinity());

/// "micro-batches auto: 8 of the 10 divisors of 512 priced, best 32 (16 per micro-batch)": what a search tried.
[[nodiscard]] std::string micro_batch_search_words(const TrainingSearch& search);

}  // namespace pase
