#pragma once
// The splits of the devices among the stages that a search over the stage
// devices of one graph lists (docs/pipeline.md, "Stages of unequal
// devices"), bounded by the layers' least costs (split_bounds.h) before any
// is listed. Under 1F1B and GPipe a stage is any range of cut positions;
// under the interleaved schedule each stage's chunks are fixed (Megatron-
// LM's split, interleaved_search.h) and only their devices are split, or,
// with the chunks searched, each stage is a range of the blocks.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "graphs/graph.h"
#include "stages/pipeline_search.h"
#include "stages/split_bounds.h"

namespace pase {

/// Each device count's least costs of the whole graph per vertex: [u - 1][v]
/// the sum of the least costs of the layers before vertex v on u units
/// (Pricings::least_cost_prefix), the time per micro-batch and the M t + w.
struct LeastPrefixes {
  std::vector<std::vector<double>> time, step;
};

/// `graph` priced on every multiple of `unit` up to `request.devices`, once
/// per count, in parallel; only the prefixes kept (and handed to the
/// request's shared solves, where the splits' searches read them again).
[[nodiscard]] LeastPrefixes least_prefixes(const Graph& graph, const PipelineRequest& request, int64_t unit);

/// The costs of stages that begin at cut vertices `starts` (their ranges [i, j) of them).
[[nodiscard]] SplitCosts split_costs_at(const LeastPrefixes& prefixes, const std::vector<int>& starts);

/// The costs of interleaved stages, stage k holding `stages[k]`'s chunks
/// (one position each, SplitCosts::one_position_per_stage). Its step is
/// M max t + (sum t - max t) / V + max w, at least M t_b + w_b + the
/// others' t_k / V for every stage b (it exceeds that by (max t - t_b)
/// (M - 1 / V) + max w - w_b >= 0), so at least sum a + max (b - a) with
/// a = the stage's least t over V and b = its least M t + w.
[[nodiscard]] SplitCosts interleaved_split_costs(const LeastPrefixes& prefixes, const std::vector<StageRanges>& stages,
                                                 int64_t chunks);

/// The costs of interleaved stages whose shares of the blocks are searched
/// (interleaved_chunk_search.h): each stage a range of the run's blocks, the
/// first also holding what precedes the run and the last what follows (the
/// positions: after each block), its time over V as above. A range of fewer
/// than V blocks is priced too, so the bound holds over every share.
[[nodiscard]] SplitCosts chunk_share_costs(const Graph& graph, const LeastPrefixes& prefixes, int64_t chunks);

/// A split of the devices themselves (each stage's count) with its bound.
struct DeviceSplit {
  std::vector<int64_t> devices;
  double bound = 0;
};

class SplitCandidates {
 public:
  /// The bounds of pipelines of up to `most_stages` stages of `request`'s
  /// schedule on `request.devices` in multiples of `unit`.
  SplitCandidates(const Graph& graph, const PipelineRequest& request, int64_t unit, int most_stages);
  /// One stage: all the devices (bound 0); more: the equal split where the
  /// units divide and the greedy split, those not listed yet. Where the
  /// graph cannot be cut into that many interleaved stages, one split
  /// unbounded (its search says why).
  [[nodiscard]] std::vector<DeviceSplit> first(int stages);
  /// The splits below `step` not listed yet, least bound first, at most
  /// `limit` (SplitBounds::below); `left_out` lowered to the least bound of
  /// those left out for the limit or the deadline.
  [[nodiscard]] std::vector<DeviceSplit> below(int stages, double step, size_t limit, double& left_out,
                                              std::chrono::steady_clock::time_point deadline =
                                                  std::chrono::steady_clock::time_point::max());
  /// Every split listed so far.
  [[nodiscard]] const std::set<std::vector<int64_t>>& listed() const { return listed_; }

 private:
  // The bounds of `stages` stages: the one table of every count, or the
  // count's interleaved chunks' (null where the graph has too few blocks).
  [[nodiscard]] const SplitBounds* bounds_of(int stages) const;
  [[nodiscard]] std::vector<int64_t> devices_of(const std::vector<int64_t>& units) const;
  int64_t devices_ = 0, unit_ = 1;
  std::unique_ptr<SplitBounds> ranges_;                      // 1F1B, GPipe: stages over cut positions
  std::map<int, std::unique_ptr<SplitBounds>> interleaved_;  // per stage count: its chunks' devices
  std::set<std::vector<int64_t>> listed_;
};

}  // namespace pase
