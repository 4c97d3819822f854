#pragma once
// Where the stage boundaries of a pipeline go (docs/pipeline.md): the outer
// dynamic program over contiguous ranges of cut positions, exact for the
// step time sum t + (M - 1) max t + max w (pipeline_schedule.h) over the
// stages' values it is given, and the lower bound that holds for every
// strategy of every stage, as the stages' own bounds allow.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace pase {

/// One stage (a range of positions on its devices) as the outer DP sees it.
struct StageValue {
  double t = 0;           ///< time per micro-batch, forward and backward, its sends included
  double w = 0;           ///< once-per-step work: weight-gradient collectives, optimizer update
  double step_bound = 0;  ///< a lower bound on M t + w over every strategy of the stage
  double time_bound = 0;  ///< a lower bound on t over every strategy of the stage
};

struct PartitionProblem {
  int positions = 0;  ///< stages cover [i, j) of the positions 0..positions, in order
  int stages = 1;     ///< S
  int64_t micro_batches = 1;
  /// Stage k (0-based) over [i, j): its value, or nullopt when it cannot run
  /// (nothing fits its memory). Called once per (k, i, j).
  std::function<std::optional<StageValue>(int k, int i, int j)> value;
};

struct PartitionAnswer {
  std::vector<int> bounds;  ///< S + 1 positions: stage k is [bounds[k], bounds[k + 1]); empty: no partition runs
  std::vector<StageValue> stages;
  double step = 0;          ///< sum t + (M - 1) max t + max w
  double lower_bound = 0;   ///< no partition, with any strategies of its stages, takes less
};

/// The partition of least step time over the values given (exact: the max
/// t term by enumerating its value, the max w term carried as Pareto pairs),
/// and the lower bound min over partitions of sum time_bound + max
/// (step_bound - time_bound), which no strategy beats: for the slowest stage
/// b, sum t + (M - 1) t_b + w_b >= sum over k != b of time_bound + step_bound_b.
[[nodiscard]] PartitionAnswer best_partition(const PartitionProblem& problem);

/// For every stage range, a lower bound on the step of every partition that
/// holds it, from the stages' bounds as best_partition's lower bound reads
/// them (step >= sum time_bound + max (step_bound - time_bound)): the
/// range's time_bound, plus the least sum of time_bound of the k stages
/// over [0, i) and of the S - k - 1 stages over [j, positions), plus the
/// largest of its own excess and the least largest excess before and after
/// (each least taken apart, so no partition holding it does better). A
/// range whose bound reaches a step already found is in no faster
/// partition: a search need not solve it (stages/pipeline_search.cc).
class HoldingBounds {
 public:
  /// Asks problem.value once per (k, i, j), as best_partition does.
  explicit HoldingBounds(const PartitionProblem& problem);
  /// Infinity where stage k over [i, j) does not run or no partition holds it.
  [[nodiscard]] double at(int k, int i, int j) const {
    return bounds_[(static_cast<size_t>(k) * p1_ + static_cast<size_t>(i)) * p1_ + static_cast<size_t>(j)];
  }

 private:
  size_t p1_ = 0;
  std::vector<double> bounds_;  ///< [(k * p1 + i) * p1 + j]
};

}  // namespace pase
