#pragma once
// The simulated step (FlexFlow's full simulation, docs/simulate.md): every
// task starts when its stream has finished the task before it and the tasks
// it waits for have ended (a transfer of nothing waits only for those). With the tasks in a topological order that is one
// pass; a change to the task at index i moves only tasks from i on
// (resimulate_from, FlexFlow's delta simulation).
#include <cstddef>
#include <vector>

#include "simulate/task_graph.h"

namespace pase {

/// Per stage: how its devices spend the step.
struct StageTime {
  double compute = 0;             ///< the compute stream busy
  double communication_only = 0;  ///< a send or gradient stream busy while compute is not
  double idle = 0;                ///< nothing running: the step less the two above
};

struct SimulatedStep {
  std::vector<double> start, end;  ///< per task
  std::vector<int> waited_for;     ///< per task: what decided its start (a task, or -1: the step's start)
  std::vector<double> latest_end;  ///< per task: the latest end of it and every task before it
  std::vector<double> stream_free; ///< per task: when its stream is free after it
  double step = 0;                 ///< the last task's end
  std::vector<StageTime> stages;
  /// The critical path, first task to last: each task's start decided by the one before.
  std::vector<int> critical_path;
};

/// Simulates `graph` on `stages` stages.
[[nodiscard]] SimulatedStep simulate_step(const TaskGraph& graph, int stages);

/// Simulates again after the tasks from `first` on changed (their durations
/// or what they wait for): the tasks before `first` keep their times. Equal
/// to simulate_step of the changed graph (tested).
void resimulate_from(const TaskGraph& graph, int stages, size_t first, SimulatedStep& simulated);

/// resimulate_from's times only (start, end, waited_for, latest_end, stream_free, step),
/// not each stage's time nor the critical path: what a search asks of each
/// move. Touches only the tasks from `first` on.
void retime_from(const TaskGraph& graph, size_t first, SimulatedStep& simulated);

/// The times retime_from writes, of the tasks from `first` on, copied into
/// `tail` (a search keeps them to undo a move) ...
void save_times_from(const SimulatedStep& simulated, size_t first, SimulatedStep& tail);
/// ... and put back, with the step `tail` was saved at.
void restore_times_from(const SimulatedStep& tail, size_t first, double step, SimulatedStep& simulated);

}  // namespace pase
