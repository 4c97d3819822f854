#pragma once
// Launch settings in a framework's own terms (docs/launch.md): Megatron-LM's
// flags, a DeepSpeed config, a PyTorch recipe. They name other programs'
// command-line flags, so they live with the command line, not a library.
#include <string>

#include "strategy/launch_settings.h"

namespace pase {

/// Megatron-LM's command-line flags (pretrain_gpt.py), with comments.
[[nodiscard]] std::string megatron_flags(const LaunchSettings& settings);
/// A DeepSpeed config (JSON) with the pipeline's partition beside it.
[[nodiscard]] std::string deepspeed_config(const LaunchSettings& settings);
/// A PyTorch recipe: a Python module with the device mesh,
/// each stage's modules, the tensor-parallel plan, recomputation and FSDP2
/// over the data axis, and the pipeline schedule.
[[nodiscard]] std::string torch_recipe(const LaunchSettings& settings);

}  // namespace pase
