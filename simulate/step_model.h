#pragma once
// One training step as the simulator takes it (docs/simulate.md): per stage,
// each layer's work per micro-batch (forward and backward, its compute and
// the collectives on its critical path), its once-per-step work (weight-
// gradient collectives, the optimizer's update), the sends between stages,
// the schedule. Every duration in the cost model's unit; nothing here knows
// how it was priced.
#include <cstdint>
#include <string>
#include <vector>

namespace pase {

/// One layer of a stage, per micro-batch unless said.
struct SimLayer {
  std::string name;
  double forward = 0;          ///< its forward work: compute, its edges in, the collectives forward waits for
  double backward = 0;         ///< its backward work (a recomputing layer's forward again included)
  double step_communication = 0;  ///< once per step, after its last backward: weight-gradient collectives
  double step_compute = 0;        ///< once per step, after every gradient: the optimizer's update of its weights
  /// ZeRO-3: the gather of its sharded weight before its forward and before
  /// its backward, per micro-batch, on a collectives stream (FSDP's
  /// prefetch); not in forward and backward.
  double gather_forward = 0, gather_backward = 0;
  /// ZeRO-2/3: its gradient's reduce-scatter after its backward, per
  /// micro-batch, on a collectives stream; not in backward.
  double scatter = 0;
  double step_words = 0;  ///< elements its once-per-step collectives move (for buckets)
  /// Some configuration of the layer gathers or scatters (ZeRO-2/3): with
  /// StepModel::every_step_task its gathers and scatters are tasks even of no work.
  bool sharded = false;
};

/// One of an interleaved stage's chunks (the schedule's model chunk): its
/// layers from `first_layer` to the next chunk's, and its sends per micro-batch.
struct SimChunk {
  size_t first_layer = 0;
  double send_forward = 0;   ///< its output to the next chunk's stage
  double send_backward = 0;  ///< its input's gradient to the chunk before's stage
};

/// A stage: its layers in the graph's order, on devices [first_device, first_device + devices).
struct SimStage {
  int64_t first_device = 0, devices = 1;
  std::vector<SimLayer> layers;
  double send_forward = 0;   ///< its output to the next stage, per micro-batch (its gradient back: send_backward)
  double send_backward = 0;  ///< its input's gradient to the stage before, per micro-batch
  /// Its devices span nodes: its gradient collectives, gathers and
  /// reduce-scatters cross the network (their data-parallel groups are the
  /// outer axis); else they stay inside its node.
  bool across_nodes = false;
  /// Interleaved: its V chunks in order (chunk v of stage k is the model's
  /// chunk v S + k); their sends stand for the two above. Else empty.
  std::vector<SimChunk> chunks;
};

/// 1F1B, GPipe, or Megatron-LM's interleaved 1F1B over each stage's chunks.
enum class SimSchedule { OneFOneB, GPipe, Interleaved };

struct StepModel {
  std::vector<SimStage> stages;  ///< one for a plan without pipeline stages
  int64_t micro_batches = 1;
  SimSchedule schedule = SimSchedule::OneFOneB;
  /// Whether the once-per-step collectives run on their own stream beside the
  /// backward pass (as DDP and FSDP run them); false: on the compute stream,
  /// after the last backward, as the additive model sums them.
  bool overlap = true;
  /// A gradient-sync and an update task for every layer, and a gather and a
  /// scatter task for every sharded one, those of no work too (they take no
  /// time): a search's moves then change durations only, never the task
  /// graph's shape. False: only tasks with work.
  bool every_step_task = false;
  /// The once-per-step gradient syncs coalesced, in backward order, into
  /// buckets of at least this many elements (PyTorch DDP's bucket_cap), each
  /// after its layers' last backward; 0: one per layer.
  double bucket_words = 0;
  std::string unit = "seconds";
};

}  // namespace pase
