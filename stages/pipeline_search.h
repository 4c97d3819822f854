#pragma once
// pase's own pipeline search (docs/pipeline.md): the layers cut into S stages
// contiguous in topological order, each stage on its own devices, every
// layer's configuration the optimum of its stage, the boundaries placed by
// the outer DP (pipeline_partition.h) for the least step time under the
// schedule, the memory cap holding on every stage.
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "costmodel/cost_model.h"
#include "graphs/graph.h"
#include "solve/outcome.h"
#include "solve/request.h"
#include "stages/pipeline_partition.h"
#include "stages/pipeline_schedule.h"
#include "stages/stage_cuts.h"

namespace pase {

/// The vertex ranges [begin, end) a stage holds, increasing: one for stages
/// of contiguous layers, V for an interleaved stage's chunks.
using StageRanges = std::vector<std::pair<int, int>>;

/// A cost model of a training setup on a number of devices.
using StageModelMaker = std::function<std::unique_ptr<CostModel>(const TrainingSetup& setup, int64_t devices)>;

struct StageSolve;
struct StagePricing;

/// Stage solves that the pipeline searches of one graph (one micro-batch
/// count) and one request's options share: a search over the stage devices
/// asks each range on each device count again and again (every split
/// holding that count). Every solve without the cap, and every capped
/// search that ran to its end (not stopped at its cutoff or the time limit:
/// whatever incumbent it was told, its strategy fits and its bounds hold).
/// Keyed by the range's key (its segments, stages/pipeline_search.cc), its
/// devices, the micro-batches in flight it holds, whether it is under the
/// cap and whether the pipeline has more than one stage (only then are its
/// bounds taken).
struct SharedStageSolves {
  using Key = std::tuple<std::vector<int64_t>, int64_t, int64_t, bool, bool>;
  std::map<Key, std::shared_ptr<const StageSolve>> solves;  ///< each with tables_dropped
  /// Per (devices, micro-batches, step weight): the whole graph's least
  /// costs per vertex, summed (Pricings::least_cost_prefix), so that a search
  /// that rules out every range by them prices nothing; and the whole
  /// graph's pricing (stage_solve.h), so that each device count is priced
  /// once for all the splits that give a stage that many devices.
  using PrefixKey = std::tuple<int64_t, int64_t, double>;
  std::map<PrefixKey, std::vector<double>> least_prefixes;
  std::map<PrefixKey, std::shared_ptr<const StagePricing>> pricings;
  std::mutex mutex;  ///< least_prefixes and pricings are filled from parallel pricings

  /// least_prefixes' prefix of `devices` under `setup`, or, where no search
  /// has it yet, `price()`'s, kept for the others (the lock not held while
  /// it prices: two searches may price the same, the first kept).
  template <typename Price>
  std::vector<double> least_prefix(int64_t devices, const TrainingSetup& setup, const Price& price) {
    const PrefixKey key{devices, setup.micro_batches, setup.step_weight};
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (const auto found = least_prefixes.find(key); found != least_prefixes.end()) return found->second;
    }
    std::vector<double> prefix = price();
    std::lock_guard<std::mutex> lock(mutex);
    least_prefixes.emplace(key, prefix);
    return prefix;
  }
};

struct PipelineRequest {
  int stages = 2;                      ///< S
  std::vector<int64_t> stage_devices;  ///< n_k, summing to the devices; empty: N / S each
  int64_t devices = 0;                 ///< N
  PipelineSchedule schedule;
  StageCuts cuts = StageCuts::Blocks;  ///< where a stage may begin (stage_cuts.h)
  /// The stages fixed, not searched: each holds an equal share of the run of
  /// repeated blocks, the first also what precedes the run and the last what
  /// follows it (Megatron-LM's split; a baseline's pipeline). No lower bound.
  bool equal_blocks = false;
  /// Each stage priced on every layout of the default mesh of its devices
  /// (plans/mesh_search.h) where the model prices links, so its plan is the
  /// strategy as priced; else each stage is solved without a mesh and placed
  /// after (pipeline_plan.h).
  bool stage_layouts = false;
  /// A given pipeline (`evaluate` of a strategy file): where each stage
  /// begins (vertex indices, then the vertex count) and each stage's
  /// strategy (pipeline_document.h, given_pipeline). The stages are priced,
  /// not searched, each with its own strategy; no lower bound.
  std::vector<int> given_starts;
  std::shared_ptr<const std::vector<StrategyDocument>> given_stages;
  /// A given interleaved pipeline: each stage's chunks (the file's), for
  /// solve_interleaved (interleaved_search.h); empty: Megatron-LM's split.
  std::vector<StageRanges> given_chunks;
  /// Interleaved, not given: each stage's share of the blocks searched
  /// (interleaved_chunk_search.h), not Megatron-LM's equal split only.
  bool search_chunks = false;
  /// The stages fixed, each solved for its optimum: where each begins
  /// (vertex indices, then the vertex count; S + 1 increasing entries).
  /// A partition set by hand (explain's moved boundaries); no lower bound.
  std::vector<int> fixed_starts;
  /// A step another pipeline already has (a search over stage and
  /// micro-batch counts): no stage whose optimum without the cap, M t + w
  /// with its sends, reaches it is searched under the cap (no partition
  /// holding it steps faster). Infinity: none.
  double incumbent = std::numeric_limits<double>::infinity();
  /// Solves shared with the other searches of the same graph and options
  /// (a search's own optimum only: not with given stages, fixed starts or
  /// Megatron-LM's split); null: none shared.
  std::shared_ptr<SharedStageSolves> shared_solves;
  /// What each stage's solve is asked: the training setup (its micro-batch
  /// count M; the graph is one micro-batch), the cap, the DP's options.
  SolveRequest stage;
  StageModelMaker make_model;
};

/// One stage's solve, shared by every range with its key.
struct StageSolve {
  bool fits = false;          ///< false: nothing fits the cap, or cut_off (the rest is empty)
  /// The capped search stopped at its cutoff (CapOptions::cutoff): no
  /// strategy of the stage that fits lets a partition beat the incumbent.
  bool cut_off = false;
  int64_t in_flight = 1;      ///< micro-batches' activations its memory counted (1: one, without a cap)
  /// Tables, choice and bytes (activations of `in_flight` micro-batches);
  /// its memory tables and its DP's order and table sizes are dropped
  /// (thousands of stages are kept at once).
  SolveOutcome outcome;
  /// Per vertex of the stage, the techniques its solve chose (what
  /// Vertex::recompute, Vertex::zero and Vertex::fused_scores say): the
  /// stage's graph is rebuilt from its range (pipeline_document.h), not kept.
  std::vector<char> recompute, fused_scores;
  std::vector<int> zero;
  /// Its tables and layouts dropped (SharedStageSolves keeps its values
  /// only): solved again where a partition takes it, to be placed.
  bool tables_dropped = false;
  /// Under the cap: the cutoff and first price its capped search was told
  /// (CapOptions), so that solving it again answers alike.
  double told_cutoff = std::numeric_limits<double>::infinity(), told_first_price = 0;
  double step_cost = 0;       ///< M t + w of its strategy, sends not included
  double t = 0, w = 0;        ///< its time per micro-batch and once-per-step work, sends not included
  double step_bound = 0, time_bound = 0;  ///< for pipeline_partition.h (solve_stage in pipeline_search.cc)
  /// At most M t + w of every strategy of the stage (step_cost where its
  /// solve is exact; a bounded solve's bound): any step holding the stage is
  /// at least this, which rules stages out of the capped search.
  double least_step = 0;
};

struct PipelineStage {
  int begin = 0, end = 0;     ///< vertices [begin, end) of the graph: the first chunk's begin, the last's end
  StageRanges chunks;         ///< an interleaved stage's V ranges; empty: [begin, end)
  int64_t devices = 0, first_device = 0;
  int64_t in_flight = 1;      ///< micro-batches whose activations it holds at its peak
  double send_time = 0;       ///< its point-to-point sends per micro-batch (in t)
  StageValue value;           ///< t with its sends
  std::shared_ptr<const StageSolve> solve;
  PlanMemory bytes;           ///< what a device of the stage holds
};

struct PipelineOutcome {
  std::vector<PipelineStage> stages;  ///< empty: no partition fits
  double step = 0, lower_bound = 0;  ///< lower_bound: NaN with equal_blocks (nothing searched)
  size_t stage_solves = 0;   ///< distinct stages it solved (not those SharedStageSolves gave it)
  size_t ranges = 0;         ///< stage ranges priced
  int positions = 0;         ///< places a stage may begin (and the end)
  /// Some stage was not searched under the cap because its bound reached the
  /// incumbent; unsolved with it: no partition steps faster than the incumbent.
  bool cut = false;
  [[nodiscard]] bool solved() const { return !stages.empty(); }
};

/// A lower bound on the step of every pipeline of `request.stages` stages
/// without any DP (no redistribution, no sends): with equal stage devices
/// (1f1b, gpipe) the sum over layers of each one's least
/// ((S + M - 1) t + w) / S on a stage's devices, as max t >= sum t / S and
/// max w >= sum w / S; else, with L the sum of each layer's least time per
/// micro-batch on the most devices a stage has, L + (M - 1) L / S (interleaved:V:
/// L (M / S + (1 - 1 / S) / V)). A search
/// over stage and micro-batch counts solves only those whose bound is below
/// the best found.
[[nodiscard]] double pipeline_least_step(const Graph& graph, const PipelineRequest& request);

/// A tighter lower bound than pipeline_least_step, at the price of one
/// stage's DP: for stages of equal devices that begin at whole blocks
/// (1f1b, gpipe; priced as the stages are, on their mesh's layouts or not), some stage holds at
/// least q = ceil(B / S) of the B repeated blocks, so the step is at least
/// the optimum of M t + w of q blocks alone plus every other layer's least
/// time per micro-batch; under a cap, that optimum's Lagrangian bound within
/// the cap (solve/solve_request.h, lagrangian_cost_bound), and one stage's
/// step at least the whole graph's (a bound on the capped search's answer).
/// 0 where it does not apply; infinity where nothing fits. A search asks it
/// of a count only when pipeline_least_step has not ruled the count out.
[[nodiscard]] double pipeline_block_bound(const Graph& graph, const PipelineRequest& request);

/// The best pipeline of `request.stages` stages of `graph` (one micro-batch),
/// exact over each stage's optimum as the outer DP prices it, with a lower
/// bound over every strategy (pipeline_partition.h); a single stage is the
/// plain solve. OptionError when the stage devices do not add up to N or
/// there are fewer places to cut than stages.
[[nodiscard]] PipelineOutcome solve_pipeline(const Graph& graph, const PipelineRequest& request);

}  // namespace pase
