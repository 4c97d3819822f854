#include "cli/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>


namespace pase {

ProgressLine::ProgressLine() : active_(isatty(STDERR_FILENO) == 1) {}

std::string ProgressLine::text(const DpProgress& progress, double elapsed) {
  const double share = progress.work > 0 ? static_cast<double>(progress.work_done) / static_cast<double>(progress.work) : 0;
  std::string line = "solving: " + std::to_string(progress.tables_done) + "/" + std::to_string(progress.tables) +
                     " tables, " + std::to_string(static_cast<int>(std::floor(100 * share))) + "% of the work";
  if (share > 0 && share < 1)
    line += ", about " + std::to_string(static_cast<long long>(std::ceil(elapsed * (1 - share) / share))) + " s left";
  return line;
}

void ProgressLine::update(const DpProgress& progress) {
  if (!active_) return;
  const Clock::time_point now = Clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  const std::string line = text(progress, std::chrono::duration<double>(now - start_).count());
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

double estimated_solve_seconds(uint64_t work, int threads) {
  return static_cast<double>(work) / (1e9 * std::max(1, threads));
}

}  // namespace pase
