#include "stages/interleaved_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <string>

#include <tbb/parallel_for.h>

#include "base/error.h"
#include "dp/block_table_cache.h"
#include "graphs/stage_graph.h"
#include "stages/pipeline_schedule.h"
#include "stages/stage_cuts.h"
#include "stages/stage_key.h"
#include "stages/stage_solve.h"

namespace pase {

std::vector<StageRanges> interleaved_chunks(const Graph& graph, int stages, int64_t chunks) {
  const StageKeys keys(graph);
  const BlockRun run = block_run(graph, keys);
  const int64_t parts = static_cast<int64_t>(stages) * chunks;
  if (static_cast<int64_t>(run.blocks) < parts)
    throw OptionError({"pipeline_stages", "the pipeline stages", "",
                       ": " + std::to_string(stages) + " interleaved stages of " + std::to_string(chunks) +
                           " chunks need " + std::to_string(parts) + " blocks, but the graph repeats " +
                           std::to_string(run.blocks)});
  const std::vector<int> cuts = stage_cut_vertices(graph, keys, StageCuts::Blocks);
  const std::vector<int> bounds = equal_block_bounds(graph, static_cast<int>(parts));
  std::vector<StageRanges> ranges(static_cast<size_t>(stages));
  for (int64_t c = 0; c < parts; ++c) {
    StageRanges& own = ranges[static_cast<size_t>(c % stages)];
    const int begin = cuts[static_cast<size_t>(bounds[static_cast<size_t>(c)])];
    const int end = cuts[static_cast<size_t>(bounds[static_cast<size_t>(c + 1)])];
    if (!own.empty() && own.back().second == begin) own.back().second = end;  // one stage: the chunks run on
    else own.push_back({begin, end});
  }
  return ranges;
}

namespace {

// The chunk boundaries between stages: where each lies, who sends, who receives.
struct ChunkSend {
  int from = 0, to = 0;  // stages
  double seconds = 0;    // one direction, per micro-batch
};

class InterleavedSearch {
 public:
  InterleavedSearch(const Graph& graph, const PipelineRequest& request)
      : graph_(graph),
        request_(request),
        devices_(devices_of_stages(request)),
        s_(static_cast<int>(devices_.size())),
        ranges_(request.given_chunks.empty()
                    ? interleaved_chunks(graph, s_, request.schedule.chunks)
                    : request.given_chunks),
        keys_(graph),
        pricings_(graph, request) {
    first_.assign(devices_.size(), 0);
    for (size_t k = 1; k < devices_.size(); ++k) first_[k] = first_[k - 1] + devices_[k - 1];
    link_model_ = request.make_model(weighted(request.stage.memory, 1, 0.0), request.devices);
    price_sends();
  }

  PipelineOutcome run() {
    for (int64_t n : devices_) {
      pricings_.add(n, request_.stage.memory);
      if (s_ > 1) pricings_.add(n, weighted(request_.stage.memory, 1, 0.0));  // least_cost's time bound
    }
    pricings_.price_all();
    PipelineRequest shared = request_;
    if (!shared.stage.solve.dp.block_tables) shared.stage.solve.dp.block_tables = std::make_shared<BlockTableCache>();
    std::vector<std::shared_ptr<const StageSolve>> solved(static_cast<size_t>(s_));
    tbb::parallel_for(0, s_, [&](int k) { solved[static_cast<size_t>(k)] = solve_group(k, shared); });
    PipelineOutcome outcome;
    outcome.positions = 0;
    for (const StageRanges& own : ranges_) outcome.positions += static_cast<int>(own.size());
    outcome.ranges = static_cast<size_t>(s_);
    outcome.stage_solves = solves_;
    for (const auto& solve : solved)
      if (!solve->fits) return outcome;  // some stage fits nothing: no pipeline of these chunks runs
    read_back(solved, outcome);
    return outcome;
  }

 private:
  [[nodiscard]] bool given() const { return request_.given_stages != nullptr; }
  [[nodiscard]] int64_t in_flight(int k) const {
    return micro_batches_in_flight(k, s_, request_.stage.memory.micro_batches, request_.schedule);
  }

  [[nodiscard]] bool across(int a, int b) const {
    return devices_across_nodes(first_[a], devices_[a], first_[b], devices_[b], link_model_->devices_per_node());
  }

  // Every boundary where a chunk of one stage hands on to a chunk of another.
  void price_sends() {
    std::vector<std::pair<int, int>> chunk_of;  // (begin, stage), in graph order
    for (int k = 0; k < s_; ++k)
      for (const auto& range : ranges_[static_cast<size_t>(k)]) chunk_of.push_back({range.first, k});
    std::sort(chunk_of.begin(), chunk_of.end());
    for (size_t c = 1; c < chunk_of.size(); ++c) {
      const int from = chunk_of[c - 1].second, to = chunk_of[c].second;
      if (from == to) continue;
      const double seconds = send_seconds(crossing_elements(graph_, chunk_of[c].first), devices_[from], devices_[to],
                                          across(from, to), *link_model_);
      sends_.push_back({from, to, seconds});
    }
    tied_ = priced_tied_reads(graph_, pricings_.repeated_reads(), devices_, request_.devices, *link_model_);
  }

  [[nodiscard]] double sends_of(int k) const {
    double seconds = 0;
    for (const ChunkSend& send : sends_)
      if (send.from == k || send.to == k) seconds += send.seconds;
    return seconds;
  }
  // A weight two stages read is a copy in each, its gradients all-reduced once per step.
  [[nodiscard]] double tied_work(int k) const {
    const StageRanges& own = ranges_[static_cast<size_t>(k)];
    double seconds = 0;
    for (const TiedRead& read : tied_)
      if ((index_in(own, read.reader) >= 0) != (index_in(own, read.before) >= 0)) seconds += read.seconds;
    return seconds;
  }

  // Stage k's optimum without the cap, and under it where that does not fit
  // with its micro-batches in flight; alike stages (the same chunks' blocks
  // on as many devices, as many in flight) solved once.
  std::shared_ptr<const StageSolve> solve_group(int k, const PipelineRequest& shared) {
    const StageRanges& own = ranges_[static_cast<size_t>(k)];
    const StageSite site{own, devices_[static_cast<size_t>(k)], &pricings_};
    const Graph stage = stage_graph(graph_, own);
    PipelineRequest request = shared;
    if (given()) request.stage.given = &request_.given_stages->at(static_cast<size_t>(k));
    PipelineRequest uncapped = request;
    uncapped.stage.cap.reset();
    const auto base = remember(key_of(k, 1, false), [&] { return solve_stage(stage, site, 1, s_, uncapped); });
    if (!request.stage.cap || !base->fits) return base;
    const PlanMemory& one = base->outcome.bytes;
    const uint64_t held = static_cast<uint64_t>(in_flight(k));
    if (one.activations <= (UINT64_MAX - one.weights) / held && one.weights + held * one.activations <= *request.stage.cap)
      return base;
    return remember(key_of(k, in_flight(k), true),
                    [&] { return solve_stage(stage, site, in_flight(k), s_, request, base.get()); });
  }

  using Key = std::tuple<std::vector<int64_t>, int64_t, int64_t, bool>;  // chunks, devices, in flight, under the cap
  [[nodiscard]] Key key_of(int k, int64_t held, bool under_cap) const {
    std::vector<int64_t> chunks;
    for (const auto& [begin, end] : ranges_[static_cast<size_t>(k)]) {
      const std::vector<int64_t> one = keys_.key(begin, end);
      chunks.insert(chunks.end(), one.begin(), one.end());
      chunks.push_back(-1);
    }
    if (given()) chunks.push_back(-2 - k);  // each stage its own strategy
    for (const TiedRead& read : tied_) {  // which readers of a shared weight it holds
      chunks.push_back(index_in(ranges_[static_cast<size_t>(k)], read.reader) >= 0);
      chunks.push_back(index_in(ranges_[static_cast<size_t>(k)], read.before) >= 0);
    }
    return {std::move(chunks), devices_[static_cast<size_t>(k)], held, under_cap};
  }

  template <typename Solve>
  std::shared_ptr<const StageSolve> remember(const Key& key, const Solve& solve) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (const auto found = memo_.find(key); found != memo_.end()) return found->second;
    }
    auto solved = std::make_shared<const StageSolve>(solve());
    std::lock_guard<std::mutex> lock(mutex_);
    const auto [kept, fresh] = memo_.try_emplace(key, std::move(solved));  // another thread's, if it came first
    solves_ += fresh;
    return kept->second;
  }

  void read_back(const std::vector<std::shared_ptr<const StageSolve>>& solved, PipelineOutcome& outcome) const {
    const double m = static_cast<double>(request_.stage.memory.micro_batches);
    const double v = static_cast<double>(request_.schedule.chunks);
    std::vector<double> t, w;
    for (int k = 0; k < s_; ++k) {
      const StageSolve& solve = *solved[static_cast<size_t>(k)];
      const StageRanges& own = ranges_[static_cast<size_t>(k)];
      PipelineStage stage;
      stage.begin = own.front().first;
      stage.end = own.back().second;
      stage.chunks = own;
      stage.devices = devices_[static_cast<size_t>(k)];
      stage.first_device = first_[static_cast<size_t>(k)];
      stage.in_flight = in_flight(k);
      stage.send_time = sends_of(k);
      const double tied = tied_work(k);
      stage.value = {solve.t + stage.send_time, solve.w + tied, solve.step_bound + m * stage.send_time + tied,
                     solve.time_bound + stage.send_time};
      stage.solve = solved[static_cast<size_t>(k)];
      stage.bytes = solve.outcome.bytes;
      if (solve.in_flight == 1) stage.bytes.activations *= static_cast<uint64_t>(stage.in_flight);
      t.push_back(stage.value.t);
      w.push_back(stage.value.w);
      outcome.stages.push_back(std::move(stage));
    }
    outcome.step = pipeline_step_time(t, w, request_.stage.memory.micro_batches, request_.schedule);
    if (given()) {
      outcome.lower_bound = std::nan("");
      return;
    }
    // For every stage b, step >= M t_b + w_b + (sum over k != b of t_k) / V:
    // it exceeds that by (max t - t_b)(M - 1 / V) + (max w - w_b) >= 0. So the
    // step is at least each b's bound on M t + w plus the others' bounds on t
    // over V, and at least the largest of them.
    double time_bounds = 0;
    for (const PipelineStage& stage : outcome.stages) time_bounds += stage.value.time_bound;
    double bound = 0;
    for (const PipelineStage& stage : outcome.stages)
      bound = std::max(bound, stage.value.step_bound + (time_bounds - stage.value.time_bound) / v);
    outcome.lower_bound = s_ == 1 ? std::min(outcome.step, outcome.stages[0].solve->step_bound) : std::min(bound, outcome.step);
  }

  const Graph& graph_;
  const PipelineRequest& request_;
  const std::vector<int64_t> devices_;
  const int s_;
  const std::vector<StageRanges> ranges_;
  const StageKeys keys_;
  Pricings pricings_;
  std::vector<int64_t> first_;
  std::unique_ptr<CostModel> link_model_;
  std::vector<ChunkSend> sends_;
  std::vector<TiedRead> tied_;
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<const StageSolve>> memo_;
  size_t solves_ = 0;
};

}  // namespace

PipelineOutcome solve_interleaved(const Graph& graph, const PipelineRequest& request) {
  return InterleavedSearch(graph, request).run();
}

}  // namespace pase
