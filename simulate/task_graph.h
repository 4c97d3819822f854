#pragma once
// The task graph of one step (FlexFlow's execution simulator, docs/simulate.md):
// every task runs on one stream of one stage's devices, in the order it was
// added to that stream, once the tasks it depends on have ended. Tasks are
// added in a topological order (each depends only on tasks added before it),
// so one pass over them simulates the step.
#include <cstdint>
#include <string>
#include <vector>

namespace pase {

enum class TaskKind { Forward, Backward, Send, GradientSync, Update, Gather, Scatter };
/// A stage's streams: its kernels; its point-to-point sends to the
/// neighbouring stages (their own NCCL stream in Megatron-LM); its
/// collectives (gradient syncs, weight gathers, reduce-scatters) on one
/// queue per class of link they cross, as FlexFlow queues each connection's
/// transfers: inside a node (NVLink) or between nodes (the network).
enum class StreamKind { Compute, Send, IntraNode, InterNode };
inline constexpr int kStreamKinds = 4;

[[nodiscard]] const char* task_kind_name(TaskKind kind);
[[nodiscard]] const char* stream_name(StreamKind stream);

struct SimTask {
  TaskKind kind = TaskKind::Forward;
  int stage = 0;
  StreamKind stream = StreamKind::Compute;
  int layer = -1;         ///< the stage's layer, -1 for none
  int64_t micro_batch = -1;  ///< -1 for once-per-step work
  double duration = 0;
  std::vector<int> after;  ///< tasks it waits for (added before it)
  bool before_backward = false;  ///< a gather: before the layer's backward (else its forward)
};

class TaskGraph {
 public:
  /// Adds a task; its index. std::logic_error when it waits for a task not yet added.
  int add(SimTask task);
  [[nodiscard]] const std::vector<SimTask>& tasks() const { return tasks_; }
  [[nodiscard]] size_t size() const { return tasks_.size(); }
  /// The task before `task` on its stream (its stage's, its kind), -1 for none.
  [[nodiscard]] int previous_on_stream(size_t task) const { return previous_on_stream_[task]; }
  /// Sets a task's duration (a strategy's move: the graph's shape stays).
  void set_duration(size_t task, double duration) { tasks_[task].duration = duration; }

 private:
  std::vector<SimTask> tasks_;
  std::vector<int> previous_on_stream_;
  std::vector<int> last_on_stream_;  // per stage and stream kind, the last task added
};

}  // namespace pase
