#include "simulate/step_tasks.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace pase {
namespace {

// One pass of one micro-batch through one of a stage's chunks (0: the stage).
struct Pass {
  int64_t micro_batch = 0;
  bool forward = true;
  int chunk = 0;
};

// The forward (or backward) passes a stage runs, in order. Interleaved
// (Megatron-LM's): the micro-batches in groups of S (M a multiple of S),
// each group through the stage's chunk 0, 1, ..., V - 1 (backward: V - 1 first).
std::vector<Pass> passes(int stages, int64_t micro_batches, int chunks, bool forward) {
  std::vector<Pass> out;
  for (int64_t group = 0; group < micro_batches; group += stages)
    for (int v = 0; v < chunks; ++v)
      for (int64_t j = 0; j < stages; ++j) out.push_back({group + j, forward, forward ? v : chunks - 1 - v});
  return out;
}

// The order a stage runs its passes in: `warmup` forwards, then one forward
// and one backward in turn, then the backwards left.
std::vector<Pass> stage_order(int stage, int stages, int64_t micro_batches, SimSchedule schedule, int chunks) {
  const int used = schedule == SimSchedule::Interleaved ? chunks : 1;
  const std::vector<Pass> forwards = schedule == SimSchedule::Interleaved ? passes(stages, micro_batches, used, true)
                                                                           : passes(1, micro_batches, 1, true);
  const std::vector<Pass> backwards = schedule == SimSchedule::Interleaved ? passes(stages, micro_batches, used, false)
                                                                            : passes(1, micro_batches, 1, false);
  const int64_t total = static_cast<int64_t>(forwards.size());
  int64_t warmup = std::min<int64_t>(stages - stage - 1, total);  // 1F1B
  if (schedule == SimSchedule::GPipe) warmup = total;
  if (schedule == SimSchedule::Interleaved) warmup = std::min<int64_t>(total, 2 * (stages - stage - 1) + (used - 1) * stages);
  std::vector<Pass> order;
  for (int64_t i = 0; i < warmup; ++i) order.push_back(forwards[static_cast<size_t>(i)]);
  for (int64_t i = warmup; i < total; ++i) {
    order.push_back(forwards[static_cast<size_t>(i)]);
    order.push_back(backwards[static_cast<size_t>(i - warmup)]);
  }
  for (int64_t i = total - warmup; i < total; ++i) order.push_back(backwards[static_cast<size_t>(i)]);
  return order;
}

// A stage's chunk as the builder reads it: its layers and sends.
struct ChunkView {
  size_t begin = 0, end = 0;
  double send_forward = 0, send_backward = 0;
};

ChunkView chunk_of(const SimStage& stage, int v) {
  if (stage.chunks.empty()) return {0, stage.layers.size(), stage.send_forward, stage.send_backward};
  const SimChunk& chunk = stage.chunks[static_cast<size_t>(v)];
  const size_t end = static_cast<size_t>(v) + 1 < stage.chunks.size() ? stage.chunks[static_cast<size_t>(v) + 1].first_layer
                                                                       : stage.layers.size();
  return {chunk.first_layer, end, chunk.send_forward, chunk.send_backward};
}

class StepBuilder {
 public:
  explicit StepBuilder(const StepModel& model)
      : model_(model), s_(static_cast<int>(model.stages.size())),
        v_(model.schedule == SimSchedule::Interleaved ? static_cast<int>(model.stages[0].chunks.size()) : 1) {
    const size_t m = static_cast<size_t>(model.micro_batches);
    const size_t chunks = static_cast<size_t>(s_) * static_cast<size_t>(v_);
    sent_forward_.assign(chunks, std::vector<int>(m, -1));
    sent_backward_ = sent_forward_;
    last_forward_ = sent_forward_;
    last_backward_.resize(static_cast<size_t>(s_));
    for (int k = 0; k < s_; ++k) {
      orders_.push_back(stage_order(k, s_, model.micro_batches, model.schedule, v_));
      last_backward_[static_cast<size_t>(k)].assign(model.stages[static_cast<size_t>(k)].layers.size(), -1);
    }
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
    for (int k = 0; k < s_; ++k)
      if (next[static_cast<size_t>(k)] < orders_[static_cast<size_t>(k)].size())
        throw std::logic_error("step_tasks: stage " + std::to_string(k) + " waits forever (the schedule's order deadlocks)");
    for (int k = 0; k < s_; ++k) add_step_work(k);
    return std::move(graph_);
  }

 private:
  // Adds one pass's tasks; false when what it waits for is not added yet.
  // The model's chunk c = v S + k hands on to chunk c + 1 (the next stage's, round and round).
  bool add_pass(int k, const Pass& pass) {
    const SimStage& stage = model_.stages[static_cast<size_t>(k)];
    const size_t m = static_cast<size_t>(pass.micro_batch);
    const size_t c = static_cast<size_t>(pass.chunk) * static_cast<size_t>(s_) + static_cast<size_t>(k);
    const size_t chunks = sent_forward_.size();
    int input = -1;  // the task this pass waits for from outside the chunk
    if (pass.forward && c > 0) input = sent_forward_[c - 1][m];
    if (!pass.forward) input = c + 1 < chunks ? sent_backward_[c + 1][m] : last_forward_[c][m];
    if ((pass.forward && c > 0 && input < 0) || (!pass.forward && input < 0)) return false;
    const ChunkView chunk = chunk_of(stage, pass.chunk);
    const size_t layers = chunk.end - chunk.begin;
    int last = input;
    for (size_t i = 0; i < layers; ++i) {
      const size_t l = pass.forward ? chunk.begin + i : chunk.end - 1 - i;
      const SimLayer& layer = stage.layers[l];
      SimTask task{pass.forward ? TaskKind::Forward : TaskKind::Backward, k, StreamKind::Compute, static_cast<int>(l),
                   pass.micro_batch, pass.forward ? layer.forward : layer.backward, {}};
      if (i == 0 && last >= 0) task.after.push_back(last);
      last = graph_.add(std::move(task));
      if (!pass.forward) last_backward_[static_cast<size_t>(k)][l] = last;
    }
    if (pass.forward) {
      last_forward_[c][m] = last;
      if (c + 1 < chunks)
        sent_forward_[c][m] = graph_.add({TaskKind::Send, k, StreamKind::Send, -1, pass.micro_batch, chunk.send_forward, {last}});
    } else if (c > 0) {
      sent_backward_[c][m] = graph_.add({TaskKind::Send, k, StreamKind::Send, -1, pass.micro_batch, chunk.send_backward, {last}});
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
  const int s_, v_;
  TaskGraph graph_;
  std::vector<std::vector<Pass>> orders_;
  std::vector<std::vector<int>> sent_forward_, sent_backward_, last_forward_;  // [model chunk][micro-batch]
  std::vector<std::vector<int>> last_backward_;                                // [stage][layer]
};

// Interleaved: every stage V >= 2 chunks, each of some layers, starting at the first; else none.
void check_chunks(const StepModel& model) {
  const bool interleaved = model.schedule == SimSchedule::Interleaved;
  if (interleaved && model.stages.size() < 2) throw std::invalid_argument("step_tasks: interleaved on one stage");
  if (interleaved && model.micro_batches % static_cast<int64_t>(model.stages.size()) != 0)
    throw std::invalid_argument("step_tasks: interleaved micro-batches not a multiple of the stages");
  const size_t v = model.stages[0].chunks.size();
  for (const SimStage& stage : model.stages) {
    if (!interleaved) {
      if (!stage.chunks.empty()) throw std::invalid_argument("step_tasks: chunks without the interleaved schedule");
      continue;
    }
    if (stage.chunks.size() != v || v < 2) throw std::invalid_argument("step_tasks: stages of other than V >= 2 chunks");
    for (size_t c = 0; c < v; ++c) {
      const size_t end = c + 1 < v ? stage.chunks[c + 1].first_layer : stage.layers.size();
      if ((c == 0 && stage.chunks[c].first_layer != 0) || stage.chunks[c].first_layer >= end)
        throw std::invalid_argument("step_tasks: a chunk without layers");
    }
  }
}

}  // namespace

TaskGraph step_tasks(const StepModel& model) {
  if (model.stages.empty()) throw std::invalid_argument("step_tasks: no stage");
  if (model.micro_batches < 1) throw std::invalid_argument("step_tasks: fewer than one micro-batch");
  for (const SimStage& stage : model.stages)
    if (stage.layers.empty()) throw std::invalid_argument("step_tasks: a stage without layers");
  check_chunks(model);
  return StepBuilder(model).build();
}

}  // namespace pase
