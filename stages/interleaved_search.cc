#include "stages/interleaved_search.h"

#include <algorithm>
#include <chrono>
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

std::vector<StageRanges> interleaved_chunks_of(const Graph& graph, const std::vector<int64_t>& blocks, int64_t chunks) {
  const StageKeys keys(graph);
  return interleaved_chunks_of(stage_cut_vertices(graph, keys, StageCuts::Blocks), block_run(graph, keys), blocks, chunks);
}

std::vector<StageRanges> interleaved_chunks_of(const std::vector<int>& cuts, const BlockRun& run,
                                               const std::vector<int64_t>& blocks, int64_t chunks) {
  const size_t s = blocks.size();
  std::vector<StageRanges> ranges(s);
  size_t position = run.first;  // the cut position the next chunk's blocks begin at
  for (int64_t v = 0; v < chunks; ++v)
    for (size_t k = 0; k < s; ++k) {
      const int64_t n = blocks[k];
      const size_t size = static_cast<size_t>(n / chunks + (v < n % chunks));
      const bool first = v == 0 && k == 0, last = v + 1 == chunks && k + 1 == s;
      const int begin = first ? 0 : cuts[position];
      position += size;
      const int end = last ? cuts.back() : cuts[position];
      if (!ranges[k].empty() && ranges[k].back().second == begin) ranges[k].back().second = end;  // one stage: runs on
      else ranges[k].push_back({begin, end});
    }
  return ranges;
}

InterleavedStages::InterleavedStages(const Graph& graph, const PipelineRequest& request)
    : graph_(graph),
      request_(request),
      shared_(request),
      devices_(devices_of_stages(request)),
      s_(static_cast<int>(devices_.size())),
      keys_(graph),
      pricings_(graph, request) {
  if (!shared_.stage.solve.dp.block_tables) shared_.stage.solve.dp.block_tables = std::make_shared<BlockTableCache>();
  first_.assign(devices_.size(), 0);
  for (size_t k = 1; k < devices_.size(); ++k) first_[k] = first_[k - 1] + devices_[k - 1];
  link_model_ = request.make_model(weighted(request.stage.memory, 1, 0.0), request.devices);
  const TrainingSetup time_setup = weighted(request.stage.memory, 1, 0.0);
  for (int64_t n : devices_) {
    pricings_.add(n, request.stage.memory);
    if (s_ > 1) pricings_.add(n, time_setup);  // least_cost's time bound, and the least times
  }
  pricings_.price_all();
  if (s_ > 1 && request.search_chunks)  // the chunk search's bounds (least)
    for (int64_t n : devices_)
      if (!least_.count(n)) least_[n] = {least_prefix(n, time_setup), least_prefix(n, request.stage.memory)};
  tied_ = priced_tied_reads(graph_, pricings_.repeated_reads(), devices_, request.devices, *link_model_);
  for (int cut : stage_cut_vertices(graph_, keys_, StageCuts::Blocks))  // where chunks begin, asked again and again
    if (cut < static_cast<int>(graph_.vertices.size())) crossing_[cut] = crossing_elements(graph_, cut);
}

// Pricings::least_cost_prefix, taken from (and left for) the other searches of the graph.
std::vector<double> InterleavedStages::least_prefix(int64_t devices, const TrainingSetup& setup) const {
  const auto price = [&] { return pricings_.least_cost_prefix(devices, setup); };
  SharedStageSolves* others = request_.shared_solves.get();
  return others ? others->least_prefix(devices, setup, price) : price();
}

int64_t InterleavedStages::in_flight(int k) const {
  return micro_batches_in_flight(k, s_, request_.stage.memory.micro_batches, request_.schedule);
}

// Every boundary where a chunk of one stage hands on to a chunk of another
// stage, one direction per micro-batch, that stage k sends or receives.
double InterleavedStages::sends_of(int k, const std::vector<StageRanges>& chunks) const {
  std::vector<std::pair<int, int>> chunk_of;  // (begin, stage), in graph order
  for (int j = 0; j < s_; ++j)
    for (const auto& range : chunks[static_cast<size_t>(j)]) chunk_of.push_back({range.first, j});
  std::sort(chunk_of.begin(), chunk_of.end());
  double seconds = 0;
  for (size_t c = 1; c < chunk_of.size(); ++c) {
    const int from = chunk_of[c - 1].second, to = chunk_of[c].second;
    if (from == to || (from != k && to != k)) continue;
    const auto a = static_cast<size_t>(from), b = static_cast<size_t>(to);
    const bool across = devices_across_nodes(first_[a], devices_[a], first_[b], devices_[b], link_model_->devices_per_node());
    const auto known = crossing_.find(chunk_of[c].first);
    const uint64_t crossing = known != crossing_.end() ? known->second : crossing_elements(graph_, chunk_of[c].first);
    seconds += send_seconds(crossing, devices_[a], devices_[b], across, *link_model_);
  }
  return seconds;
}

// A weight two stages read is a copy in each, its gradients all-reduced once per step.
double InterleavedStages::tied_work(const StageRanges& own) const {
  double seconds = 0;
  for (const TiedRead& read : tied_)
    if ((index_in(own, read.reader) >= 0) != (index_in(own, read.before) >= 0)) seconds += read.seconds;
  return seconds;
}

// Stage k's optimum without the cap, and under it where that does not fit
// with its micro-batches in flight.
std::shared_ptr<const StageSolve> InterleavedStages::solve(int k, const StageRanges& own, bool tabled) {
  const StageSite site{own, devices_[static_cast<size_t>(k)], &pricings_};
  const Graph stage = stage_graph(graph_, own);
  PipelineRequest request = shared_;
  if (given()) request.stage.given = &request_.given_stages->at(static_cast<size_t>(k));
  PipelineRequest uncapped = request;
  uncapped.stage.cap.reset();
  const auto solve_base = [&] { return solve_stage(stage, site, 1, s_, uncapped); };
  // A shared solve ran to its end once: solved again for its tables, no clock stops it short.
  const auto with_tables = [&](std::shared_ptr<const StageSolve> solved, const auto& again) {
    return tabled && solved->tables_dropped ? std::make_shared<const StageSolve>(again()) : solved;
  };
  const auto base = remember(key_of(k, own, 1, false), solve_base);
  if (!request.stage.cap || !base->fits) return with_tables(base, solve_base);
  const PlanMemory& one = base->outcome.bytes;
  const uint64_t held = static_cast<uint64_t>(in_flight(k));
  if (one.activations <= (UINT64_MAX - one.weights) / held && one.weights + held * one.activations <= *request.stage.cap)
    return with_tables(base, solve_base);
  const auto solve_capped = [&] { return solve_stage(stage, site, in_flight(k), s_, request, base.get()); };
  PipelineRequest unclocked = request;
  unclocked.stage.cap_search.max_seconds = 1e18;
  unclocked.stage.cap_search.deadline = std::chrono::steady_clock::time_point::max();
  return with_tables(remember(key_of(k, own, in_flight(k), true), solve_capped),
                     [&] { return solve_stage(stage, site, in_flight(k), s_, unclocked, base.get()); });
}

SharedStageSolves* InterleavedStages::shared() const {
  return given() || request_.equal_blocks || request_.stage.source != StrategySource::Optimum
             ? nullptr
             : request_.shared_solves.get();
}

SharedStageSolves::Key InterleavedStages::shared_key(const Key& key) const {
  std::vector<int64_t> chunks = std::get<0>(key);
  chunks.push_back(-3);  // an interleaved stage's chunks
  return {std::move(chunks), std::get<1>(key), std::get<2>(key), std::get<3>(key), s_ > 1};
}

InterleavedStages::Key InterleavedStages::key_of(int k, const StageRanges& own, int64_t held, bool under_cap) const {
  std::vector<int64_t> chunks;
  for (const auto& [begin, end] : own) {
    const std::vector<int64_t> one = keys_.key(begin, end);
    chunks.insert(chunks.end(), one.begin(), one.end());
    chunks.push_back(-1);
  }
  if (given()) chunks.push_back(-2 - k);  // each stage its own strategy
  for (const TiedRead& read : tied_) {  // which readers of a shared weight it holds
    chunks.push_back(index_in(own, read.reader) >= 0);
    chunks.push_back(index_in(own, read.before) >= 0);
  }
  return {std::move(chunks), devices_[static_cast<size_t>(k)], held, under_cap};
}

template <typename Solve>
std::shared_ptr<const StageSolve> InterleavedStages::remember(const Key& key, const Solve& solve) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const auto found = memo_.find(key); found != memo_.end()) return found->second;
  }
  SharedStageSolves* others = shared();
  if (others) {  // another search of the graph solved it
    std::shared_ptr<const StageSolve> found;
    {
      std::lock_guard<std::mutex> lock(others->mutex);
      if (const auto at = others->solves.find(shared_key(key)); at != others->solves.end()) found = at->second;
    }
    if (found) {
      std::lock_guard<std::mutex> lock(mutex_);
      return memo_.try_emplace(key, std::move(found)).first->second;
    }
  }
  auto solved = std::make_shared<const StageSolve>(solve());
  if (others && ran_to_end(*solved)) {
    std::lock_guard<std::mutex> lock(others->mutex);
    others->solves.emplace(shared_key(key), without_tables(*solved));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto [kept, fresh] = memo_.try_emplace(key, std::move(solved));  // another thread's, if it came first
  solves_ += fresh;
  return kept->second;
}

PipelineStage InterleavedStages::stage(int k, const std::vector<StageRanges>& chunks, bool tabled) {
  const StageRanges& own = chunks[static_cast<size_t>(k)];
  const std::shared_ptr<const StageSolve> solved = solve(k, own, tabled);
  const double m = static_cast<double>(request_.stage.memory.micro_batches);
  PipelineStage stage;
  stage.begin = own.front().first;
  stage.end = own.back().second;
  stage.chunks = own;
  stage.devices = devices_[static_cast<size_t>(k)];
  stage.first_device = first_[static_cast<size_t>(k)];
  stage.in_flight = in_flight(k);
  stage.send_time = sends_of(k, chunks);
  const double tied = tied_work(own);
  stage.value = {solved->t + stage.send_time, solved->w + tied, solved->step_bound + m * stage.send_time + tied,
                 solved->time_bound + stage.send_time};
  stage.bytes = solved->outcome.bytes;
  if (solved->in_flight == 1) stage.bytes.activations *= static_cast<uint64_t>(stage.in_flight);
  stage.solve = solved;
  return stage;
}

StageValue InterleavedStages::least(int k, const std::vector<StageRanges>& chunks) const {
  const StageRanges& own = chunks[static_cast<size_t>(k)];
  const auto& [time, step] = least_.at(devices_[static_cast<size_t>(k)]);
  const double send = sends_of(k, chunks), m = static_cast<double>(request_.stage.memory.micro_batches);
  StageValue value;
  for (const auto& [begin, end] : own) {
    value.time_bound += time[static_cast<size_t>(end)] - time[static_cast<size_t>(begin)];
    value.step_bound += step[static_cast<size_t>(end)] - step[static_cast<size_t>(begin)];
  }
  value.time_bound += send;
  value.step_bound += m * send + tied_work(own);
  return value;
}

PipelineOutcome InterleavedStages::pipeline(const std::vector<StageRanges>& chunks) {
  std::vector<PipelineStage> stages(static_cast<size_t>(s_));
  tbb::parallel_for(0, s_, [&](int k) { stages[static_cast<size_t>(k)] = stage(k, chunks); });
  PipelineOutcome outcome;
  outcome.positions = 0;
  for (const StageRanges& own : chunks) outcome.positions += static_cast<int>(own.size());
  outcome.ranges = static_cast<size_t>(s_);
  outcome.stage_solves = solves_;
  for (const PipelineStage& stage : stages)
    if (!stage.solve->fits) return outcome;  // some stage fits nothing: no pipeline of these chunks runs
  std::vector<double> t, w;
  for (const PipelineStage& stage : stages) t.push_back(stage.value.t), w.push_back(stage.value.w);
  outcome.stages = std::move(stages);
  outcome.step = pipeline_step_time(t, w, request_.stage.memory.micro_batches, request_.schedule);
  if (given()) {
    outcome.lower_bound = std::nan("");
    return outcome;
  }
  // For every stage b, step >= M t_b + w_b + (sum over k != b of t_k) / V:
  // it exceeds that by (max t - t_b)(M - 1 / V) + (max w - w_b) >= 0. So the
  // step is at least each b's bound on M t + w plus the others' bounds on t
  // over V, and at least the largest of them.
  const double v = static_cast<double>(request_.schedule.chunks);
  double time_bounds = 0;
  for (const PipelineStage& stage : outcome.stages) time_bounds += stage.value.time_bound;
  double bound = 0;
  for (const PipelineStage& stage : outcome.stages)
    bound = std::max(bound, stage.value.step_bound + (time_bounds - stage.value.time_bound) / v);
  outcome.lower_bound = s_ == 1 ? std::min(outcome.step, outcome.stages[0].solve->step_bound) : std::min(bound, outcome.step);
  return outcome;
}

void solve_dropped_tables(const Graph& graph, const PipelineRequest& request, PipelineOutcome& outcome) {
  std::vector<StageRanges> chunks;
  for (const PipelineStage& stage : outcome.stages) chunks.push_back(stage.chunks);
  if (std::none_of(outcome.stages.begin(), outcome.stages.end(),
                   [](const PipelineStage& stage) { return stage.solve->tables_dropped; }))
    return;
  InterleavedStages stages(graph, request);
  tbb::parallel_for(size_t{0}, outcome.stages.size(), [&](size_t k) {
    if (outcome.stages[k].solve->tables_dropped)
      outcome.stages[k].solve = stages.stage(static_cast<int>(k), chunks, true).solve;
  });
}

PipelineOutcome solve_interleaved(const Graph& graph, const PipelineRequest& request) {
  InterleavedStages stages(graph, request);
  return stages.pipeline(request.given_chunks.empty()
                             ? interleaved_chunks(graph, stages.stages(), request.schedule.chunks)
                             : request.given_chunks);
}

}  // namespace pase
