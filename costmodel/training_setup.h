#pragma once
// How a training step runs, as one value (docs/training.md): the dtype, the
// optimizer, gradient accumulation over micro-batches and ZeRO's sharding of
// a weight's state over its replicas. The memory model counts bytes from it,
// both cost models price a layer's terms from it, the strategy file records
// it. Its defaults are the PaSE model's step: one batch at once, every
// replica holding all of a weight's state; with them every price and byte
// count is what it was before these options existed.
#include <cstdint>
#include <string>

#include "costmodel/dtype.h"

namespace pase {

enum class Optimizer { Adam, Sgd, None };

/// "adam", "sgd", "none".
[[nodiscard]] const char* optimizer_name(Optimizer optimizer);
/// Parses an optimizer name; OptionError (field "optimizer") on anything else.
[[nodiscard]] Optimizer parse_optimizer(const std::string& text);

/// The highest ZeRO stage: 1 shards the optimizer state (and the fp32 master
/// copy), 2 also the gradient, 3 also the weight (FSDP's full sharding).
inline constexpr int kMaxZeroStage = 3;

/// `--zero auto`: the solver chooses each layer's stage (Vertex::zero).
inline constexpr int kZeroAuto = -1;

/// Activation recomputation: none keeps every activation for backward; full
/// recomputes every layer but the block boundaries (graphs/recompute.h);
/// auto lets the solver choose per layer among those (Vertex::recompute).
enum class Recompute { None, Full, Auto };

/// "none", "full", "auto".
[[nodiscard]] const char* recompute_name(Recompute recompute);
/// Parses a recomputation mode; OptionError (field "recompute") on anything else.
[[nodiscard]] Recompute parse_recompute(const std::string& text);

/// Attention: naive keeps and moves the B·H·S·S scores as separate ops do;
/// fused runs it as one kernel (FlashAttention, PyTorch's SDPA) that neither
/// keeps nor moves them (graphs/attention.h).
enum class Attention { Naive, Fused };

/// "naive", "fused".
[[nodiscard]] const char* attention_name(Attention attention);
/// Parses an attention mode; OptionError (field "attention") on anything else.
[[nodiscard]] Attention parse_attention(const std::string& text);

struct TrainingSetup {
  Dtype dtype = Dtype::Fp32;
  Optimizer optimizer = Optimizer::Adam;
  /// M: the step runs as M sequential micro-batches of batch / M each,
  /// accumulating gradients; the graph a solve prices is one micro-batch.
  int64_t micro_batches = 1;
  /// ZeRO stage, 0..kMaxZeroStage, of every layer that does not say its own
  /// (Vertex::zero), or kZeroAuto: each layer's chosen by the solver.
  int zero = 0;
  /// Which layers recompute (the graph's vertices carry the choice: Vertex::recompute).
  Recompute recompute = Recompute::None;
  /// How attention runs (the graph's vertices carry it: Vertex::fused_scores).
  Attention attention = Attention::Naive;
  /// The weight of the once-per-step terms (weight-gradient collectives, the
  /// optimizer's update): 1 in a step; a pipeline search bounds a stage's
  /// time with other weights (0: one micro-batch's time alone; stages/).
  double step_weight = 1.0;
  /// Micro-batches whose activations a device holds at once: 1 without
  /// pipeline stages; a stage of a pipeline holds several (stages/pipeline_schedule.h).
  int64_t activations_in_flight = 1;

  /// The step the PaSE model prices: one micro-batch, no sharded state (any
  /// dtype and optimizer); layers may still recompute (Vertex::recompute).
  [[nodiscard]] bool whole_batch_unsharded() const { return micro_batches == 1 && zero == 0 && step_weight == 1.0; }
  /// Whether the solver chooses recomputation or ZeRO stages per layer.
  [[nodiscard]] bool per_layer_auto() const { return zero == kZeroAuto || recompute == Recompute::Auto; }
  /// Every option at its default but the dtype and optimizer: nothing to record under `training`.
  [[nodiscard]] bool plain_step() const {
    return whole_batch_unsharded() && recompute == Recompute::None && attention == Attention::Naive;
  }
  bool operator==(const TrainingSetup& other) const {
    return dtype == other.dtype && optimizer == other.optimizer && micro_batches == other.micro_batches &&
           zero == other.zero && recompute == other.recompute && attention == other.attention &&
           step_weight == other.step_weight && activations_in_flight == other.activations_in_flight;
  }
};

/// A ZeRO stage as written ("0".."3", or "auto": kZeroAuto); OptionError (field "zero") on anything else.
[[nodiscard]] int parse_zero_stage(const std::string& text);
/// "0".."3", or "auto".
[[nodiscard]] std::string zero_stage_name(int zero);

/// The ZeRO stage a layer runs: its own (`layer_zero` >= 0, Vertex::zero),
/// else the setup's (none under auto before the solver chose).
[[nodiscard]] inline int zero_stage_of(const TrainingSetup& setup, int layer_zero) {
  return layer_zero >= 0 ? layer_zero : setup.zero > 0 ? setup.zero : 0;
}

/// Bytes per element of each part of a weight's training state (docs/memory.md).
struct ParameterBytes {
  uint64_t weight = 0;    ///< the weight in the training dtype
  uint64_t gradient = 0;  ///< its gradient (none without an optimizer)
  uint64_t master = 0;    ///< the fp32 master copy under 16-bit training
  uint64_t state = 0;     ///< the optimizer's moments (adam 8, sgd's momentum 4)
  [[nodiscard]] uint64_t total() const { return weight + gradient + master + state; }
};

[[nodiscard]] ParameterBytes parameter_bytes(const TrainingSetup& setup);

/// Bytes a device holds for a weight tile of `tile` elements replicated on
/// `replicas` devices under ZeRO stage `zero`: the parts the stage
/// shards count tile·bytes/replicas, rounded up to whole bytes per weight.
[[nodiscard]] uint64_t weight_state_bytes(const TrainingSetup& setup, int zero, uint64_t tile, uint64_t replicas);

}  // namespace pase
