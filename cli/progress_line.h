#pragma once
// A progress line for long solves on a terminal: what is being searched (a
// stage label the command's loops set: "micro-batches 4 (2 of 20)"), the DP
// run in progress (runs counted, tables filled of the total) and the time
// so far, redrawn four times a second by a thread of its own, so that steps
// without DP progress (pricing, placement) still show the clock. Nothing is
// printed for the first second (short solves stay quiet; the environment's
// PASE_PROGRESS_AFTER sets other seconds) nor when stderr is not a terminal.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "dp/dp.h"

namespace pase {

class ProgressLine {
 public:
  /// Active only when stderr is a terminal; draws from its own thread.
  ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { finish(); }

  /// Whether the line will be drawn (stderr is a terminal).
  [[nodiscard]] bool active() const { return active_; }
  /// Records a DP's progress (any thread); a table count that goes back down starts a new run.
  void update(const DpProgress& progress);
  /// Stops the drawing thread and clears the line, if one was drawn.
  void finish();

  /// The line's text (no escapes): the stage, the DP runs so far and the
  /// current one's tables, the time so far, and, for a single run, the time left.
  [[nodiscard]] static std::string text(const std::string& stage, const DpProgress& progress, int runs, double elapsed);

 private:
  using Clock = std::chrono::steady_clock;
  void draw_until_finished();

  bool active_ = false, drawn_ = false, stopping_ = false;
  double first_draw_ = 1;  // seconds before the first draw
  Clock::time_point start_ = Clock::now();
  std::mutex mutex_;
  std::condition_variable wake_;
  DpProgress progress_;
  int runs_ = 0;
  std::thread drawer_;
};

/// What the command searches now, for the progress line ("" to clear): set by
/// the loops over candidates (micro-batch counts, meshes, pipelines) and phases.
void set_progress_stage(const std::string& stage);

/// The phase of the solve under way ("pricing", "searching", "placing the
/// plan": SolveRequest::on_phase), said after the stage; "" to clear.
void set_progress_phase(const char* phase);

/// Seconds a DP of `work` steps takes at most on `threads` threads: about
/// 10^9 (entry, configuration) steps per second per core (Transformer at
/// p = 32 and 64 on one core: 0.8 and 1.0 x 10^9 per second against the
/// planned bound, which counts class compaction's savings as work).
[[nodiscard]] double estimated_solve_seconds(uint64_t work, int threads);

}  // namespace pase
