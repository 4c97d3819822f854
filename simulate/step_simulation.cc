#include "simulate/step_simulation.h"

#include <algorithm>
#include <utility>

namespace pase {
namespace {

// The union of intervals, sorted and merged.
std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<double, double>> out;
  for (const auto& span : spans) {
    if (span.second <= span.first) continue;
    if (!out.empty() && span.first <= out.back().second) out.back().second = std::max(out.back().second, span.second);
    else out.push_back(span);
  }
  return out;
}

double length(const std::vector<std::pair<double, double>>& spans) {
  double total = 0;
  for (const auto& [from, to] : spans) total += to - from;
  return total;
}

// Each stage's compute, communication-only and idle time over the step.
void account_stages(const TaskGraph& graph, int stages, SimulatedStep& out) {
  std::vector<std::vector<std::pair<double, double>>> compute(static_cast<size_t>(stages)), all(static_cast<size_t>(stages));
  for (size_t i = 0; i < graph.size(); ++i) {
    const SimTask& task = graph.tasks()[i];
    const std::pair<double, double> span{out.start[i], out.end[i]};
    if (task.stream == StreamKind::Compute) compute[static_cast<size_t>(task.stage)].push_back(span);
    all[static_cast<size_t>(task.stage)].push_back(span);
  }
  out.stages.assign(static_cast<size_t>(stages), StageTime{});
  for (size_t k = 0; k < out.stages.size(); ++k) {
    const double busy_compute = length(merged(compute[k])), busy = length(merged(all[k]));
    out.stages[k] = {busy_compute, busy - busy_compute, out.step - busy};
  }
}

void critical_path(SimulatedStep& out) {
  out.critical_path.clear();
  if (out.end.empty()) return;
  int at = static_cast<int>(std::max_element(out.end.begin(), out.end.end()) - out.end.begin());
  for (; at >= 0; at = out.waited_for[static_cast<size_t>(at)]) out.critical_path.push_back(at);
  std::reverse(out.critical_path.begin(), out.critical_path.end());
}

}  // namespace

SimulatedStep simulate_step(const TaskGraph& graph, int stages) {
  SimulatedStep out;
  resimulate_from(graph, stages, 0, out);
  return out;
}

void resimulate_from(const TaskGraph& graph, int stages, size_t first, SimulatedStep& out) {
  retime_from(graph, first, out);
  account_stages(graph, stages, out);
  critical_path(out);
}

void retime_from(const TaskGraph& graph, size_t first, SimulatedStep& out) {
  const size_t n = graph.size();
  out.start.resize(n);
  out.end.resize(n);
  out.waited_for.resize(n);
  out.latest_end.resize(n);
  out.stream_free.resize(n);
  for (size_t i = first; i < n; ++i) {
    const SimTask& task = graph.tasks()[i];
    const int previous = graph.previous_on_stream(i);
    const double free = previous >= 0 ? out.stream_free[static_cast<size_t>(previous)] : 0.0;
    // A transfer that moves nothing neither waits for its link nor holds it
    // (a search's moves zero some); the compute stream keeps its order.
    const bool holds = task.duration > 0 || task.stream == StreamKind::Compute;
    int decided = holds ? previous : -1;
    double start = holds ? free : 0.0;
    for (int before : task.after)
      if (out.end[static_cast<size_t>(before)] > start) start = out.end[static_cast<size_t>(before)], decided = before;
    out.start[i] = start;
    out.end[i] = start + task.duration;
    out.stream_free[i] = holds ? out.end[i] : free;
    out.waited_for[i] = decided;
    out.latest_end[i] = std::max(i > 0 ? out.latest_end[i - 1] : 0.0, out.end[i]);
  }
  out.step = n ? out.latest_end[n - 1] : 0.0;
}

namespace {

// Every per-task array retime_from writes, of `a` and of `b` alike.
template <typename Step, typename Other, typename Each>
void each_time_array(Step& a, Other& b, Each each) {
  each(a.start, b.start);
  each(a.end, b.end);
  each(a.waited_for, b.waited_for);
  each(a.latest_end, b.latest_end);
  each(a.stream_free, b.stream_free);
}

}  // namespace

void save_times_from(const SimulatedStep& simulated, size_t first, SimulatedStep& tail) {
  each_time_array(simulated, tail, [first](const auto& from, auto& into) {
    into.assign(from.begin() + static_cast<std::ptrdiff_t>(first), from.end());
  });
}

void restore_times_from(const SimulatedStep& tail, size_t first, double step, SimulatedStep& simulated) {
  each_time_array(tail, simulated, [first](const auto& from, auto& into) {
    std::copy(from.begin(), from.end(), into.begin() + static_cast<std::ptrdiff_t>(first));
  });
  simulated.step = step;
}

}  // namespace pase
