#pragma once
// What the pipeline searches share (stages/pipeline_search.h for stages of
// one contiguous range, stages/interleaved_search.h for interleaved stages
// of several): the whole graph priced once per device count and sliced per
// stage, one stage's solve with its time per micro-batch and its bounds, the
// sends between stages, the weights two stages read, and Megatron-LM's
// equal split of the blocks.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "costmodel/cost_model.h"
#include "graphs/graph.h"
#include "plans/mesh.h"
#include "stages/pipeline_search.h"

namespace pase {

/// `setup` at `micro_batches` with the step's terms weighted by `step_weight`.
[[nodiscard]] TrainingSetup weighted(TrainingSetup setup, int64_t micro_batches, double step_weight);

/// Whether the stages are priced on their meshes' layouts where the model
/// prices links: a search's or a baseline's, or a given file's whose stages
/// have plans (to take each layer's axes from).
[[nodiscard]] bool stages_on_layouts(const PipelineRequest& request);

/// The mesh a stage of `devices` is priced and placed on (the default mesh of
/// its devices, the machine's nodes), when its layouts are searched.
[[nodiscard]] std::optional<Mesh> stage_mesh(const PipelineRequest& request, const CostModel& model, int64_t devices);

/// Where `vertex` sits in the stage graph of `ranges` (graphs/stage_graph.h), -1 outside it.
[[nodiscard]] int index_in(const StageRanges& ranges, int vertex);

/// The whole graph priced on a device count under a setup (Pricings).
struct StagePricing {
  std::shared_ptr<const CostTables> tables;
  std::vector<std::shared_ptr<const std::vector<AxisAssignment>>> layouts;  ///< where priced on layouts
};

/// The whole graph priced once per device count and setup; each stage's
/// tables are a slice of it (slice_cost_tables), so equal blocks share their
/// arrays and the DP keeps their folded tables (DpOptions::block_tables).
/// Where the model prices links, on every layout of the stage's mesh.
class Pricings {
 public:
  Pricings(const Graph& graph, const PipelineRequest& request);
  void add(int64_t devices, const TrainingSetup& setup) { tables_.try_emplace(key(devices, setup)); }
  /// Weights read again by a later vertex (StageKeys::repeated_reads).
  [[nodiscard]] const std::vector<std::pair<int, int>>& repeated_reads() const { return repeated_; }
  /// Every pricing added and not yet made, in parallel.
  void price_all();
  /// The stage's tables (and layouts) into `ask`: the whole graph's, sliced
  /// (slice_cost_tables). A weight the stage reads whose first reader lies
  /// outside it (a tied embedding) is stepped by this stage's copy too, which
  /// the whole graph's pricing leaves to its first reader: that reader is
  /// priced again here as the stage's own pricing prices it.
  void slice_into(SolveRequest& ask, int64_t devices, const TrainingSetup& setup, const StageRanges& ranges) const;
  /// The whole graph's pricing on `devices` under `setup` (added and
  /// priced): at [v], the sum of the least cost of each vertex before v.
  /// [end] - [begin] is at most every strategy's cost of the stage [begin,
  /// end) as sliced (least_vertex_costs: no edge costs less than nothing; a
  /// tied weight's reader is priced again there, never for less).
  [[nodiscard]] std::vector<double> least_cost_prefix(int64_t devices, const TrainingSetup& setup) const;

 private:
  using Priced = StagePricing;
  using Key = std::tuple<int64_t, int64_t, double>;  // devices, micro-batches, step weight
  static Key key(int64_t devices, const TrainingSetup& setup) {
    return {devices, setup.micro_batches, setup.step_weight};
  }
  [[nodiscard]] TrainingSetup setup_of(const Key& k) const;
  const Graph& graph_;
  const PipelineRequest& request_;
  std::map<Key, Priced> tables_;
  std::vector<std::pair<int, int>> repeated_;  // StageKeys::repeated_reads
};

/// Where a stage of the graph lies, and what prices it.
struct StageSite {
  StageRanges ranges;
  int64_t devices = 0;
  const Pricings* pricings = nullptr;
};

/// The optimum of `stage` under `setup`, or its bound past the DP's limits;
/// without a cap, so a bound over every strategy of the stage.
[[nodiscard]] double least_cost(const Graph& stage, const StageSite& site, const TrainingSetup& setup,
                                const PipelineRequest& request);

/// The optimum of one stage on its devices holding `in_flight` micro-batches'
/// activations: its strategy for M t + w, that strategy's t and w, and for a
/// pipeline of `stages` stages the bounds of pipeline_partition.h:
/// step_bound <= M t + w (its own optimum, or its capped search's bound) and
/// time_bound <= t (one more solve, of t alone) over every strategy of the
/// stage that fits. `base`: the same stage without the cap, whose bounds hold.
[[nodiscard]] StageSolve solve_stage(const Graph& stage, const StageSite& site, int64_t in_flight, int stages,
                                     const PipelineRequest& request, const StageSolve* base = nullptr);

/// Whether `solve` ran to its end (not a capped search stopped at its
/// cutoff or the clock): whatever incumbent it was told, its strategy fits
/// and its bounds hold, so other searches may take it (SharedStageSolves).
[[nodiscard]] bool ran_to_end(const StageSolve& solve);

/// A copy of `solve` without its tables, which hold the whole graph's
/// pricing on its devices alive: the shared solves keep only their values
/// (StageSolve::tables_dropped; solved again where a plan needs them).
[[nodiscard]] std::shared_ptr<const StageSolve> without_tables(const StageSolve& solve);

/// Each stage's devices: as given, or N / S each; OptionError when they do not add up or divide,
/// or (field "micro_batches") when an interleaved schedule's micro-batches are not a multiple of the stages.
[[nodiscard]] std::vector<int64_t> devices_of_stages(const PipelineRequest& request);

/// One direction of the send across a stage boundary, per micro-batch: the
/// `crossing` activation elements spread over the smaller stage's devices,
/// each pair over the link between them.
[[nodiscard]] double send_seconds(uint64_t crossing, int64_t from, int64_t to, bool across_nodes, const CostModel& model);


/// Megatron-LM's split of the graph into `parts` ranges over the cut positions
/// of StageCuts::Blocks: an equal share of the run's blocks each (the first
/// parts one more where they do not divide), the first also what precedes
/// the run, the last what follows. OptionError when the graph repeats fewer
/// blocks than `parts`.
[[nodiscard]] std::vector<int> equal_block_bounds(const Graph& graph, int parts);

/// A weight read again by a later vertex: the two readers and its elements.
struct TiedRead {
  int reader = 0, before = 0;
  uint64_t elements = 0;
  double seconds = 0;  ///< its gradients' all-reduce between the two copies
};
[[nodiscard]] std::vector<TiedRead> tied_reads(const Graph& graph, const std::vector<std::pair<int, int>>& repeated);

/// tied_reads with each one's seconds: its elements over the fewest devices a
/// stage has (`stage_devices`), each pair exchanging its piece over the link
/// the job's ends are joined by (across nodes when the `devices` span several).
[[nodiscard]] std::vector<TiedRead> priced_tied_reads(const Graph& graph, const std::vector<std::pair<int, int>>& repeated,
                                                      const std::vector<int64_t>& stage_devices, int64_t devices,
                                                      const CostModel& link_model);

}  // namespace pase
