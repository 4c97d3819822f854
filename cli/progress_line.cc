#include "cli/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace pase {
namespace {

// The stage label the loops set, read by the drawing thread.
std::mutex stage_mutex;
std::string stage_label, phase_label;

std::string current_stage() {
  const std::lock_guard<std::mutex> lock(stage_mutex);
  if (phase_label.empty()) return stage_label;
  return stage_label.empty() ? phase_label : stage_label + ", " + phase_label;
}

// Seconds before the first draw: 1, or PASE_PROGRESS_AFTER (tests draw at once).
double first_draw_after() {
  const char* after = std::getenv("PASE_PROGRESS_AFTER");
  char* end = nullptr;
  const double seconds = after ? std::strtod(after, &end) : 1.0;
  return after && end != after && seconds >= 0 ? seconds : 1.0;
}

}  // namespace

void set_progress_stage(const std::string& stage) {
  const std::lock_guard<std::mutex> lock(stage_mutex);
  stage_label = stage;
}

void set_progress_phase(const char* phase) {
  const std::lock_guard<std::mutex> lock(stage_mutex);
  phase_label = phase;
}

ProgressLine::ProgressLine() : active_(isatty(STDERR_FILENO) == 1), first_draw_(first_draw_after()) {
  if (active_) drawer_ = std::thread([this] { draw_until_finished(); });
}

std::string ProgressLine::text(const std::string& stage, const DpProgress& progress, int runs, double elapsed) {
  std::string line = "solving" + (stage.empty() ? std::string() : " " + stage) + ": ";
  if (progress.tables > 0) {
    const double share = progress.work > 0 ? static_cast<double>(progress.work_done) / static_cast<double>(progress.work) : 0;
    line += (runs > 1 ? "DP run " + std::to_string(runs) + ", " : std::string()) + std::to_string(progress.tables_done) +
            "/" + std::to_string(progress.tables) + " tables, " +
            std::to_string(static_cast<int>(std::floor(100 * share))) + "% of the work, ";
    if (runs <= 1 && share > 0 && share < 1)
      return line + "about " + std::to_string(static_cast<long long>(std::ceil(elapsed * (1 - share) / share))) + " s left";
  }
  return line + std::to_string(static_cast<long long>(elapsed)) + " s so far";
}

void ProgressLine::update(const DpProgress& progress) {
  if (!active_) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (runs_ == 0 || progress.tables_done < progress_.tables_done || progress.tables != progress_.tables) ++runs_;
  progress_ = progress;
}

void ProgressLine::draw_until_finished() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; })) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    if (elapsed < first_draw_) continue;
    const std::string line = text(current_stage(), progress_, runs_, elapsed);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
}

void ProgressLine::finish() {
  if (!drawer_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  drawer_.join();
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  set_progress_stage("");
  set_progress_phase("");
}

double estimated_solve_seconds(uint64_t work, int threads) {
  return static_cast<double>(work) / (1e9 * std::max(1, threads));
}

}  // namespace pase
