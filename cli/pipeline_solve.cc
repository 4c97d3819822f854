#include "cli/pipeline_solve.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <limits>
#include <numeric>
#include <sstream>

#include <tbb/parallel_for.h>

#include "base/byte_size.h"
#include "base/error.h"
#include "base/text_file.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/layer_table.h"
#include "cli/progress_line.h"
#include "cli/text_output.h"
#include "graphs/rebatch.h"
#include "stages/device_splits.h"
#include "stages/pipeline_document.h"
#include "stages/pipeline_plan.h"
#include "stages/split_bounds.h"
#include "stages/stage_solve.h"
#include "graphs/stage_graph.h"
#include "strategy/strategy_document.h"

namespace pase {
namespace {

// "12,4": each stage's devices.
std::vector<int64_t> parse_stage_devices(const std::string& text) {
  std::vector<int64_t> devices;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const bool digits = !item.empty() && item.size() <= 10 &&
                        item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(item) < 1)
      throw UsageError("--stage-devices: expected positive device counts separated by commas (12,4), got '" + text + "'");
    devices.push_back(std::stoll(item));
    at = comma + 1;
  }
  return devices;
}

// The stage counts to try: the one given, the stage devices' count, or under
// auto every divisor of the devices.
// With --stage-devices auto (split_unit > 0), under auto every count from 1
// to the units of devices.
std::vector<int> stage_counts(const PipelineCliOptions& o, const std::vector<int64_t>& stage_devices, int64_t devices,
                              int64_t split_unit) {
  if (split_unit > 0 && o.stages == "auto") {
    std::vector<int> counts;
    for (int64_t s = 1; s <= devices / split_unit && s <= 4096; ++s) counts.push_back(static_cast<int>(s));
    return counts;
  }
  if (!stage_devices.empty()) {
    if (o.stages != "1" && o.stages != std::to_string(stage_devices.size()))
      throw UsageError("--stage-devices: gives " + std::to_string(stage_devices.size()) +
                       " stages, but --pipeline-stages is " + o.stages);
    return {static_cast<int>(stage_devices.size())};
  }
  if (o.stages == "auto") {
    std::vector<int> counts;
    for (int64_t s = 1; s <= devices && s <= 4096; ++s)
      if (devices % s == 0) counts.push_back(static_cast<int>(s));
    return counts;
  }
  const bool digits = !o.stages.empty() && o.stages.size() <= 6 && o.stages.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(o.stages) < 1)
    throw UsageError("--pipeline-stages: expected a number of stages or auto, got '" + o.stages + "'");
  return {std::stoi(o.stages)};
}

PipelineSchedule schedule_of(const PipelineCliOptions& o) {
  PipelineSchedule schedule;
  try {
    schedule = parse_schedule(o.schedule);
  } catch (const OptionError& error) {
    throw UsageError(error.words().with("--schedule"));
  }
  return schedule;
}

// --stage-devices auto: splits listed per stage count, the least bounds first.
constexpr size_t kSplitsPerCount = 4096;

struct PipelineBest {
  PipelineOutcome outcome;
  Graph graph;
  TrainingSetup setup;
  int64_t micro_batch_size = 0;
};

struct SearchCounts {
  size_t tried = 0, fitted = 0, stage_solves = 0, ranges = 0, bounded_out = 0;
  size_t out_of_time = 0;  ///< candidates left at the time limit, their bounds kept
  /// No pipeline of the counts tried steps faster: the least of the solved
  /// ones' bounds and of the bounds that ruled the others out.
  double lower_bound = std::numeric_limits<double>::infinity();
  std::string first_refusal;
  size_t splits_left_out = 0;  ///< counts with more splits below the best step than the limit (their least bound kept)
  size_t refused = 0;              ///< counts whose search went past the DP's limits
  std::exception_ptr first_limit;  ///< the first of those refusals
};

std::string format_seconds(double cost) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", cost);
  return buffer;
}

// "first .. last (layers)"; an interleaved stage's first chunk, then how many more.
std::string layer_range(const Graph& graph, const PipelineStage& stage) {
  const StageRanges ranges = stage.chunks.empty() ? StageRanges{{stage.begin, stage.end}} : stage.chunks;
  int layers = 0;
  for (const auto& [begin, end] : ranges) layers += end - begin;
  const auto& [begin, end] = ranges.front();
  std::string text = graph.vertices[static_cast<size_t>(begin)].name + " .. " +
                     graph.vertices[static_cast<size_t>(end - 1)].name;
  if (ranges.size() > 1) text += " and " + std::to_string(ranges.size() - 1) + " more chunk" + (ranges.size() > 2 ? "s" : "");
  return text + " (" + std::to_string(layers) + ")";
}

void print_stages(std::ostream& out, const PipelineBest& best, const PipelineSchedule& schedule, int64_t devices,
                  double lower_bound, const std::string& unit, const std::string& given_path) {
  const PipelineOutcome& o = best.outcome;
  out << best.graph.name << " on " << devices << " devices in " << o.stages.size() << " pipeline stages ("
      << schedule_name(schedule) << "), " << best.setup.micro_batches << " micro-batches of " << best.micro_batch_size
      << ", cost in " << unit << "\n";
  size_t width = 6;
  for (const PipelineStage& stage : o.stages) width = std::max(width, layer_range(best.graph, stage).size());
  char line[2048];
  std::snprintf(line, sizeof line, "%5s  %-*s  %11s  %9s  %12s  %12s  %12s  %10s\n", "stage", int(width), "layers",
                "devices", "in flight", "t", "sends", "step work", "memory");
  out << line;
  for (size_t k = 0; k < o.stages.size(); ++k) {
    const PipelineStage& s = o.stages[k];
    const std::string range = std::to_string(s.first_device) + "-" + std::to_string(s.first_device + s.devices - 1);
    std::snprintf(line, sizeof line, "%5zu  %-*s  %11s  %9lld  %12s  %12s  %12s  %6s GiB\n", k, int(width),
                  layer_range(best.graph, s).c_str(), range.c_str(), static_cast<long long>(s.in_flight),
                  format_cost_text(s.value.t, unit).c_str(), format_cost_text(s.send_time, unit).c_str(),
                  format_cost_text(s.value.w, unit).c_str(), format_gib(s.bytes.total()).c_str());
    out << line;
  }
  out << "step time " << format_total(o.step, unit) << " " << unit
      << (schedule.kind == ScheduleKind::Interleaved
              ? " (micro-batches x the largest t + (sum of t - the largest t) / " + std::to_string(schedule.chunks) +
                    " + the largest step work)"
              : std::string(" (sum of t + (micro-batches - 1) x the largest t + the largest step work)"));
  if (std::isnan(lower_bound)) {
    out << (given_path.empty() ? ", stages of equal blocks (not searched)\n"
                               : ", stages and strategy as " + given_path + " gives them (not searched)\n");
    return;
  }
  const double gap = lower_bound > 0 ? (o.step - lower_bound) / lower_bound : 0.0;
  out << ", lower bound " << format_total(lower_bound, unit) << " " << unit << ", gap "
      << (gap <= 1e-12 ? std::string("0 (optimal)") : format_seconds(100 * gap) + "%") << "\n";
}

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
  return request;
}

// Each stage placed on its own mesh (stages/pipeline_plan.h), into the
// document, with a line saying what the layouts realize; or why not.
void attach_plan(StrategyDocument& document, const PipelineBest& best, const PipelineRequest& request,
                 const std::string& unit, std::string& words) {
  const std::unique_ptr<CostModel> model = request.make_model(best.setup, request.devices);
  PipelinePlacement placement = place_pipeline(best.graph, best.outcome, request, model->devices_per_node());
  if (!placement.plan) {
    document.plan_unavailable = placement.unavailable;
    words = "no plan on the stages' default meshes: " + placement.unavailable + "\n";
    return;
  }
  const Plan& plan = *placement.plan;
  words = "plan on a mesh per stage:";
  for (size_t k = 0, next = 0; k < plan.stages.size(); k = next) {  // runs of stages on alike meshes
    for (next = k + 1; next < plan.stages.size() && plan.stages[next].mesh.shape == plan.stages[k].mesh.shape;) ++next;
    words += std::string(k ? "," : "") + (next - k == 1 ? " stage " + std::to_string(k)
                                                        : " stages " + std::to_string(k) + "-" + std::to_string(next - 1)) +
             " " + mesh_shape_words(plan.stages[k].mesh);
  }
  words += "; step with realized redistributions " + format_total(plan.realized_total_cost, unit) + " " + unit +
           " (model " + format_total(best.outcome.step, unit) + "), axis assignment " +
           (plan.assignment_exact ? std::string("exact") : "not proven optimal") + " (" + plan.assignment_proof +
           ")\n";
  document.plan = std::move(placement.plan);
  document.plan_unavailable.clear();
}

// Every (micro-batch count, stage count), best first: each with the bound no
// DP is needed for (pipeline_least_step), then, when it is the least left,
// the tighter one of a stage's DP (pipeline_block_bound), and solved when
// that is still the least; each only while its bound is below the best step
// found, so the first pipelines solved are those most likely to be best.
class PipelineCandidates {
 public:
  /// `splits[i]`: the stage devices to try with `counts[i]` stages (one
  /// empty vector: equal devices).
  /// With `split_unit` (--stage-devices auto where the layers' least costs
  /// bound the step): `splits` is not read; each count's first splits are
  /// its equal one and the greedy split of least bound (split_bounds.h),
  /// and add_splits_below lists the others that may step faster.
  PipelineCandidates(const PipelineSolveInput& input, const PipelineSchedule& schedule, const std::vector<int>& counts,
                     const std::vector<std::vector<std::vector<int64_t>>>& splits, SearchCounts& searched,
                     int64_t split_unit = 0)
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

  /// Every split of every count and graph whose bound (split_bounds.h) is
  /// below `step` and not yet listed, at most kSplitsPerCount per count (the
  /// least bounds; the rest's least bound kept in the lower bound).
  void add_splits_below(double step) {
    std::vector<Candidate> pending;
    for (size_t g = 0; g < split_lists_.size(); ++g)
      for (int s : counts_) {
        if (s == 1) continue;
        double left_out = std::numeric_limits<double>::infinity();
        for (DeviceSplit& split : split_lists_[g].below(s, step, kSplitsPerCount, left_out))
          pending.push_back({g, setups_[g], s, std::move(split.devices), split.bound, false, true});
        searched_.lower_bound = std::min(searched_.lower_bound, left_out);
        searched_.splits_left_out += std::isfinite(left_out) ? 1 : 0;
      }
    bound_all(pending);
  }

  /// The distinct splits made candidates (over every micro-batch count).
  [[nodiscard]] size_t splits_listed() const {
    std::set<std::vector<int64_t>> splits;
    for (const SplitCandidates& list : split_lists_) splits.insert(list.listed().begin(), list.listed().end());
    return splits.size();
  }

  /// The best pipeline found (after search), taken out.
  std::optional<PipelineBest> take_best() { return std::move(best_); }
  [[nodiscard]] double best_step() const {
    return best_ ? best_->outcome.step : std::numeric_limits<double>::infinity();
  }

  void search() {
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

 private:
  struct Candidate {
    size_t graph = 0;
    TrainingSetup setup;
    int stages = 1;
    std::vector<int64_t> devices;  // each stage's; empty: equal
    double bound = 0;
    bool tightened = false;  // pipeline_block_bound taken
    bool by_split = false;   // bounded by its split's least costs (split_bounds.h), tighter than pipeline_least_step
  };

  // The splits given for a count, unbounded.
  static std::vector<DeviceSplit> given_splits(const std::vector<std::vector<int64_t>>& splits) {
    std::vector<DeviceSplit> given;
    for (const std::vector<int64_t>& devices : splits) given.push_back({devices, 0});
    return given;
  }

  // A count's first splits (SplitCandidates::first) for the graph just added.
  std::vector<DeviceSplit> first_splits(int s) {
    const size_t g = graphs_.size() - 1;
    if (split_lists_.size() < graphs_.size()) {
      const int most = *std::max_element(counts_.begin(), counts_.end());
      split_lists_.emplace_back(graphs_[g], request_for({g, setups_[g], most, {}, 0, false}), split_unit_, most);
    }
    return split_lists_[g].first(s);
  }

  // The graph of one micro-batch of `m`; false where the batch does not split so.
  bool add_graph(int64_t m) {
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

  // Each candidate's bound that needs no DP (pricing alone), in parallel,
  // once per distinct bound: with stages of unequal devices it depends on
  // the most devices a stage has alone (pipeline_least_step), so the splits
  // of one count share it (a split listed by its least costs keeps that
  // bound, the tighter). Then, in order, the candidates kept and the first
  // error thrown.
  void bound_all(std::vector<Candidate>& pending) {
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
      }
    }
  }

  [[nodiscard]] PipelineRequest request_for(const Candidate& c) const {
    PipelineRequest request = pipeline_request(input_, schedule_, c.devices, c.setup, c.stages);
    request.shared_solves = shared_[c.graph];  // used by the searches of the optimum only
    if (input_.given) {
      request.given_starts = givens_[c.graph].starts;
      request.given_stages = givens_[c.graph].stages;
      request.given_chunks = givens_[c.graph].chunks;
    }
    return request;
  }

  static UsageError option_mistake(const OptionError& error) {
    const std::string field = error.words().option;
    return UsageError(error.words().with(field == "stage_devices"   ? "--stage-devices"
                                         : field == "micro_batches" ? "--micro-batches"
                                                                    : "--pipeline-stages"));
  }

  void solve(const Candidate& c) {
    PipelineOutcome outcome;
    try {
      PipelineRequest request = request_for(c);
      if (best_) request.incumbent = best_->outcome.step;
      outcome = solve_pipeline(graphs_[c.graph], request);
    } catch (const OptionError& error) {
      if (searching_) return;  // more stages than places to cut
      throw option_mistake(error);
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
    if (!best_ || outcome.step < best_->outcome.step)
      best_ = PipelineBest{std::move(outcome), graphs_[c.graph], c.setup, micro_batch_size(*input_.file, c.setup)};
  }

  const PipelineSolveInput& input_;
  const PipelineSchedule& schedule_;
  size_t started_ = 0;  // candidates solved so far, for the progress line
  const bool searching_;
  SearchCounts& searched_;
  std::vector<Graph> graphs_;
  std::vector<TrainingSetup> setups_;  // per graph
  std::vector<std::shared_ptr<SharedStageSolves>> shared_;  // per graph: the stage solves its searches share
  std::vector<GivenPipeline> givens_;  // per graph, with a given strategy file: its stages
  std::vector<Candidate> candidates_;
  size_t searched_up_to_ = 0;  // candidates_ before it: in a search already
  std::optional<PipelineBest> best_;
  const std::vector<int> counts_;
  const int64_t split_unit_;  // > 0: splits listed by their bounds
  std::vector<SplitCandidates> split_lists_;  // per graph, with split_unit_
};

}  // namespace

void add_pipeline_options(CLI::App* command, PipelineCliOptions& options) {
  command->add_option("--pipeline-stages", options.stages,
                      "Pipeline stages: a number, or auto (every divisor of the devices); each stage a contiguous range "
                      "of layers on its own devices (docs/pipeline.md; default 1, no pipeline)");
  command->add_option("--schedule", options.schedule,
                      "Pipeline schedule: 1f1b (default), gpipe, or interleaved:V (Megatron-LM's: V chunks of equal "
                      "blocks per stage)");
  command->add_option("--stage-devices", options.stage_devices,
                      "Each stage's devices, e.g. 12,4, or auto: every split in multiples of a node's devices (of one "
                      "device within a node), those the layers' least costs do not rule out searched; frameworks run "
                      "equal stages only (default: the devices split evenly)");
}

PipelineSolveInput pipeline_input(const GraphFileV1& file, const std::string& path, int64_t devices,
                                  const std::vector<int64_t>& counts, const SolveRequest& request,
                                  const CostModelOptions& model, const std::string& out, bool json) {
  PipelineSolveInput input;
  input.file = &file;
  input.path = path;
  input.devices = devices;
  input.micro_batch_counts = counts;
  input.request = request;
  input.make_model = [model](const TrainingSetup& setup, int64_t n) { return make_cost_model(model, n, setup); };
  input.out = out;
  input.json = json;
  return input;
}

namespace {

// --stage-devices auto: the unit of a stage's devices (a node's, when the job is whole nodes).
int64_t split_unit(const PipelineSolveInput& input) {
  if (input.request.source == StrategySource::Baseline || input.given)
    throw UsageError("--stage-devices auto: a baseline's or a file's stages are given, not searched");
  return device_split_unit(input.devices, input.make_model(input.request.memory, input.devices)->devices_per_node());
}

// Every split of the devices into `stages` in multiples of `unit`.
std::vector<std::vector<int64_t>> every_split(int64_t devices, int stages, int64_t unit) {
  try {
    return device_splits(devices, stages, unit, kSplitsPerCount);
  } catch (const OptionError& error) {
    throw UsageError(error.words().with("--stage-devices auto"));
  }
}

}  // namespace

PipelineAnswer best_pipeline(const PipelineCliOptions& o, const PipelineSolveInput& input) {
  const auto start = std::chrono::steady_clock::now();
  PipelineAnswer answer;
  answer.schedule = schedule_of(o);
  const int64_t unit = o.stage_devices == "auto" ? split_unit(input) : 0;
  const std::vector<int64_t> given =
      o.stage_devices.empty() || unit > 0 ? std::vector<int64_t>{} : parse_stage_devices(o.stage_devices);
  answer.stage_counts = stage_counts(o, given, input.devices, unit);
  // The layers' least costs bound every split (split_bounds.h) but where
  // the schedule interleaves (its step is another formula); there every
  // split is listed.
  const bool by_bounds = unit > 0 && answer.schedule.kind != ScheduleKind::Interleaved;
  std::vector<std::vector<std::vector<int64_t>>> splits;
  for (int s : answer.stage_counts) {
    answer.split_count += unit > 0 ? device_split_count(input.devices, s, unit) : 1.0;
    splits.push_back(by_bounds ? std::vector<std::vector<int64_t>>{}
                     : unit > 0 ? every_split(input.devices, s, unit)
                                : std::vector<std::vector<int64_t>>{given});
  }
  if (unit > 0 && answer.split_count == 0)  // one count given, more stages than units
    throw UsageError("--stage-devices auto: " + std::to_string(answer.stage_counts.front()) +
                     " stages need at least as many units of " + std::to_string(unit) + " devices" +
                     (unit > 1 ? " (a node's)" : "") + ", and " + std::to_string(input.devices) + " devices are " +
                     std::to_string(input.devices / unit));
  SearchCounts searched;
  PipelineCandidates candidates(input, answer.schedule, answer.stage_counts, splits, searched, by_bounds ? unit : 0);
  candidates.search();
  if (by_bounds) {
    candidates.add_splits_below(candidates.best_step());
    candidates.search();
  }
  std::optional<PipelineBest> best = candidates.take_best();
  answer.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!best) {
    if (searched.first_limit) std::rethrow_exception(searched.first_limit);  // nothing else searched runs or fits
    if (searched.tried == 0 && !searched.first_refusal.empty()) throw InputError(searched.first_refusal);
    throw ResourceError("no pipeline of the stages tried fits the memory cap: some stage of every partition needs "
                        "more than " + std::to_string(input.request.cap.value_or(0)) + " bytes (" +
                        format_gib(input.request.cap.value_or(0)) + " GiB) per device");
  }
  if (!std::isnan(best->outcome.lower_bound)) best->outcome.lower_bound = std::min(searched.lower_bound, best->outcome.step);
  answer.tried = searched.tried, answer.fitted = searched.fitted, answer.bounded_out = searched.bounded_out;
  answer.refused = searched.refused;
  answer.splits_listed = by_bounds ? candidates.splits_listed() : 0;
  answer.splits_left_out = searched.splits_left_out;
  answer.out_of_time = searched.out_of_time;
  answer.stage_solves = searched.stage_solves, answer.ranges = searched.ranges;
  for (const PipelineStage& stage : best->outcome.stages) answer.stage_devices.push_back(stage.devices);
  answer.outcome = std::move(best->outcome);
  answer.graph = std::move(best->graph);
  answer.setup = best->setup;
  answer.micro_batch_size = best->micro_batch_size;
  return answer;
}

namespace {

// Each of the model's chunks in order (chunk c = v S + k: stage k's v-th; a
// stage of contiguous layers is one chunk): its stage and where it begins.
std::vector<std::pair<size_t, int>> model_chunks(const PipelineOutcome& outcome) {
  const size_t stages = outcome.stages.size();
  const size_t v = std::max<size_t>(1, outcome.stages[0].chunks.size());
  std::vector<std::pair<size_t, int>> chunks;
  for (size_t c = 0; c < v * stages; ++c) {
    const PipelineStage& stage = outcome.stages[c % stages];
    chunks.push_back({c % stages, stage.chunks.empty() ? stage.begin : stage.chunks[c / stages].first});
  }
  return chunks;
}

// The sends of every chunk, one direction per micro-batch each: forward to
// the next chunk's stage, the gradient back to the one before's.
void chunk_sends(StepModel& step, const PipelineAnswer& answer, const CostModel& link) {
  const PipelineOutcome& outcome = answer.outcome;
  const std::vector<std::pair<size_t, int>> chunks = model_chunks(outcome);
  const auto across = [&](size_t from, size_t to) {
    const PipelineStage& a = outcome.stages[from];
    const PipelineStage& b = outcome.stages[to];
    return devices_across_nodes(a.first_device, a.devices, b.first_device, b.devices, link.devices_per_node());
  };
  const auto send = [&](size_t from, size_t to, int begin) {
    return send_seconds(crossing_elements(answer.graph, begin), outcome.stages[from].devices,
                        outcome.stages[to].devices, across(from, to), link);
  };
  const size_t stages = outcome.stages.size();
  for (size_t c = 0; c < chunks.size(); ++c) {
    SimStage& sim = step.stages[chunks[c].first];
    const bool last = c + 1 == chunks.size(), first = c == 0;
    const double forward = last ? 0.0 : send(chunks[c].first, chunks[c + 1].first, chunks[c + 1].second);
    const double backward = first ? 0.0 : send(chunks[c - 1].first, chunks[c].first, chunks[c].second);
    if (sim.chunks.empty()) {
      sim.send_forward = forward, sim.send_backward = backward;
    } else {
      sim.chunks[c / stages].send_forward = forward;
      sim.chunks[c / stages].send_backward = backward;
    }
  }
}

// One stage as the simulator's: its layers priced as its solve priced them,
// its chunks' first layers (interleaved), a tied weight's all-reduce last.
SimStage simulated_pipeline_stage(const PipelineAnswer& answer, const PipelineStage& stage,
                                  const PipelineSolveInput& input) {
  TrainingSetup setup = answer.setup;
  setup.activations_in_flight = stage.solve->in_flight;
  const std::unique_ptr<CostModel> model = input.make_model(setup, stage.devices);
  const Graph named = solved_stage_graph(answer.graph, stage);
  SimStage sim = simulated_stage(named, stage.solve->outcome.tables, stage.solve->outcome.solution.choice, *model,
                                 answer.setup.micro_batches);
  sim.first_device = stage.first_device;
  sim.devices = stage.devices;
  sim.across_nodes = devices_across_nodes(stage.first_device, stage.devices, stage.first_device, stage.devices,
                                          model->devices_per_node());
  size_t first = 0;
  for (const auto& [begin, end] : stage.chunks) {
    sim.chunks.push_back({first, 0, 0});
    first += static_cast<size_t>(end - begin);
  }
  double layers_work = 0;  // what the layers pay once per step; the rest of w: a tied weight's all-reduce
  for (const SimLayer& layer : sim.layers) layers_work += layer.step_communication + layer.step_compute;
  sim.layers.back().step_communication += std::max(0.0, stage.value.w - layers_work);
  return sim;
}

}  // namespace

StepModel pipeline_step_model(const PipelineAnswer& answer, const PipelineSolveInput& input,
                              const SimulateCliOptions& options) {
  const PipelineOutcome& outcome = answer.outcome;
  StepModel step;
  step.micro_batches = answer.setup.micro_batches;
  step.schedule = answer.schedule.kind == ScheduleKind::GPipe       ? SimSchedule::GPipe
                  : answer.schedule.kind == ScheduleKind::Interleaved ? SimSchedule::Interleaved
                                                                      : SimSchedule::OneFOneB;
  step.overlap = !options.no_overlap;
  step.bucket_words = bucket_words(options, answer.setup);
  step.unit = outcome.stages[0].solve->outcome.tables.unit;
  for (const PipelineStage& stage : outcome.stages) step.stages.push_back(simulated_pipeline_stage(answer, stage, input));
  chunk_sends(step, answer, *input.make_model(weighted(answer.setup, 1, 0.0), input.devices));
  return step;
}

namespace {

// The best pipeline as the simulator's step and its report.
int simulate_pipeline(const PipelineAnswer& answer, const PipelineSolveInput& input, const SimulateCliOptions& options,
                      std::ostream& out) {
  const PipelineOutcome& outcome = answer.outcome;
  const StepModel step = pipeline_step_model(answer, input, options);
  const std::string title = answer.graph.name + " on " + std::to_string(input.devices) + " devices in " +
                            std::to_string(outcome.stages.size()) + " pipeline stages (" + schedule_name(answer.schedule) + ")";
  return report_simulation(step, outcome.step, "the pipeline's formula (docs/pipeline.md)", title, options, out);
}

}  // namespace

namespace {

// "465 device splits in all", and how many of them the bounds ruled out unsearched.
std::string splits_searched_words(const PipelineAnswer& answer) {
  std::string words = format_seconds(answer.split_count) + " device splits in all";
  const double ruled_out = answer.split_count - static_cast<double>(answer.splits_listed);
  if (answer.splits_listed == 0 || ruled_out <= 0) return words;
  return words + " (" + format_seconds(ruled_out) + " ruled out by their layers' least costs" +
         (answer.splits_left_out ? ", or left out past " + std::to_string(kSplitsPerCount) +
                                       " of a stage count, their least bound kept in the lower bound"
                                 : std::string()) +
         ")";
}

}  // namespace

int run_pipeline_solve(const PipelineCliOptions& o, const PipelineSolveInput& input) {
  PipelineAnswer answer;
  {
    ProgressLine progress;  // on a terminal, cleared before anything is printed
    PipelineSolveInput watched = input;
    if (progress.active()) {
      watched.request.solve.dp.progress = [&progress](const DpProgress& done) { progress.update(done); };
      watched.request.on_phase = [](const char* phase) { set_progress_phase(phase); };
    }
    answer = best_pipeline(o, watched);
  }
  if (input.simulate && input.simulate->on) return simulate_pipeline(answer, input, *input.simulate, std::cout);
  std::ostringstream simulated;  // solve --simulate: said after the table
  if (input.simulate && input.simulate->after_solve) simulate_pipeline(answer, input, *input.simulate, simulated);
  const PipelineSchedule& schedule = answer.schedule;
  const std::vector<int64_t>& stage_devices = answer.stage_devices;
  const std::vector<int>& counts = answer.stage_counts;
  const double seconds = answer.seconds;
  const size_t answer_refused = answer.refused;
  const std::string split_words = splits_searched_words(answer);
  std::optional<PipelineBest> best =
      PipelineBest{std::move(answer.outcome), std::move(answer.graph), answer.setup, answer.micro_batch_size};
  SearchCounts searched;
  searched.tried = answer.tried, searched.fitted = answer.fitted, searched.bounded_out = answer.bounded_out;
  searched.stage_solves = answer.stage_solves, searched.ranges = answer.ranges;
  searched.out_of_time = answer.out_of_time;
  searched.lower_bound = best->outcome.lower_bound;
  const std::string unit = best->outcome.stages[0].solve->outcome.tables.unit;
  StrategyDocument document = pipeline_document(best->graph, best->outcome, best->setup, best->micro_batch_size,
                                                schedule, input.devices, input.request.cap);
  std::string plan_words;
  if (input.request.place)
    attach_plan(document, *best, pipeline_request(input, schedule, stage_devices, best->setup,
                                                  static_cast<int>(best->outcome.stages.size())),
                unit, plan_words);
  const std::string text = write_strategy(document);
  if (!input.out.empty()) write_text_file(input.out, text);
  if (input.json) std::cout << text;
  std::ostream& out = input.json ? std::cerr : std::cout;
  if (!input.json) print_stages(out, *best, schedule, input.devices, searched.lower_bound, unit, input.given_path);
  if (input.given && input.given->total_cost &&
      std::fabs(*input.given->total_cost - best->outcome.step) > 1e-9 * std::fabs(best->outcome.step))
    out << "note: the file records total_cost " << format_total(*input.given->total_cost, unit)
        << " (another machine, cost model or edit)\n";
  out << plan_words;
  if (input.given) {
    out << "priced the file's " << best->outcome.stages.size() << " stages in " << format_seconds(seconds) << " s\n";
    return 0;
  }
  out << "searched " << searched.tried << " pipelines of " << counts.size() << " stage counts x "
      << (o.stage_devices == "auto" ? split_words + " x " : std::string())
      << input.micro_batch_counts.size() << " micro-batch counts (" << searched.fitted << " fit"
      << (searched.bounded_out ? ", " + std::to_string(searched.bounded_out) + " bounded out: a bound reached the best step found"
                               : std::string())
      << (answer_refused ? ", " + std::to_string(answer_refused) + " past the DP's limits, their bounds kept" : std::string())
      << (searched.out_of_time ? ", " + std::to_string(searched.out_of_time) + " not searched: the time limit had passed, their bounds kept"
                               : std::string())
      << "): " << searched.stage_solves << " distinct stages solved for " << searched.ranges << " stage ranges in "
      << format_seconds(seconds) << " s\n";
  out << simulated.str();
  return 0;
}

}  // namespace pase
