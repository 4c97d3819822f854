#pragma once
// Command-line options of the memory model (--dtype, --optimizer) and of the
// memory cap (--memory-per-device), shared by solve, frontier, batch and compare.
#include <cstdint>
#include <optional>
#include <cmath>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "costmodel/cost_model.h"
#include "costmodel/memory_model.h"
#include "memorycap/memory_cap.h"
#include "strategy/strategy_document.h"

namespace pase {

/// The capped search's gap target when per-layer techniques are left to it
/// (--zero auto, --recompute auto) and --cap-gap is not given: a bound within
/// 1%, as the search over techniques would otherwise spend its whole budget
/// (minutes) closing gaps of hundredths of a percent.
inline constexpr double kTechniquesGap = 0.01;

struct MemoryCliOptions {
  std::string dtype;      ///< --dtype as written; empty: not given (fp32, or a strategy file's)
  std::string optimizer;  ///< --optimizer as written; empty: not given (adam, or a strategy file's)
  std::string micro_batches;  ///< --micro-batches M|auto as written; empty: not given (1, or a strategy file's)
  std::string zero;           ///< --zero 0..3|auto as written; empty: not given (0, or a strategy file's)
  std::string recompute;      ///< --recompute none|full|auto as written; empty: not given (none, or a strategy file's)
  std::string attention;      ///< --attention naive|fused as written; empty: not given (naive, or a strategy file's)
  std::string cap;  ///< --memory-per-device as written; empty: no cap
  std::string reserve;  ///< --memory-reserve as written; empty: default_memory_reserve of the machine
  /// --cap-gap; NaN: not given (0, or kTechniquesGap under --zero auto or --recompute auto)
  double gap_target = std::nan("");
  double search_seconds = CapOptions{}.max_seconds;  ///< --cap-seconds
  double time_limit = 1e18;                          ///< --time-limit: seconds from the command's start
  uint64_t search_work = CapOptions{}.max_search_work;  ///< --cap-work
};

/// Adds --dtype, --optimizer, --micro-batches, --zero and --recompute, and
/// --memory-per-device, --cap-gap and --cap-seconds when `with_cap`.
void add_memory_options(CLI::App* command, MemoryCliOptions& options, bool with_cap);

/// The training setup the options choose (UsageError on a bad value): what
/// --dtype, --optimizer, --zero, --recompute and --micro-batches (a count;
/// `auto` leaves the recorded or default count, micro_batch_counts lists the
/// others) say, else what `recorded` (a strategy file's setup) says, else
/// fp32, Adam and the PaSE step.
[[nodiscard]] TrainingSetup memory_options(const MemoryCliOptions& options, const TrainingSetup* recorded = nullptr);

/// The training step `file` records (its memory setup and training object); the defaults where it records none.
[[nodiscard]] TrainingSetup recorded_setup(const StrategyDocument& file);

/// The same with a strategy file's recorded setup, if it has one: a bf16 plan
/// of 8 micro-batches is priced so unless the options say otherwise.
[[nodiscard]] TrainingSetup memory_options(const MemoryCliOptions& options, const std::optional<StrategyDocument>& file);

/// The micro-batch counts a command tries (docs/training.md): `setup`'s alone,
/// or with --micro-batches auto every divisor of the graph's batch `batch`, fewest first.
[[nodiscard]] std::vector<int64_t> micro_batch_counts(const MemoryCliOptions& options, const TrainingSetup& setup,
                                                      int64_t batch);

/// Whether --micro-batches is auto.
[[nodiscard]] bool micro_batches_auto(const MemoryCliOptions& options);

/// The `training` object of the compare, batch and frontier documents (written
/// only off the PaSE step): micro_batches (a count, or "auto"), zero,
/// recompute, attention.
[[nodiscard]] nlohmann::ordered_json training_json(const TrainingSetup& setup, const MemoryCliOptions& options);

/// The cap in bytes, if one was given (UsageError on a malformed size). `machine`
/// takes the memory per device of the calibrated model's profile less the reserve.
[[nodiscard]] std::optional<uint64_t> memory_cap(const MemoryCliOptions& options, const CostModel& model);

/// What a device of the machine keeps from training: --memory-reserve, else
/// none when no machine gives the memory (the default reserve otherwise).
[[nodiscard]] std::optional<uint64_t> memory_reserve(const MemoryCliOptions& options, const CostModel& model);

}  // namespace pase

namespace pase {

/// How hard the capped search tries to close its gap (UsageError on a negative value).
[[nodiscard]] CapOptions cap_options(const MemoryCliOptions& options);

}  // namespace pase
