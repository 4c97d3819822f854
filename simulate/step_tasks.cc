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

// The stream of collectives over one class of link.
StreamKind link(bool across_nodes) { return across_nodes ? StreamKind::InterNode : StreamKind::IntraNode; }

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
    scattered_.resize(static_cast<size_t>(s_));
    synced_.resize(static_cast<size_t>(s_));
    open_.resize(static_cast<size_t>(s_));
    for (const SimStage& stage : model.stages) backwards_done_.emplace_back(stage.layers.size(), 0);
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
    const auto layer_at = [&](size_t i) { return pass.forward ? chunk.begin + i : chunk.end - 1 - i; };
    // FSDP's prefetch: the gather of the layer two on is issued once a layer
    // has run (two gathered at most); the pass's first two once it may begin.
    std::vector<int> gathers(layers, -1);
    for (size_t i = 0; i < std::min<size_t>(2, layers); ++i) gathers[i] = add_gather(k, layer_at(i), pass, input);
    int last = input;
    for (size_t i = 0; i < layers; ++i) {
      const size_t l = layer_at(i);
      const SimLayer& layer = stage.layers[l];
      SimTask task{pass.forward ? TaskKind::Forward : TaskKind::Backward, k, StreamKind::Compute, static_cast<int>(l),
                   pass.micro_batch, 0, {}};
      task.duration = task_duration(model_, task, layer);
      if (i == 0 && last >= 0) task.after.push_back(last);
      if (gathers[i] >= 0) task.after.push_back(gathers[i]);
      last = graph_.add(std::move(task));
      if (i + 2 < layers) gathers[i + 2] = add_gather(k, layer_at(i + 2), pass, last);
      if (!pass.forward) {
        last_backward_[static_cast<size_t>(k)][l] = last;
        add_scatter(k, l, pass, last);
        // Its gradient is complete after its last micro-batch: its collectives go (DDP's hook).
        if (++backwards_done_[static_cast<size_t>(k)][l] == model_.micro_batches && model_.overlap)
          add_sync(k, static_cast<int>(l));
      }
    }
    if (pass.forward) {
      last_forward_[c][m] = last;
      if (c + 1 < chunks)
        sent_forward_[c][m] =
            graph_.add({TaskKind::Send, k, StreamKind::Send, -1, pass.micro_batch, chunk.send_forward, {last}});
    } else if (c > 0) {
      sent_backward_[c][m] =
          graph_.add({TaskKind::Send, k, StreamKind::Send, -1, pass.micro_batch, chunk.send_backward, {last}});
    }
    return true;
  }

  // Whether a layer's `amount` of ZeRO work is a task of its own: with
  // overlap, when it is work (or, every task kept, the layer is sharded).
  [[nodiscard]] bool own_task(double amount, const SimLayer& layer) const {
    return model_.overlap && (amount > 0 || (model_.every_step_task && layer.sharded));
  }

  // ZeRO-3's gather of layer l's weight for this pass, on the stage's collectives stream, after `trigger`; -1: none.
  int add_gather(int k, size_t l, const Pass& pass, int trigger) {
    const SimLayer& layer = model_.stages[static_cast<size_t>(k)].layers[l];
    if (!own_task(pass.forward ? layer.gather_forward : layer.gather_backward, layer)) return -1;
    SimTask gather{TaskKind::Gather, k, link(model_.stages[static_cast<size_t>(k)].across_nodes), static_cast<int>(l),
                   pass.micro_batch, 0, {}};
    if (trigger >= 0) gather.after.push_back(trigger);
    gather.before_backward = !pass.forward;
    gather.duration = task_duration(model_, gather, layer);
    return graph_.add(std::move(gather));
  }

  // ZeRO-2/3's reduce-scatter of layer l's gradient after its backward `task`, on the stage's collectives stream.
  void add_scatter(int k, size_t l, const Pass& pass, int task) {
    const SimLayer& layer = model_.stages[static_cast<size_t>(k)].layers[l];
    if (!own_task(layer.scatter, layer)) return;
    scattered_[static_cast<size_t>(k)].push_back(
        graph_.add({TaskKind::Scatter, k, link(model_.stages[static_cast<size_t>(k)].across_nodes), static_cast<int>(l),
                    pass.micro_batch, layer.scatter, {task}}));
  }

  // Layer l's once-per-step gradient collectives, into its stage's open
  // bucket; the bucket is sent once it holds bucket_words (0: every layer's).
  void add_sync(int k, int l) {
    const SimLayer& layer = model_.stages[static_cast<size_t>(k)].layers[static_cast<size_t>(l)];
    if (layer.step_communication <= 0 && !model_.every_step_task) return;
    Bucket& bucket = open_[static_cast<size_t>(k)];
    if (bucket.first < 0) bucket.first = l;
    bucket.words += layer.step_words;
    bucket.seconds += layer.step_communication;
    bucket.waits = last_backward_[static_cast<size_t>(k)][static_cast<size_t>(l)];
    if (bucket.words >= model_.bucket_words) flush_bucket(k);
  }

  // The open bucket's collective: on the stage's collectives stream beside the
  // backward pass, or with overlap off on the compute stream after it.
  void flush_bucket(int k) {
    Bucket& bucket = open_[static_cast<size_t>(k)];
    if (bucket.first < 0) return;
    const StreamKind stream = model_.overlap ? link(model_.stages[static_cast<size_t>(k)].across_nodes) : StreamKind::Compute;
    synced_[static_cast<size_t>(k)].push_back(
        graph_.add({TaskKind::GradientSync, k, stream, bucket.first, -1, bucket.seconds, {bucket.waits}}));
    bucket = Bucket{};
  }

  // With overlap off, the gradient collectives after the backward pass; the
  // last bucket; then the optimizer update, once every gradient is in.
  void add_step_work(int k) {
    const SimStage& stage = model_.stages[static_cast<size_t>(k)];
    if (!model_.overlap)
      for (int l = static_cast<int>(stage.layers.size()) - 1; l >= 0; --l) add_sync(k, l);
    flush_bucket(k);
    std::vector<int> synced = synced_[static_cast<size_t>(k)];
    synced.insert(synced.end(), scattered_[static_cast<size_t>(k)].begin(), scattered_[static_cast<size_t>(k)].end());
    for (size_t l = 0; l < stage.layers.size(); ++l) {
      if (stage.layers[l].step_compute <= 0 && !model_.every_step_task) continue;
      SimTask update{TaskKind::Update, k, StreamKind::Compute, static_cast<int>(l), -1, stage.layers[l].step_compute, synced};
      synced.clear();  // the first update waits for every gradient; the rest follow it on the stream
      graph_.add(std::move(update));
    }
  }

  struct Bucket {
    double words = 0, seconds = 0;
    int waits = -1, first = -1;  // its last layer's last backward; its first layer in backward order
  };

  const StepModel& model_;
  const int s_, v_;
  TaskGraph graph_;
  std::vector<std::vector<Pass>> orders_;
  std::vector<std::vector<int>> sent_forward_, sent_backward_, last_forward_;  // [model chunk][micro-batch]
  std::vector<std::vector<int>> last_backward_;                                // [stage][layer]
  std::vector<std::vector<int>> scattered_, synced_;                           // [stage]: its reduce-scatters, its syncs
  std::vector<std::vector<int64_t>> backwards_done_;                           // [stage][layer]
  std::vector<Bucket> open_;                                                   // [stage]
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

double task_duration(const StepModel& model, const SimTask& task, const SimLayer& layer) {
  const bool apart = model.overlap;  // ZeRO's gathers and scatters on their own streams, else inline
  switch (task.kind) {
    case TaskKind::Forward: return layer.forward + (apart ? 0.0 : layer.gather_forward);
    case TaskKind::Backward: return layer.backward + (apart ? 0.0 : layer.gather_backward + layer.scatter);
    case TaskKind::Gather: return task.before_backward ? layer.gather_backward : layer.gather_forward;
    case TaskKind::Scatter: return layer.scatter;
    case TaskKind::GradientSync: return layer.step_communication;
    case TaskKind::Update: return layer.step_compute;
    case TaskKind::Send: return task.duration;
  }
  return task.duration;
}

TaskGraph step_tasks(const StepModel& model) {
  if (model.stages.empty()) throw std::invalid_argument("step_tasks: no stage");
  if (model.micro_batches < 1) throw std::invalid_argument("step_tasks: fewer than one micro-batch");
  for (const SimStage& stage : model.stages)
    if (stage.layers.empty()) throw std::invalid_argument("step_tasks: a stage without layers");
  check_chunks(model);
  return StepBuilder(model).build();
}

}  // namespace pase
