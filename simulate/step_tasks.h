#pragma once
// The task graph of a StepModel (docs/simulate.md, "The task graph"): per
// stage and micro-batch a forward task per layer in order and a backward
// task per layer in reverse, in the order the schedule runs them (1F1B:
// S - k - 1 forwards, then one forward and one backward in turn, then the
// backwards left; GPipe: every forward, then every backward; interleaved,
// Megatron-LM's: per chunk, the micro-batches in groups of S through chunk
// 0, 1, ..., 2 (S - k - 1) + (V - 1) S forwards first); a send per
// micro-batch and direction between chunks of neighbouring stages; after
// each layer's last backward its gradient collectives (in buckets of
// StepModel::bucket_words), and after all of a stage's its optimizer
// update. ZeRO-3's weight gathers are issued once the pass's layer two
// before has run (FSDP's prefetch), its layer's pass after them; ZeRO-2/3's
// gradient reduce-scatters after each backward. Sends queue on the stage's
// send stream, collectives on the stream of the links they cross (inside a
// node or between nodes), each in the order issued.
#include "simulate/step_model.h"
#include "simulate/task_graph.h"

namespace pase {

/// The tasks of one step. std::invalid_argument when the model has no stage,
/// a stage no layer, fewer than one micro-batch, or (interleaved) one
/// stage, stages of unequal or empty chunks, micro-batches not a multiple
/// of the stages.
[[nodiscard]] TaskGraph step_tasks(const StepModel& model);

/// What `task` of `layer` takes as step_tasks builds it (a send: its own
/// duration; a gradient sync: the layer's, as without buckets): for a
/// search that changes a layer's work and re-times its tasks.
[[nodiscard]] double task_duration(const StepModel& model, const SimTask& task, const SimLayer& layer);

}  // namespace pase
