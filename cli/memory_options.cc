#include "cli/memory_options.h"

#include <chrono>
#include <cmath>

#include <algorithm>
#include <cstdlib>

#include "base/byte_size.h"
#include "cli/count_option.h"
#include "cli/exit_status.h"

namespace pase {

void add_memory_options(CLI::App* command, MemoryCliOptions& options, bool with_cap) {
  command->add_option("--dtype", options.dtype, "Training dtype: fp32 (default, or a --strategy file's), tf32, bf16 or fp16 (memory model; calibrated: GEMM rate and bytes moved)");
  command->add_option("--optimizer", options.optimizer, "Optimizer: adam (default, or a --strategy file's), sgd or none; its state in the memory model, its update in the calibrated model");
  command->add_option("--micro-batches", options.micro_batches,
                      "Gradient accumulation: run the step as M micro-batches of batch/M (default 1, or a --strategy "
                      "file's; auto: the best divisor of the batch)");
  command->add_option("--zero", options.zero,
                      "ZeRO stage of every layer: 0 (default), 1 (shard optimizer state), 2 (and gradients), 3 (and "
                      "weights: FSDP), or auto (each layer's chosen by the solver)");
  command->add_option("--recompute", options.recompute,
                      "Activation recomputation: none (default), full (every layer but the block boundaries) or auto "
                      "(the solver chooses, layer by layer, among those)");
  command->add_option("--attention", options.attention,
                      "Attention: naive (default: the scores kept and moved as separate ops) or fused (one kernel, "
                      "FlashAttention or SDPA: the scores neither kept nor moved)");
  command->add_option("--memory-reserve", options.reserve,
                      "Memory a device of the --machine keeps from training (CUDA context, communication buffers, "
                      "fragmentation): a size (default 1 GiB + 5% of the rest)");
  if (with_cap)
    command->add_option("--memory-per-device", options.cap,
                        "Cap on memory per device (80GB, 16GiB, 512MiB, bytes, or machine: the --machine profile's): the best strategy that fits");
  if (with_cap) {
    command->add_option("--cap-gap", options.gap_target,
                        "Under a cap: stop the search once the proven gap is at most this fraction (default 0: prove optimal; "
                        "0.01 with --zero auto or --recompute auto)");
    add_count_option(command, "--cap-work", options.search_work,
                        "Under a cap: DP steps for the branch and bound that closes the gap (default 2e9, about 2 s; "
                        "the same input always gives the same answer)");
    command->add_option("--cap-seconds", options.search_seconds,
                        "Under a cap: stop each capped search after this many seconds of wall-clock time (checked "
                        "between DP runs) with the best strategy found that fits and its proven gap (default: no limit)");
    command->add_option("--time-limit", options.time_limit,
                        "Wall-clock seconds for the whole search: capped searches stop as --cap-seconds does, and the "
                        "micro-batch, mesh and pipeline candidates not started by then are left out, their bounds "
                        "kept in the gap (default: none)");
  }
}

bool micro_batches_auto(const MemoryCliOptions& options) { return options.micro_batches == "auto"; }

nlohmann::ordered_json training_json(const TrainingSetup& setup, const MemoryCliOptions& options) {
  using json = nlohmann::ordered_json;
  return json{{"micro_batches", micro_batches_auto(options) ? json("auto") : json(setup.micro_batches)},
              {"zero", setup.zero == kZeroAuto ? json("auto") : json(setup.zero)},
              {"recompute", recompute_name(setup.recompute)},
              {"attention", attention_name(setup.attention)}};
}

TrainingSetup memory_options(const MemoryCliOptions& options, const TrainingSetup* recorded) {
  TrainingSetup parsed = recorded ? *recorded : TrainingSetup{};
  try {
    if (!options.dtype.empty()) parsed.dtype = parse_dtype(options.dtype);
    if (!options.optimizer.empty()) parsed.optimizer = parse_optimizer(options.optimizer);
    if (!options.zero.empty()) parsed.zero = parse_zero_stage(options.zero);
    if (!options.recompute.empty()) parsed.recompute = parse_recompute(options.recompute);
    if (!options.attention.empty()) parsed.attention = parse_attention(options.attention);
  } catch (const OptionError& error) {
    throw UsageError(error.words().with("--" + error.words().option));
  }
  if (!options.micro_batches.empty() && !micro_batches_auto(options)) {
    const std::string& text = options.micro_batches;
    char* end = nullptr;
    const long long count = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || count < 1 || text[0] == '+' || text[0] == ' ')
      throw UsageError("--micro-batches: expected a positive count or auto, got '" + text + "'");
    parsed.micro_batches = count;
  }
  return parsed;
}

TrainingSetup recorded_setup(const StrategyDocument& file) {
  if (!file.memory) return memory_options(MemoryCliOptions{});
  TrainingSetup recorded = file.memory->options;
  if (file.training) {
    recorded.micro_batches = file.training->micro_batches;
    recorded.zero = file.training->zero;
    recorded.recompute = file.training->recompute;
    recorded.attention = file.training->attention;
  }
  return recorded;
}

TrainingSetup memory_options(const MemoryCliOptions& options, const std::optional<StrategyDocument>& file) {
  if (!file || !file->memory) return memory_options(options);
  const TrainingSetup recorded = recorded_setup(*file);
  return memory_options(options, &recorded);
}

std::vector<int64_t> micro_batch_counts(const MemoryCliOptions& options, const TrainingSetup& setup, int64_t batch) {
  if (!micro_batches_auto(options)) return {setup.micro_batches};
  std::vector<int64_t> counts;
  for (int64_t m = 1; m * m <= batch; ++m)
    if (batch % m == 0) counts.push_back(m), counts.push_back(batch / m);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

std::optional<uint64_t> memory_cap(const MemoryCliOptions& options, const CostModel& model) {
  if (options.cap.empty()) return std::nullopt;
  if (options.cap == "machine") {
    const std::optional<uint64_t> machine = model.memory_per_device();
    if (!machine)
      throw UsageError("--memory-per-device machine: the memory per device comes from a machine profile "
                       "(add --cost-model calibrated --machine NAME)");
    const uint64_t reserve = memory_reserve(options, model).value_or(0);
    if (reserve >= *machine)
      throw UsageError("--memory-reserve: " + format_gib(reserve) + " GiB leaves nothing of the " + format_gib(*machine) +
                       " GiB of a device of the machine");
    return *machine - reserve;
  }
  if (!options.reserve.empty())
    throw UsageError("--memory-reserve: applies to --memory-per-device machine (a size given is what training may use)");
  std::optional<uint64_t> cap = parse_byte_size(options.cap);
  if (!cap)
    throw UsageError("--memory-per-device: expected a size such as 80GB, 80G, 16GiB, 16Gi, 512MiB or a number of bytes, got '" +
                           options.cap + "'");
  return cap;
}

std::optional<uint64_t> memory_reserve(const MemoryCliOptions& options, const CostModel& model) {
  const std::optional<uint64_t> machine = model.memory_per_device();
  if (options.reserve.empty()) return machine ? std::optional<uint64_t>(default_memory_reserve(*machine)) : std::nullopt;
  // parse_byte_size takes positive sizes; no reserve at all is 0.
  std::optional<uint64_t> reserve = options.reserve == "0" ? std::optional<uint64_t>(0) : parse_byte_size(options.reserve);
  if (!reserve)
    throw UsageError("--memory-reserve: expected a size such as 6GiB, 6Gi, 512MiB or a number of bytes, got '" +
                     options.reserve + "'");
  if (!machine)
    throw UsageError("--memory-reserve: the reserve is kept from a machine profile's memory (add --cost-model calibrated "
                     "--machine NAME)");
  return reserve;
}

}  // namespace pase

namespace pase {

CapOptions cap_options(const MemoryCliOptions& options) {
  const bool given = !std::isnan(options.gap_target);
  if (given && !(options.gap_target >= 0))
    throw UsageError("--cap-gap: expected a fraction of at least 0, got " + std::to_string(options.gap_target));
  if (!(options.search_seconds >= 0))
    throw UsageError("--cap-seconds: expected a number of seconds of at least 0, got " +
                           std::to_string(options.search_seconds));
  if (!(options.time_limit >= 0))
    throw UsageError("--time-limit: expected a number of seconds of at least 0, got " + std::to_string(options.time_limit));
  CapOptions cap;
  const bool techniques_auto = options.zero == "auto" || options.recompute == "auto";
  cap.target_gap = given ? options.gap_target : techniques_auto ? kTechniquesGap : 0.0;
  cap.max_seconds = options.search_seconds;
  if (options.time_limit < 1e9)  // from now: the command has only parsed its options
    cap.deadline = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(options.time_limit));
  cap.max_search_work = options.search_work;
  return cap;
}

}  // namespace pase
