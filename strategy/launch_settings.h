#pragma once
// What a user runs, from a strategy file (docs/launch.md): the plan read as
// the sizes a training framework is launched with (tensor, pipeline, data
// and context parallelism, micro-batch per device, gradient accumulation,
// recomputation, ZeRO), and every layer those sizes cannot say, in one line
// with what it needs. The command line writes them in each framework's
// terms (cli/launch_export.h).
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "strategy/strategy_document.h"

namespace pase {

/// How the weight layers (GEMMs and embeddings) of a plan split: tensor ways
/// over the letters their weights follow, data ways over the batch (the first
/// input's first dimension), context ways over the rest.
struct WeightPattern {
  int64_t tensor = 1, data = 1, context = 1;
  bool operator==(const WeightPattern& o) const { return tensor == o.tensor && data == o.data && context == o.context; }
  bool operator<(const WeightPattern& o) const {
    return std::tie(tensor, data, context) < std::tie(o.tensor, o.data, o.context);
  }
};

/// How one module of the tensor-parallel plan splits (a module name with "*"
/// for the block number covers every block).
struct TensorStyle {
  std::string module;
  std::string style;           ///< "colwise" (its output features split) or "rowwise"
  bool reads_indices = false;  ///< an embedding: its input is indices, whole on every rank
  /// Outside the repeated blocks: what reads its output (a norm, the loss)
  /// reads it whole, so a column-parallel module's output is gathered.
  bool whole_output = false;
  bool operator==(const TensorStyle& o) const {
    return module == o.module && style == o.style && reads_indices == o.reads_indices && whole_output == o.whole_output;
  }
};

struct LaunchSettings {
  std::string graph;
  int64_t devices = 0;
  int64_t stages = 1;
  std::string schedule = "1f1b";
  WeightPattern pattern;             ///< the weight layers' most common pattern
  int64_t micro_batches = 1;         ///< gradient accumulation steps
  int64_t micro_batch_size = 0;      ///< one micro-batch over all data-parallel replicas
  int64_t global_batch = 0;          ///< micro_batch_size x micro_batches
  int64_t per_device_micro_batch = 0;
  std::string recompute = "none";    ///< "none", "full" (as solved) or "selective" (some layers)
  int zero = 0;                      ///< the ZeRO stage most weight layers run
  std::string dtype;
  int64_t blocks = 0;                ///< repeated blocks (transformer layers) by module name
  std::vector<int64_t> blocks_per_stage;
  /// Per model chunk, in the schedule's order (a stage's run of layers;
  /// interleaved, chunk v of stage k is the (v S + k)-th): its blocks. The
  /// first chunk also holds what precedes the blocks, the last what follows.
  std::vector<int64_t> blocks_per_chunk;
  /// Per stage, the modules it holds in order: whole blocks ("transformer.h.12")
  /// and the modules outside them ("transformer.wte", "lm_head").
  std::vector<std::vector<std::string>> stage_modules;
  /// Each weight GEMM and embedding (block modules once, with "*"), by how its
  /// weight's output or input features split.
  std::vector<TensorStyle> tensor_plan;
  /// A weight read in two stages (a tied token table), one line each: the
  /// framework sums its gradient over both (Megatron-LM and DeepSpeed do).
  std::vector<std::string> tied_across_stages;
  /// One line per layer the pattern does not describe.
  std::vector<std::string> deviations;
};

/// Reads the launch settings out of a strategy document (a pipeline's or
/// one stage's). InputError naming the file when it has no layers with weights.
[[nodiscard]] LaunchSettings launch_settings(const StrategyDocument& document);

}  // namespace pase
