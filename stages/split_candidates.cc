#include "stages/split_candidates.h"

#include <algorithm>
#include <cmath>

#include <tbb/parallel_for.h>

#include "base/error.h"
#include "stages/interleaved_search.h"
#include "stages/stage_key.h"
#include "stages/stage_solve.h"

namespace pase {

LeastPrefixes least_prefixes(const Graph& graph, const PipelineRequest& request, int64_t unit) {
  const int64_t units = request.devices / unit;
  LeastPrefixes prefixes;
  prefixes.time.resize(static_cast<size_t>(units));
  prefixes.step.resize(static_cast<size_t>(units));
  const TrainingSetup& setup = request.stage.memory;
  const TrainingSetup time_setup = weighted(setup, 1, 0.0);
  PipelineRequest unshared = request;  // the tables of every count would be kept: only their prefixes are
  unshared.shared_solves.reset();
  tbb::parallel_for(int64_t{1}, units + 1, [&](int64_t u) {
    Pricings pricings(graph, unshared);  // one count's tables at a time
    pricings.add(u * unit, setup);
    pricings.add(u * unit, time_setup);
    pricings.price_all();
    SharedStageSolves* shared = request.shared_solves.get();  // the splits' searches read them again
    for (const auto& [prefix, at] : {std::pair{&prefixes.step, &setup}, std::pair{&prefixes.time, &time_setup}}) {
      const auto price = [&, at = at] { return pricings.least_cost_prefix(u * unit, *at); };
      (*prefix)[static_cast<size_t>(u - 1)] = shared ? shared->least_prefix(u * unit, *at, price) : price();
    }
  });
  return prefixes;
}

SplitCosts split_costs_at(const LeastPrefixes& prefixes, const std::vector<int>& starts) {
  SplitCosts costs;
  costs.positions = static_cast<int>(starts.size()) - 1;
  costs.units = static_cast<int64_t>(prefixes.time.size());
  costs.time.resize(prefixes.time.size());
  costs.step.resize(prefixes.step.size());
  for (size_t u = 0; u < prefixes.time.size(); ++u)
    for (int start : starts) {
      costs.time[u].push_back(prefixes.time[u][static_cast<size_t>(start)]);
      costs.step[u].push_back(prefixes.step[u][static_cast<size_t>(start)]);
    }
  return costs;
}

SplitCosts interleaved_split_costs(const LeastPrefixes& prefixes, const std::vector<StageRanges>& stages,
                                   int64_t chunks) {
  SplitCosts costs;
  costs.positions = static_cast<int>(stages.size());
  costs.units = static_cast<int64_t>(prefixes.time.size());
  costs.one_position_per_stage = true;
  costs.time.assign(prefixes.time.size(), std::vector<double>(stages.size() + 1, 0.0));
  costs.step.assign(prefixes.step.size(), std::vector<double>(stages.size() + 1, 0.0));
  const double v = static_cast<double>(chunks);
  for (size_t u = 0; u < prefixes.time.size(); ++u)
    for (size_t k = 0; k < stages.size(); ++k) {
      double a = 0, b = 0;  // the stage's least t over V, its least M t + w
      for (const auto& [begin, end] : stages[k]) {
        a += prefixes.time[u][static_cast<size_t>(end)] - prefixes.time[u][static_cast<size_t>(begin)];
        b += prefixes.step[u][static_cast<size_t>(end)] - prefixes.step[u][static_cast<size_t>(begin)];
      }
      costs.time[u][k + 1] = costs.time[u][k] + a / v;
      costs.step[u][k + 1] = costs.step[u][k] + b;
    }
  return costs;
}

SplitCosts chunk_share_costs(const Graph& graph, const LeastPrefixes& prefixes, int64_t chunks) {
  const StageKeys keys(graph);
  const std::vector<int> cuts = stage_cut_vertices(graph, keys, StageCuts::Blocks);
  const BlockRun run = block_run(graph, keys);
  std::vector<int> starts{0};  // after each block but the last; the first holds what precedes, the last what follows
  for (size_t b = 1; b < run.blocks; ++b) starts.push_back(cuts[run.first + b]);
  starts.push_back(cuts.back());
  SplitCosts costs = split_costs_at(prefixes, starts);
  for (std::vector<double>& time : costs.time)
    for (double& a : time) a /= static_cast<double>(chunks);
  return costs;
}

SplitCandidates::SplitCandidates(const Graph& graph, const PipelineRequest& request, int64_t unit, int most_stages)
    : devices_(request.devices), unit_(unit) {
  const LeastPrefixes prefixes = least_prefixes(graph, request, unit);
  if (request.schedule.kind != ScheduleKind::Interleaved) {
    const std::vector<int> starts = stage_cut_vertices(graph, StageKeys(graph), request.cuts);
    ranges_ = std::make_unique<SplitBounds>(split_costs_at(prefixes, starts), most_stages);
    return;
  }
  if (request.search_chunks) {
    ranges_ = std::make_unique<SplitBounds>(chunk_share_costs(graph, prefixes, request.schedule.chunks), most_stages);
    return;
  }
  for (int s = 2; s <= most_stages && s <= devices_ / unit_; ++s) {
    std::vector<StageRanges> chunks;
    try {
      chunks = interleaved_chunks(graph, s, request.schedule.chunks);
    } catch (const OptionError&) {  // fewer blocks than chunks: so for every larger count too
      break;
    }
    interleaved_[s] = std::make_unique<SplitBounds>(interleaved_split_costs(prefixes, chunks, request.schedule.chunks), s);
  }
}

const SplitBounds* SplitCandidates::bounds_of(int stages) const {
  if (ranges_) return ranges_.get();
  const auto found = interleaved_.find(stages);
  return found == interleaved_.end() ? nullptr : found->second.get();
}

std::vector<int64_t> SplitCandidates::devices_of(const std::vector<int64_t>& units) const {
  std::vector<int64_t> devices;
  for (int64_t u : units) devices.push_back(u * unit_);
  return devices;
}

std::vector<DeviceSplit> SplitCandidates::first(int stages) {
  std::vector<DeviceSplit> splits;
  const int64_t units = devices_ / unit_;
  const SplitBounds* bounds = bounds_of(stages);
  if (stages == 1) {
    splits.push_back({{devices_}, 0});
  } else if (!bounds) {  // its search refuses it, saying why
    std::vector<int64_t> split(static_cast<size_t>(stages), 1);
    split.back() = units - (stages - 1);
    if (split.back() >= 1) splits.push_back({devices_of(split), 0});
  } else {
    if (units % stages == 0) {
      const std::vector<int64_t> equal(static_cast<size_t>(stages), units / stages);
      splits.push_back({devices_of(equal), bounds->of(equal)});
    }
    const BoundedSplit greedy = bounds->greedy(stages);
    if (!greedy.units.empty()) splits.push_back({devices_of(greedy.units), greedy.bound});
  }
  std::vector<DeviceSplit> first;
  for (DeviceSplit& split : splits)
    if (listed_.insert(split.devices).second) first.push_back(std::move(split));
  return first;
}

std::vector<DeviceSplit> SplitCandidates::below(int stages, double step, size_t limit, double& left_out,
                                                std::chrono::steady_clock::time_point deadline) {
  const SplitBounds* bounds = bounds_of(stages);
  if (!bounds) return {};
  const SplitsBelow found = bounds->below(stages, step, limit, deadline);
  left_out = std::min(left_out, found.left_out);
  std::vector<DeviceSplit> splits;
  for (const BoundedSplit& split : found.splits)
    if (std::vector<int64_t> devices = devices_of(split.units); listed_.insert(devices).second)
      splits.push_back({std::move(devices), split.bound});
  return splits;
}

}  // namespace pase
