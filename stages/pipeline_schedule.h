#pragma once
// How a pipeline runs its micro-batches (docs/pipeline.md): the step time of
// S stages from each stage's time per micro-batch, and how many micro-batches'
// activations each stage holds at once.
#include <cstdint>
#include <string>
#include <vector>

namespace pase {

enum class ScheduleKind { OneFOneB, GPipe, Interleaved };

struct PipelineSchedule {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int64_t chunks = 1;  ///< interleaved: V chunks of layers per stage
  bool operator==(const PipelineSchedule& other) const { return kind == other.kind && chunks == other.chunks; }
};

/// "1f1b", "gpipe" or "interleaved:V" (V >= 2); OptionError (field "schedule") otherwise.
[[nodiscard]] PipelineSchedule parse_schedule(const std::string& text);
/// As parse_schedule reads it.
[[nodiscard]] std::string schedule_name(const PipelineSchedule& schedule);

/// The step of `micro_batches` micro-batches through stages whose time per
/// micro-batch (forward and backward) is `t` and whose once-per-step work
/// (weight-gradient collectives, optimizer update) is `w`:
/// 1f1b, gpipe: sum t + (M - 1) max t + max w;
/// interleaved:V: M max t + (sum t - max t) / V + max w.
[[nodiscard]] double pipeline_step_time(const std::vector<double>& t, const std::vector<double>& w,
                                        int64_t micro_batches, const PipelineSchedule& schedule);

/// Micro-batches whose activations stage `stage` (0-based) of `stages` holds
/// at its peak: 1f1b min(M, S - k); gpipe M; interleaved:V, in units of a
/// whole stage's activations, ceil(min(M V, 2 (S - k - 1) + (V - 1) S + 1) / V)
/// (Megatron-LM's warm-up count plus one, each chunk a V-th of the stage).
[[nodiscard]] int64_t micro_batches_in_flight(int stage, int stages, int64_t micro_batches,
                                              const PipelineSchedule& schedule);

}  // namespace pase
