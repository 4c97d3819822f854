#pragma once
// The task graph of a StepModel (docs/simulate.md, "The task graph"): per
// stage and micro-batch a forward task per layer in order and a backward
// task per layer in reverse, in the order the schedule runs them (1F1B:
// S - k - 1 forwards, then one forward and one backward in turn, then the
// backwards left; GPipe: every forward, then every backward; interleaved,
// Megatron-LM's: per chunk, the micro-batches in groups of S through chunk
// 0, 1, ..., 2 (S - k - 1) + (V - 1) S forwards first); a send per
// micro-batch and direction between chunks of neighbouring stages; after each layer's
// last backward its gradient collectives, and after all of a stage's its
// optimizer update. ZeRO-3's weight gathers run on the stage's gathers
// stream, each after the pass's layer two before (FSDP's prefetch), its
// layer's pass after it; ZeRO-2/3's gradient reduce-scatters on the
// gradients stream after each backward; the gradient syncs in buckets of
// StepModel::bucket_words.
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
