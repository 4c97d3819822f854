#include "simulate/step_tasks.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace pase {
namespace {

// One pass of one micro-batch through a stage.
struct Pass {
  int64_t micro_batch = 0;
  bool forward = true;
};

// The order a stage runs its passes in.
std::vector<Pass> stage_order(int stage, int stages, int64_t micro_batches, SimSchedule schedule) {
  std::vector<Pass> order;
  const int64_t warmup =
      schedule == SimSchedule::GPipe ? micro_batches : std::min<int64_t>(stages - stage - 1, micro_batches);
  for (int64_t m = 0; m < warmup; ++m) order.push_back({m, true});
  for (int64_t m = warmup; m < micro_batches; ++m) {
    order.push_back({m, true});
    order.push_back({m - warmup, false});
  }
  for (int64_t m = micro_batches - warmup; m < micro_batches; ++m) order.push_back({m, false});
  return order;
}

class StepBuilder {
 public:
  explicit StepBuilder(const StepModel& model) : model_(model), s_(static_cast<int>(model.stages.size())) {
    const size_t m = static_cast<size_t>(model.micro_batches);
    sent_forward_.assign(static_cast<size_t>(s_), std::vector<int>(m, -1));
    sent_backward_ = sent_forward_;
    last_backward_.resize(static_cast<size_t>(s_));
    for (int k = 0; k < s_; ++k) {
      orders_.push_back(stage_order(k, s_, model.micro_batches, model.schedule));
      last_backward_[static_cast<size_t>(k)].assign(model.stages[static_cast<size_t>(k)].layers.size(), -1);
    }
    last_forward_.assign(static_cast<size_t>(s_), std::vector<int>(m, -1));
  }

  TaskGraph build() {
    // Each stage's next pass, once what it waits for from another stage is
    // added: the tasks come out in an order every dependency respects.
    std::vector<size_t> next(static_cast<size_t>(s_), 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (int k = 0; k < s_; ++k)
        while (next[static_cast<size_t>(k)] < orders_[static_cast<size_t>(k)].size() &&
               add_pass(k, orders_[static_cast<size_t>(k)][next[static_cast<size_t>(k)]])) {
          ++next[static_cast<size_t>(k)];
          progress = true;
        }
    }
    for (int k = 0; k < s_; ++k) add_step_work(k);
    return std::move(graph_);
  }

 private:
  // Adds one pass's tasks; false when what it waits for is not added yet.
  bool add_pass(int k, const Pass& pass) {
    const SimStage& stage = model_.stages[static_cast<size_t>(k)];
    const size_t m = static_cast<size_t>(pass.micro_batch);
    int input = -1;  // the task this pass waits for from outside the stage
    if (pass.forward && k > 0) input = sent_forward_[static_cast<size_t>(k - 1)][m];
    if (!pass.forward) input = k + 1 < s_ ? sent_backward_[static_cast<size_t>(k + 1)][m] : last_forward_[static_cast<size_t>(k)][m];
    if ((pass.forward && k > 0 && input < 0) || (!pass.forward && input < 0)) return false;
    const int layers = static_cast<int>(stage.layers.size());
    int last = input;
    for (int i = 0; i < layers; ++i) {
      const int l = pass.forward ? i : layers - 1 - i;
      const SimLayer& layer = stage.layers[static_cast<size_t>(l)];
      SimTask task{pass.forward ? TaskKind::Forward : TaskKind::Backward, k, StreamKind::Compute, l, pass.micro_batch,
                   pass.forward ? layer.forward : layer.backward, {}};
      if (i == 0 && last >= 0) task.after.push_back(last);
      last = graph_.add(std::move(task));
      if (!pass.forward) last_backward_[static_cast<size_t>(k)][static_cast<size_t>(l)] = last;
    }
    if (pass.forward) {
      last_forward_[static_cast<size_t>(k)][m] = last;
      if (k + 1 < s_)
        sent_forward_[static_cast<size_t>(k)][m] =
            graph_.add({TaskKind::Send, k, StreamKind::Send, -1, pass.micro_batch, stage.send_forward, {last}});
    } else if (k > 0) {
      sent_backward_[static_cast<size_t>(k)][m] =
          graph_.add({TaskKind::Send, k, StreamKind::Send, -1, pass.micro_batch, stage.send_backward, {last}});
    }
    return true;
  }

  // Each layer's gradient collectives after its last backward (on their own
  // stream, or after the backward pass with overlap off), then the update.
  void add_step_work(int k) {
    const SimStage& stage = model_.stages[static_cast<size_t>(k)];
    std::vector<int> synced;
    const StreamKind stream = model_.overlap ? StreamKind::Gradient : StreamKind::Compute;
    for (int l = static_cast<int>(stage.layers.size()) - 1; l >= 0; --l) {
      const SimLayer& layer = stage.layers[static_cast<size_t>(l)];
      if (layer.step_communication <= 0 && !model_.every_step_task) continue;
      synced.push_back(graph_.add({TaskKind::GradientSync, k, stream, l, -1, layer.step_communication,
                                   {last_backward_[static_cast<size_t>(k)][static_cast<size_t>(l)]}}));
    }
    for (size_t l = 0; l < stage.layers.size(); ++l) {
      if (stage.layers[l].step_compute <= 0 && !model_.every_step_task) continue;
      SimTask update{TaskKind::Update, k, StreamKind::Compute, static_cast<int>(l), -1, stage.layers[l].step_compute, synced};
      synced.clear();  // the first update waits for every gradient; the rest follow it on the stream
      graph_.add(std::move(update));
    }
  }

  const StepModel& model_;
  const int s_;
  TaskGraph graph_;
  std::vector<std::vector<Pass>> orders_;
  std::vector<std::vector<int>> sent_forward_, sent_backward_, last_forward_;  // [stage][micro-batch]
  std::vector<std::vector<int>> last_backward_;                                // [stage][layer]
};

}  // namespace

TaskGraph step_tasks(const StepModel& model) {
  if (model.stages.empty()) throw std::invalid_argument("step_tasks: no stage");
  if (model.micro_batches < 1) throw std::invalid_argument("step_tasks: fewer than one micro-batch");
  for (const SimStage& stage : model.stages)
    if (stage.layers.empty()) throw std::invalid_argument("step_tasks: a stage without layers");
  return StepBuilder(model).build();
}

}  // namespace pase
