#pragma once
// A progress line for long solves on a terminal: tables filled of the total
// and the time left, estimated from the planned work. Nothing is printed for
// the first second (short solves stay quiet) nor when stderr is not a terminal.
#include <chrono>
#include <cstdio>
#include <string>

#include "dp/dp.h"

namespace pase {

class ProgressLine {
 public:
  /// Active only when stderr is a terminal.
  ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { finish(); }

  /// Whether the line will be drawn (stderr is a terminal).
  [[nodiscard]] bool active() const { return active_; }
  /// Redraws the line (at most four times a second, after the first second).
  void update(const DpProgress& progress);
  /// Clears the line, if one was drawn.
  void finish();

  /// The line's text for `progress` after `elapsed` seconds (no escapes).
  [[nodiscard]] static std::string text(const DpProgress& progress, double elapsed);

 private:
  using Clock = std::chrono::steady_clock;
  bool active_ = false, drawn_ = false;
  Clock::time_point start_ = Clock::now(), last_ = start_;
};

/// Seconds a DP of `work` steps takes at most on `threads` threads: about
/// 10^9 (entry, configuration) steps per second per core (Transformer at
/// p = 32 and 64 on one core: 0.8 and 1.0 x 10^9 per second against the
/// planned bound, which counts class compaction's savings as work).
[[nodiscard]] double estimated_solve_seconds(uint64_t work, int threads);

}  // namespace pase
