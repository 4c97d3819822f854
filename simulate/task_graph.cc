#include "simulate/task_graph.h"

#include <stdexcept>
#include <string>

namespace pase {

const char* task_kind_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::Forward: return "forward";
    case TaskKind::Backward: return "backward";
    case TaskKind::Send: return "send";
    case TaskKind::GradientSync: return "gradient sync";
    case TaskKind::Update: return "optimizer update";
    case TaskKind::Gather: return "weight gather";
    case TaskKind::Scatter: return "gradient reduce-scatter";
  }
  return "task";
}

const char* stream_name(StreamKind stream) {
  switch (stream) {
    case StreamKind::Compute: return "compute";
    case StreamKind::Send: return "sends";
    case StreamKind::IntraNode: return "intra-node collectives";
    case StreamKind::InterNode: return "inter-node collectives";
  }
  return "stream";
}

int TaskGraph::add(SimTask task) {
  const int index = static_cast<int>(tasks_.size());
  for (int before : task.after)
    if (before < 0 || before >= index)
      throw std::logic_error("TaskGraph::add: task " + std::to_string(index) + " waits for task " +
                             std::to_string(before) + ", not added before it");
  if (task.stage < 0) throw std::logic_error("TaskGraph::add: task " + std::to_string(index) + " on no stage");
  const size_t stream = static_cast<size_t>(task.stage) * kStreamKinds + static_cast<size_t>(task.stream);
  if (stream >= last_on_stream_.size()) last_on_stream_.resize(stream + 1, -1);
  previous_on_stream_.push_back(last_on_stream_[stream]);
  last_on_stream_[stream] = index;
  tasks_.push_back(std::move(task));
  return index;
}

}  // namespace pase
