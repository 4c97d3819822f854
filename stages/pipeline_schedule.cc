#include "stages/pipeline_schedule.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace pase {

PipelineSchedule parse_schedule(const std::string& text) {
  if (text == "1f1b") return {ScheduleKind::OneFOneB, 1};
  if (text == "gpipe") return {ScheduleKind::GPipe, 1};
  const std::string prefix = "interleaved:";
  if (text.rfind(prefix, 0) == 0) {
    const std::string count = text.substr(prefix.size());
    const bool digits = !count.empty() && count.size() <= 4 &&
                        std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && std::stoll(count) >= 2) return {ScheduleKind::Interleaved, std::stoll(count)};
  }
  throw OptionError({"schedule", "schedule", "", ": expected 1f1b, gpipe or interleaved:V (V from 2 to 9999 chunks per stage), got '" + text + "'"});
}

std::string schedule_name(const PipelineSchedule& schedule) {
  switch (schedule.kind) {
    case ScheduleKind::OneFOneB: return "1f1b";
    case ScheduleKind::GPipe: return "gpipe";
    case ScheduleKind::Interleaved: return "interleaved:" + std::to_string(schedule.chunks);
  }
  return "1f1b";
}

double pipeline_step_time(const std::vector<double>& t, const std::vector<double>& w, int64_t micro_batches,
                          const PipelineSchedule& schedule) {
  if (t.empty()) return 0;
  const double sum = std::accumulate(t.begin(), t.end(), 0.0);
  const double slowest = *std::max_element(t.begin(), t.end());
  const double step_work = w.empty() ? 0.0 : *std::max_element(w.begin(), w.end());
  const double m = static_cast<double>(micro_batches);
  if (schedule.kind == ScheduleKind::Interleaved)
    return m * slowest + (sum - slowest) / static_cast<double>(schedule.chunks) + step_work;
  return sum + (m - 1) * slowest + step_work;
}

int64_t micro_batches_in_flight(int stage, int stages, int64_t micro_batches, const PipelineSchedule& schedule) {
  switch (schedule.kind) {
    case ScheduleKind::GPipe: return micro_batches;
    case ScheduleKind::OneFOneB: return std::min<int64_t>(micro_batches, stages - stage);
    case ScheduleKind::Interleaved: {
      const int64_t v = schedule.chunks;
      const int64_t chunks = std::min<int64_t>(micro_batches * v, 2 * (stages - stage - 1) + (v - 1) * stages + 1);
      return (chunks + v - 1) / v;
    }
  }
  return micro_batches;
}

}  // namespace pase
