#pragma once
// The `pase-strategy` v1 file as one document type (docs/formats.md): what the
// writer writes is what the reader reads back, field for field, and writing
// what was read gives the same bytes. A solve builds one (strategy_file.h);
// `evaluate`, `explain` and `pase-calibrate --validate` read one. The plan's
// own fields (the mesh, each layer's mesh axes, each tensor's layout and
// redistribution record) are the plan reader's (plans/plan_reader.h); the
// document holds them as a Plan when read `with_plan`.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/shape.h"
#include "costmodel/memory_model.h"
#include "graphs/graph_file.h"
#include "plans/plan.h"

namespace pase {

/// Solver facts recorded in the file.
struct SolverReport {
  std::string order_kind;
  std::vector<std::string> order;
  size_t max_dependent_set = 0;
  uint64_t table_entries = 0;
  uint64_t largest_table_entries = 0;
  uint64_t peak_table_bytes = 0;
  double seconds = 0.0;
  /// Write peak_table_bytes and seconds: they vary from run to run and with
  /// the thread count, so by default they are left out and the file is the
  /// same bytes every time (users diff and cache it).
  bool timings = false;
  /// A bounded solve (dp/bounded_solve.h) sets lower_bound_cost and
  /// relaxed_edges; it is exact when its bound meets its cost, else its cost
  /// is within the written gap of the optimum.
  bool exact = true;
  double lower_bound_cost = 0.0;
  size_t relaxed_edges = 0;
  /// --uniform-blocks: each run made uniform (its first layer, blocks,
  /// layers per block) and the optimum without the restriction.
  struct UniformRunReport {
    std::string first_layer;
    size_t blocks = 0, layers_per_block = 0;
    size_t layers_around = 0;  ///< layers of partial blocks at the run's ends, made uniform too
  };
  bool uniform = false;
  std::vector<UniformRunReport> uniform_runs;
  double free_optimum_cost = 0.0;
};

/// The strategy's memory per device (docs/memory.md), and the cap it was solved under.
struct MemoryReport {
  PlanMemory bytes;
  TrainingSetup options;
  int64_t micro_batch_size = 0;  ///< the batch of one micro-batch (the priced graph's); 0: not known
  std::optional<uint64_t> cap;        ///< none: solved without a cap
  std::optional<double> lower_bound;  ///< proven lower bound on the best cost under the cap
  std::optional<double> gap;          ///< (total_cost - lower_bound) / lower_bound
};

/// An input ("tensor", the tensor read), output or weight ("name") of a layer.
struct StrategyTensor {
  std::string name;               ///< inputs: the tensor read; weights: the parameter; outputs: ""
  Shape shape;
  std::vector<int64_t> split;     ///< pieces per dimension
  std::vector<std::string> dims;  ///< weights: the layer letters each dimension follows
};

/// How the step runs (docs/training.md), the file's `training` object: written
/// when any option differs from the PaSE step (micro-batches, recomputation, ZeRO).
struct TrainingRecord {
  int64_t micro_batches = 1;
  int64_t micro_batch_size = 0;
  Recompute recompute = Recompute::None;  ///< as asked
  int zero = 0;                           ///< as asked
  Attention attention = Attention::Naive;
  /// `pipeline` (docs/pipeline.md): its stages and schedule, and per stage
  /// its devices, its time per micro-batch (one stage: the whole step's cost)
  /// and the bytes a device of it holds.
  int64_t stages = 1;
  std::string schedule = "1f1b";
  std::vector<int64_t> stage_devices;
  std::vector<double> stage_cost;
  std::vector<uint64_t> stage_memory_bytes;
};

/// One `layers[]` entry. A hand-written file may give only `name` and
/// `config`: then `dims` is nullopt and the rest empty.
struct StrategyLayer {
  std::string name;
  std::vector<int64_t> config;
  std::optional<std::string> dims;
  std::string op;
  Shape domain;
  int64_t devices_used = 0;
  double cost = 0.0;
  std::optional<bool> recompute;  ///< with a `training` object: whether the layer recomputes
  std::optional<int> zero;        ///< with a `training` object: its ZeRO stage
  std::optional<bool> fused_attention;  ///< with a `training` object: its outputs are scores inside a fused attention kernel
  std::optional<int> stage;       ///< with pipeline stages: the stage that runs it (0-based)
  /// Megatron's sequence parallelism: "scatter_output" or "gather_input"
  /// (graphs/sequence_parallel.h); "" where the layer plays no part.
  std::string sequence_parallel;
  std::vector<StrategyTensor> inputs, outputs, weights;
};

struct StrategyDocument {
  std::string source;  ///< file name for messages (read documents)
  std::string graph;
  std::optional<int64_t> devices;
  std::optional<double> flops_tflops, bandwidth_gbps;  ///< `machine`
  std::string machine_profile;  ///< `machine.profile`: the calibrated model's machine by name (empty: none recorded)
  std::string cost_model, cost_unit;
  std::optional<double> total_cost;
  std::vector<ReplacedNodeV1> replaced;  ///< what a lenient import left out
  std::optional<SolverReport> solver;    ///< `exact`, `lower_bound_cost`, `gap` and the `solver` record
  std::optional<double> layer_cost, redistribution_cost;
  std::optional<Plan> plan;              ///< the mesh and layouts (read only `with_plan`)
  std::string plan_unavailable;          ///< why no plan, when the default mesh cannot run the strategy
  /// The strategy in one line (plan_summary.h), written by solve and
  /// evaluate; readers take it as words, not as data.
  std::string summary;
  std::optional<MemoryReport> memory;
  std::optional<TrainingRecord> training;
  std::vector<StrategyLayer> layers;
};

/// The file's text: fields in a fixed order, one top-level field per line,
/// one layer per line (it diffs well). The same bytes for the same document.
[[nodiscard]] std::string write_strategy(const StrategyDocument& document);

/// Parses and checks JSON text (split counts in 1..2^30, each layer named
/// once, every field that is present of the right type); `source` names the
/// file in errors. With `with_plan`, also reads the plan (read_plan's
/// checks); without, its fields are left to the plan reader.
[[nodiscard]] StrategyDocument parse_strategy_file(const std::string& text, const std::string& source,
                                                   bool with_plan = false);

/// Reads and parses a file (InputError naming it if missing or malformed).
[[nodiscard]] StrategyDocument read_strategy_file(const std::string& path, bool with_plan = false);

}  // namespace pase
