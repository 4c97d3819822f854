#include "cli/pipeline_candidates.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include <tbb/parallel_for.h>

#include "cli/graph_input.h"
#include "cli/progress_line.h"
#include "graphs/rebatch.h"
#include "stages/interleaved_search.h"

namespace pase {

PipelineRequest pipeline_request(const PipelineSolveInput& input, const PipelineSchedule& schedule,
                                 const std::vector<int64_t>& stage_devices, const TrainingSetup& setup, int stages) {
  PipelineRequest request;
  request.stages = stages;
  request.stage_devices = stage_devices;
  request.devices = input.devices;
  request.schedule = schedule;
  request.stage = input.request;
  request.stage.memory = setup;
  request.make_model = input.make_model;
  request.equal_blocks = input.request.source == StrategySource::Baseline;  // a baseline's stages: Megatron-LM's split
  request.stage_layouts = input.stage_layouts;
  request.search_chunks = input.search_chunks;
  return request;
}

PipelineCandidates::PipelineCandidates(const PipelineSolveInput& input, const PipelineSchedule& schedule, const std::vector<int>& counts,
                   const std::vector<std::vector<std::vector<int64_t>>>& splits, SearchCounts& searched,
                   int64_t split_unit)
    : input_(input),
      schedule_(schedule),
      searching_(split_unit > 0 || counts.size() > 1 || input.micro_batch_counts.size() > 1 ||
                 splits.front().size() > 1),
      searched_(searched),
      counts_(counts),
      split_unit_(split_unit) {
  std::vector<Candidate> pending;
  for (int64_t m : input.micro_batch_counts)
    if (add_graph(m))
      for (size_t i = 0; i < counts.size(); ++i)
        for (DeviceSplit& split : split_unit > 0 ? first_splits(counts[i]) : given_splits(splits[i]))
          pending.push_back({graphs_.size() - 1, setups_.back(), counts[i], std::move(split.devices), split.bound, false});
  bound_all(pending);
}

void PipelineCandidates::add_splits_below(double step) {
  std::vector<Candidate> pending;
  for (size_t g = 0; g < split_lists_.size(); ++g)
    for (int s : counts_) {
      if (s == 1) continue;
      double left_out = std::numeric_limits<double>::infinity();
      const auto deadline = input_.request.cap_search.deadline;
      if (std::chrono::steady_clock::now() >= deadline) ++searched_.out_of_time;  // its splits' walk stops at once
      for (DeviceSplit& split : split_lists_[g].below(s, step, kSplitsPerCount, left_out, deadline))
        pending.push_back({g, setups_[g], s, std::move(split.devices), split.bound, false, true});
      searched_.lower_bound = std::min(searched_.lower_bound, left_out);
      searched_.splits_left_out += std::isfinite(left_out) ? 1 : 0;
    }
  bound_all(pending);
}

size_t PipelineCandidates::splits_listed() const {
  std::set<std::vector<int64_t>> splits;
  for (const SplitCandidates& list : split_lists_) splits.insert(list.listed().begin(), list.listed().end());
  return splits.size();
}

double PipelineCandidates::best_step() const {
  return best_ ? best_->outcome.step : std::numeric_limits<double>::infinity();
}

void PipelineCandidates::search() {
  // Least bound on top; equal bounds in the order the counts were listed.
  // The candidates not yet searched: those added since the last search.
  std::vector<size_t> heap(candidates_.size() - searched_up_to_);
  std::iota(heap.begin(), heap.end(), searched_up_to_);
  searched_up_to_ = candidates_.size();
  const auto later = [&](size_t a, size_t b) {
    return candidates_[a].bound > candidates_[b].bound || (candidates_[a].bound == candidates_[b].bound && a > b);
  };
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Candidate& c = candidates_[heap.back()];
    if (best_ && c.bound >= best_->outcome.step) {  // this and every one left: none steps faster
      for (size_t left : heap) searched_.lower_bound = std::min(searched_.lower_bound, candidates_[left].bound);
      searched_.bounded_out += heap.size();
      break;
    }
    // Past the time limit: with an answer, the ones left are bounded by their
    // bounds; without one, the least-bound one is solved untightened.
    const bool late = std::chrono::steady_clock::now() >= input_.request.cap_search.deadline;
    if (late && best_) {
      for (size_t left : heap) searched_.lower_bound = std::min(searched_.lower_bound, candidates_[left].bound);
      searched_.out_of_time += heap.size();
      break;
    }
    // The first candidate is solved without tightening its bound: an
    // incumbent early rules out, untightened, every candidate whose bound
    // reaches it (a tightening is a whole-graph Lagrangian DP).
    if (std::isfinite(c.bound) && !c.tightened && searching_ && !input_.given && !late) {
      c.tightened = true;
      set_progress_stage("bounding " + std::to_string(c.stages) + " stages, " + std::to_string(c.setup.micro_batches) +
                         " micro-batches");
      try {
        c.bound = std::max(c.bound, pipeline_block_bound(graphs_[c.graph], request_for(c)));
      } catch (const LimitError&) {  // its DP past the limits: the bound without it stands
      }
      std::push_heap(heap.begin(), heap.end(), later);
      continue;
    }
    heap.pop_back();
    set_progress_stage("pipeline of " + std::to_string(c.stages) + " stages, " + std::to_string(c.setup.micro_batches) +
                       " micro-batches (" + std::to_string(++started_) + " of " + std::to_string(candidates_.size()) + ")");
    if (std::isfinite(c.bound)) solve(c);
    else ++searched_.tried;  // not even the layers' least bytes fit the cap
  }
}

std::vector<DeviceSplit> PipelineCandidates::given_splits(const std::vector<std::vector<int64_t>>& splits) {
  std::vector<DeviceSplit> given;
  for (const std::vector<int64_t>& devices : splits) given.push_back({devices, 0});
  return given;
}

std::vector<DeviceSplit> PipelineCandidates::first_splits(int s) {
  const size_t g = graphs_.size() - 1;
  if (split_lists_.size() < graphs_.size()) {
    const int most = *std::max_element(counts_.begin(), counts_.end());
    split_lists_.emplace_back(graphs_[g], request_for({g, setups_[g], most, {}, 0, false}), split_unit_, most);
  }
  return split_lists_[g].first(s);
}

bool PipelineCandidates::add_graph(int64_t m) {
  TrainingSetup setup = input_.request.memory;
  setup.micro_batches = m;
  try {
    graphs_.push_back(training_graph(*input_.file, input_.path, setup));
    shared_.push_back(std::make_shared<SharedStageSolves>());
    if (input_.given) {
      apply_layer_techniques(graphs_.back(), *input_.given, setup, input_.given_path);
      givens_.push_back(given_pipeline(graphs_.back(), *input_.given, input_.given_path));
    }
  } catch (const InputError& error) {
    if (!searching_) throw;
    if (searched_.first_refusal.empty()) searched_.first_refusal = error.what();
    return false;
  }
  setups_.push_back(setup);
  return true;
}

void PipelineCandidates::bound_all(std::vector<Candidate>& pending) {
  using Key = std::tuple<size_t, int, bool, int64_t>;  // graph, stages, equal, most devices a stage has
  std::map<Key, size_t> first;  // each distinct bound: the first candidate that has it
  std::vector<size_t> asked(pending.size());
  for (size_t k = 0; k < pending.size(); ++k) {
    if (pending[k].by_split) continue;
    const std::vector<int64_t>& n = pending[k].devices;
    const bool equal = std::adjacent_find(n.begin(), n.end(), std::not_equal_to<>()) == n.end();
    const Key key{pending[k].graph, pending[k].stages, equal, n.empty() ? 0 : *std::max_element(n.begin(), n.end())};
    asked[k] = first.try_emplace(key, k).first->second;
  }
  std::vector<size_t> distinct;
  for (const auto& [key, k] : first) distinct.push_back(k);
  std::vector<std::exception_ptr> errors(pending.size());
  std::vector<double> least(pending.size());  // at each distinct bound's first candidate
  std::atomic<size_t> done{0};
  tbb::parallel_for(size_t{0}, distinct.size(), [&](size_t d) {
    set_progress_stage("bounding pipelines (" + std::to_string(++done) + " of " + std::to_string(distinct.size()) + ")");
    const size_t k = distinct[d];
    try {
      least[k] = pipeline_least_step(graphs_[pending[k].graph], request_for(pending[k]));
    } catch (...) {
      errors[k] = std::current_exception();
    }
  });
  for (size_t k = 0; k < pending.size(); ++k)
    if (!pending[k].by_split) pending[k].bound = std::max(pending[k].bound, least[asked[k]]), errors[k] = errors[asked[k]];
  for (size_t k = 0; k < pending.size(); ++k) {
    if (!errors[k]) {
      candidates_.push_back(std::move(pending[k]));
      continue;
    }
    try {
      std::rethrow_exception(errors[k]);
    } catch (const OptionError& error) {
      if (!searching_) throw option_mistake(error);  // a stage count the devices do not allow
      if (searched_.first_mistake.empty()) searched_.first_mistake = option_mistake(error).what();
    }
  }
}

PipelineRequest PipelineCandidates::request_for(const Candidate& c) const {
  PipelineRequest request = pipeline_request(input_, schedule_, c.devices, c.setup, c.stages);
  request.shared_solves = shared_[c.graph];  // used by the searches of the optimum only
  if (input_.given) {
    request.given_starts = givens_[c.graph].starts;
    request.given_stages = givens_[c.graph].stages;
    request.given_chunks = givens_[c.graph].chunks;
  }
  return request;
}

UsageError PipelineCandidates::option_mistake(const OptionError& error) {
  const std::string field = error.words().option;
  return UsageError(error.words().with(field == "stage_devices"   ? "--stage-devices"
                                       : field == "micro_batches" ? "--micro-batches"
                                                                  : "--pipeline-stages"));
}

void PipelineCandidates::solve(const Candidate& c) {
  PipelineOutcome outcome;
  try {
    PipelineRequest request = request_for(c);
    if (best_) request.incumbent = best_->outcome.step;
    outcome = solve_pipeline(graphs_[c.graph], request);
  } catch (const OptionError& error) {
    if (!searching_) throw option_mistake(error);
    if (searched_.first_mistake.empty()) searched_.first_mistake = option_mistake(error).what();
    return;  // more stages than places to cut
  } catch (const LimitError&) {
    // A stage's DP past the limits, even bounded: this count is not
    // searched, but its bound still bounds it, and the others go on.
    if (!searching_) throw;
    ++searched_.refused;
    if (!searched_.first_limit) searched_.first_limit = std::current_exception();
    searched_.lower_bound = std::fmin(searched_.lower_bound, c.bound);
    return;
  }
  searched_.stage_solves += outcome.stage_solves;
  searched_.ranges += outcome.ranges;
  if (!outcome.solved() && outcome.cut) {  // every partition holds a stage whose bound reached the best step
    ++searched_.bounded_out;
    return;
  }
  ++searched_.tried;
  if (!outcome.solved()) return;
  ++searched_.fitted;
  searched_.lower_bound = std::isnan(outcome.lower_bound) ? outcome.lower_bound
                                                          : std::fmin(searched_.lower_bound, outcome.lower_bound);
  if (!best_ || outcome.step < best_->outcome.step) {
    best_ = PipelineBest{std::move(outcome), graphs_[c.graph], c.setup, micro_batch_size(*input_.file, c.setup)};
    best_candidate_ = c;
  }
}

std::optional<PipelineBest> PipelineCandidates::take_best() {
  if (best_ && schedule_.kind == ScheduleKind::Interleaved)
    solve_dropped_tables(graphs_[best_candidate_.graph], request_for(best_candidate_), best_->outcome);
  return std::move(best_);
}

}  // namespace pase
