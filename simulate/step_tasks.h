#pragma once
// The task graph of a StepModel (docs/simulate.md, "The task graph"): per
// stage and micro-batch a forward task per layer in order and a backward
// task per layer in reverse, in the order the schedule runs them (1F1B:
// S - k - 1 forwards, then one forward and one backward in turn, then the
// backwards left; GPipe: every forward, then every backward); a send per
// micro-batch and direction between neighbouring stages; after each layer's
// last backward its gradient collectives, and after all of a stage's its
// optimizer update.
#include "simulate/step_model.h"
#include "simulate/task_graph.h"

namespace pase {

/// The tasks of one step. std::invalid_argument when the model has no stage,
/// a stage no layer, or fewer than one micro-batch.
[[nodiscard]] TaskGraph step_tasks(const StepModel& model);

}  // namespace pase
