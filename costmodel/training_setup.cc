#include "costmodel/training_setup.h"

#include "base/error.h"

namespace pase {

const char* optimizer_name(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::Sgd: return "sgd";
    case Optimizer::None: return "none";
    case Optimizer::Adam: break;
  }
  return "adam";
}

Optimizer parse_optimizer(const std::string& text) {
  if (text == "adam") return Optimizer::Adam;
  if (text == "sgd") return Optimizer::Sgd;
  if (text == "none") return Optimizer::None;
  throw OptionError({"optimizer", "optimizer", "", ": expected adam, sgd or none, got '" + text + "'"});
}

const char* recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::None: return "none";
    case Recompute::Full: return "full";
    case Recompute::Auto: return "auto";
  }
  return "none";
}

Recompute parse_recompute(const std::string& text) {
  if (text == "none") return Recompute::None;
  if (text == "full") return Recompute::Full;
  if (text == "auto") return Recompute::Auto;
  throw OptionError({"recompute", "recompute", "", ": expected none, full or auto, got '" + text + "'"});
}

const char* attention_name(Attention attention) { return attention == Attention::Fused ? "fused" : "naive"; }

Attention parse_attention(const std::string& text) {
  if (text == "naive") return Attention::Naive;
  if (text == "fused") return Attention::Fused;
  throw OptionError({"attention", "attention", "", ": expected naive or fused, got '" + text + "'"});
}

int parse_zero_stage(const std::string& text) {
  if (text.size() == 1 && text[0] >= '0' && text[0] <= '0' + kMaxZeroStage) return text[0] - '0';
  if (text == "auto") return kZeroAuto;
  throw OptionError({"zero", "zero", "", ": expected a ZeRO stage 0, 1, 2 or 3, or auto, got '" + text + "'"});
}

std::string zero_stage_name(int zero) { return zero == kZeroAuto ? "auto" : std::to_string(zero); }

ParameterBytes parameter_bytes(const TrainingSetup& setup) {
  // The weight and its gradient in the training dtype; bf16 (and fp16)
  // training also keeps an fp32 master copy; tf32 stores fp32. Adam adds two
  // fp32 moments, SGD with momentum one. Forward only holds the weight alone.
  ParameterBytes bytes;
  bytes.weight = dtype_bytes(setup.dtype);
  if (setup.optimizer == Optimizer::None) return bytes;
  bytes.gradient = bytes.weight;
  bytes.master = bytes.weight == 2 ? 4 : 0;
  bytes.state = setup.optimizer == Optimizer::Adam ? 8 : 4;
  return bytes;
}

uint64_t weight_state_bytes(const TrainingSetup& setup, int zero, uint64_t tile, uint64_t replicas) {
  const ParameterBytes b = parameter_bytes(setup);
  // Stage 1 shards what only the optimizer's step reads (master copy and
  // moments), stage 2 also the gradient it consumes, stage 3 also the weight.
  uint64_t sharded = 0;
  if (zero >= 1) sharded += b.master + b.state;
  if (zero >= 2) sharded += b.gradient;
  if (zero >= 3) sharded += b.weight;
  const uint64_t whole = b.total() - sharded;
  if (replicas <= 1 || sharded == 0) return b.total() * tile;
  return whole * tile + (sharded * tile + replicas - 1) / replicas;
}

}  // namespace pase
