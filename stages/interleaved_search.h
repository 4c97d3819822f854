#pragma once
// Megatron-LM's interleaved schedule in the search (docs/pipeline.md,
// "Interleaved stages"): the repeated blocks cut into S x V chunks of equal
// blocks, chunk c on stage c mod S, so each stage holds V chunks apart in
// the graph and the bubble shrinks V-fold.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "costmodel/cost_model.h"
#include "graphs/graph.h"
#include "stages/pipeline_search.h"
#include "stages/stage_cuts.h"
#include "stages/stage_key.h"
#include "stages/stage_solve.h"

namespace pase {

/// The chunks of an interleaved pipeline of `stages` stages and `chunks`
/// chunks each: Megatron-LM's equal split of the blocks into stages x chunks
/// (stage_solve.h, equal_block_bounds; the first chunk also holds what
/// precedes the blocks, the last what follows), chunk c on stage c mod S,
/// adjacent chunks of one stage joined. OptionError naming the stages when
/// the graph repeats fewer blocks than stages x chunks.
[[nodiscard]] std::vector<StageRanges> interleaved_chunks(const Graph& graph, int stages, int64_t chunks);

/// The chunks of an interleaved pipeline whose stage k holds `blocks[k]` of
/// the run of repeated blocks, spread over its `chunks` chunks as evenly as
/// they go (its first chunks one more), chunk c = v S + k in graph order, the
/// first chunk also holding what precedes the run and the last what follows.
/// Each count at least `chunks` (a chunk holds a block at least), summing to
/// the run's blocks (stage_cuts.h, block_run).
[[nodiscard]] std::vector<StageRanges> interleaved_chunks_of(const Graph& graph, const std::vector<int64_t>& blocks,
                                                             int64_t chunks);
/// The same, from the graph's cut vertices of StageCuts::Blocks and its
/// block run (stage_cuts.h), found once for many chunkings.
[[nodiscard]] std::vector<StageRanges> interleaved_chunks_of(const std::vector<int>& cuts, const BlockRun& run,
                                                             const std::vector<int64_t>& blocks, int64_t chunks);

/// The stages of one interleaved request, priced for any chunks: each stage's
/// layers (its V chunks together, sharing its devices and memory) at the
/// optimum of its M t + w, under the cap with the micro-batches it holds in
/// flight (pipeline_schedule.h), its sends per chunk boundary, and the
/// tied weights' all-reduce; alike stages (the same chunks' blocks on as
/// many devices, as many in flight) solved once for every chunking asked.
class InterleavedStages {
 public:
  InterleavedStages(const Graph& graph, const PipelineRequest& request);
  /// Stage k of `chunks` (each stage's ranges), as the pipeline prices it;
  /// `tabled`: its solve with its tables (solved again where another search
  /// shared it without them, SharedStageSolves), as a plan needs it.
  [[nodiscard]] PipelineStage stage(int k, const std::vector<StageRanges>& chunks, bool tabled = false);
  /// Stage k's layers at their least costs on its devices (no edge, no cap),
  /// with its sends and tied all-reduce: its time_bound and step_bound, at
  /// most those of stage(k, chunks) (t and w left 0). Only where the request
  /// searches the chunks (PipelineRequest::search_chunks).
  [[nodiscard]] StageValue least(int k, const std::vector<StageRanges>& chunks) const;
  /// The pipeline of `chunks`: every stage, the step and, unless the stages'
  /// strategies are given, the lower bound over every strategy of them
  /// (below); a stage another search shared keeps its tables dropped.
  [[nodiscard]] PipelineOutcome pipeline(const std::vector<StageRanges>& chunks);
  [[nodiscard]] int stages() const { return s_; }
  [[nodiscard]] const StageKeys& keys() const { return keys_; }
  [[nodiscard]] size_t solves() const { return solves_; }

 private:
  using Key = std::tuple<std::vector<int64_t>, int64_t, int64_t, bool>;  // chunks, devices, in flight, under the cap
  [[nodiscard]] bool given() const { return request_.given_stages != nullptr; }
  [[nodiscard]] int64_t in_flight(int k) const;
  [[nodiscard]] std::vector<double> least_prefix(int64_t devices, const TrainingSetup& setup) const;
  [[nodiscard]] double sends_of(int k, const std::vector<StageRanges>& chunks) const;
  [[nodiscard]] double tied_work(const StageRanges& own) const;
  std::shared_ptr<const StageSolve> solve(int k, const StageRanges& own, bool tabled);
  [[nodiscard]] Key key_of(int k, const StageRanges& own, int64_t held, bool under_cap) const;
  // The other searches' solves (a search for its own optimum only), keyed apart from PipelineSearch's.
  [[nodiscard]] SharedStageSolves* shared() const;
  [[nodiscard]] SharedStageSolves::Key shared_key(const Key& key) const;
  template <typename Solve>
  std::shared_ptr<const StageSolve> remember(const Key& key, const Solve& solve);

  const Graph& graph_;
  const PipelineRequest& request_;
  PipelineRequest shared_;  // the request with a block table cache every stage's DP shares
  const std::vector<int64_t> devices_;
  const int s_;
  const StageKeys keys_;
  Pricings pricings_;
  std::vector<int64_t> first_;
  std::unique_ptr<CostModel> link_model_;
  std::vector<TiedRead> tied_;
  std::map<int, uint64_t> crossing_;  // at each block cut: the elements a send there carries
  std::map<int64_t, std::pair<std::vector<double>, std::vector<double>>> least_;  // per devices: time, step prefixes
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<const StageSolve>> memo_;
  size_t solves_ = 0;
};

/// Each stage of an interleaved `outcome` of `request` whose solve another
/// search shared without its tables (SharedStageSolves), solved again with
/// them, as a plan needs them: once for the answer of a search over many
/// pipelines, not for every pipeline it compares.
void solve_dropped_tables(const Graph& graph, const PipelineRequest& request, PipelineOutcome& outcome);

/// The interleaved pipeline of `request` (schedule interleaved:V): the
/// chunks of interleaved_chunks (or, for a given pipeline, the file's), each
/// stage's layers (its V chunks together, sharing its devices and memory) at
/// the optimum of its M t + w, under the cap with the micro-batches it holds
/// in flight (pipeline_schedule.h), its sends per chunk boundary. The step is
/// pipeline_step_time's M max t + (sum t - max t) / V + max w, and the lower
/// bound, over every strategy of those stages, the largest over b of b's
/// bound on M t + w plus the others' bounds on t over V (for every b the step
/// is at least M t_b + w_b plus the others' t_k / V). The chunks are not searched: they
/// are the split Megatron-LM runs.
[[nodiscard]] PipelineOutcome solve_interleaved(const Graph& graph, const PipelineRequest& request);

}  // namespace pase
