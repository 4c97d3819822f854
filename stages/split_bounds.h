#pragma once
// Lower bounds over every split of the devices among the stages, without
// listing the splits (docs/pipeline.md, "Stages of unequal devices"): a
// search over the stage devices need only search the splits whose bound is
// below the best step found, however many splits there are.
//
// Each range of positions [i, j) on u units of devices has a time bound a
// (at most its time per micro-batch t) and a step bound b (at most its M t +
// w), each a difference of prefix sums: every layer at its least cost on
// those devices, no edge, no send, no cap (so at most what any strategy
// of that stage costs). By best_partition's bound (pipeline_partition.h) a
// pipeline steps at least sum a + max (b - a) over its stages; the two terms
// are minimized apart (each over every partition), which is at most the
// least of their sum, so each bound below holds for every partition of its
// splits.
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "graphs/graph.h"
#include "stages/pipeline_search.h"

namespace pase {

/// Each device count's least costs at the cut positions: [u - 1][position]
/// the sum of the least costs of the layers before that position on u units.
struct SplitCosts {
  int positions = 0;                         ///< P: stages cover [i, j) of 0..P
  int64_t units = 0;                         ///< U: the devices, in units
  std::vector<std::vector<double>> time;     ///< the time prefix (a = time[j] - time[i])
  std::vector<std::vector<double>> step;     ///< the M t + w prefix (b = step[j] - step[i])
  /// Stage k is position k, [k, k + 1), and P stages are asked for: the
  /// stages' layers are fixed and only their devices split (interleaved
  /// chunks, split_candidates.h), so no range of more positions is priced.
  bool one_position_per_stage = false;
};

/// A split of the units among S stages with its bound.
struct BoundedSplit {
  std::vector<int64_t> units;  ///< each stage's, in order
  double bound = 0;
};

/// The splits under a step, and what is known of the rest.
struct SplitsBelow {
  std::vector<BoundedSplit> splits;  ///< least bound first, at most the limit asked
  /// The least bound of the splits left out for the limit (infinity when
  /// none were): every split not listed bounds at least min(this, the step).
  double left_out = 0;
};

class SplitBounds {
 public:
  /// The tables for pipelines of up to `most_stages` stages (the backward
  /// DP, per stages left, position and units left: O(S P^2 U^2)).
  SplitBounds(SplitCosts costs, int most_stages);

  /// No split of the units among `stages` stages steps less (infinity: none exists).
  [[nodiscard]] double least(int stages) const;
  /// Every split among `stages` stages whose bound is below `step`, least
  /// first, at most `limit` of them (the least bounds kept). Past
  /// `deadline` the walk stops: the splits found so far, and least(stages)
  /// kept as the bound of those not reached.
  [[nodiscard]] SplitsBelow below(int stages, double step, size_t limit,
                                  std::chrono::steady_clock::time_point deadline =
                                      std::chrono::steady_clock::time_point::max()) const;
  /// The bound of one split (its units per stage; infinity where it cannot run).
  [[nodiscard]] double of(const std::vector<int64_t>& units) const;
  /// A split of least bound found by taking, stage after stage, the units of
  /// least bound (not always the least of all; a first split to search).
  [[nodiscard]] BoundedSplit greedy(int stages) const;

 private:
  struct Prefix;  // the stages fixed so far: least sum of a and least max of b - a to each position
  [[nodiscard]] std::vector<double> tables(int most, double cap, std::vector<double>* max) const;
  [[nodiscard]] std::pair<double, double> range(int i, int j, int64_t units) const;  // a, b - a
  [[nodiscard]] std::pair<std::vector<double>, double> sums_against(int stages, double step) const;
  [[nodiscard]] Prefix root() const;
  // One more stage of `units`, `stages_after` to follow (each a position at least).
  [[nodiscard]] Prefix extend(const Prefix& prefix, int64_t units, double cap, int stages_after) const;
  [[nodiscard]] double bound(const Prefix& prefix, int stages_left, int64_t units_left,
                             const std::vector<double>& sums) const;
  [[nodiscard]] size_t at(int stages_left, int position, int64_t units_left) const {
    return (static_cast<size_t>(stages_left) * p1_ + static_cast<size_t>(position)) * u1_ + static_cast<size_t>(units_left);
  }
  SplitCosts costs_;
  int most_ = 0;
  size_t p1_ = 0, u1_ = 0;
  std::vector<double> sum_;  ///< at(r, i, u): least sum of a of r stages over [i, P) on u units
  std::vector<double> max_;  ///< at(r, i, u): least max of b - a of those
};

}  // namespace pase
