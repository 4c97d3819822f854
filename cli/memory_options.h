#pragma once
// Command-line options of the memory model (--dtype, --optimizer) and of the
// memory cap (--memory-per-device), shared by solve, frontier, batch and compare.
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "costmodel/cost_model.h"
#include "costmodel/memory_model.h"
#include "memorycap/memory_cap.h"
#include "strategy/strategy_document.h"

namespace pase {

struct MemoryCliOptions {
  std::string dtype;      ///< --dtype as written; empty: not given (fp32, or a strategy file's)
  std::string optimizer;  ///< --optimizer as written; empty: not given (adam, or a strategy file's)
  std::string cap;  ///< --memory-per-device as written; empty: no cap
  double gap_target = 0.0;   ///< --cap-gap
  double search_seconds = CapOptions{}.max_seconds;  ///< --cap-seconds
  uint64_t search_work = CapOptions{}.max_search_work;  ///< --cap-work
};

/// Adds --dtype and --optimizer, and --memory-per-device, --cap-gap and --cap-seconds when `with_cap`.
void add_memory_options(CLI::App* command, MemoryCliOptions& options, bool with_cap);

/// The memory model the options choose (UsageError on a bad name): what
/// --dtype and --optimizer say, else what `recorded` (a strategy file's
/// memory setup) says, else fp32 and Adam.
[[nodiscard]] MemoryOptions memory_options(const MemoryCliOptions& options, const MemoryOptions* recorded = nullptr);

/// The same with a strategy file's recorded memory setup, if it has one: a
/// bf16 plan is priced at bf16 unless --dtype says otherwise.
[[nodiscard]] MemoryOptions memory_options(const MemoryCliOptions& options, const std::optional<StrategyDocument>& file);

/// The cap in bytes, if one was given (UsageError on a malformed size). `machine`
/// takes the memory per device of the calibrated model's profile.
[[nodiscard]] std::optional<uint64_t> memory_cap(const MemoryCliOptions& options, const CostModel& model);

}  // namespace pase

namespace pase {

/// How hard the capped search tries to close its gap (UsageError on a negative value).
[[nodiscard]] CapOptions cap_options(const MemoryCliOptions& options);

}  // namespace pase
