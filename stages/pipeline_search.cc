#include "stages/pipeline_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <cstdlib>

#include "base/checked_math.h"
#include "base/error.h"
#include "costmodel/cost_tables.h"
#include "dp/block_table_cache.h"
#include "graphs/layer_weights.h"
#include "graphs/stage_graph.h"
#include "graphs/vertex_model.h"
#include "plans/mesh.h"
#include "plans/mesh_pricing.h"
#include "plans/mesh_search.h"
#include "solve/solve_request.h"
#include "stages/interleaved_chunk_search.h"
#include "stages/interleaved_search.h"
#include "stages/stage_cuts.h"
#include "stages/stage_key.h"
#include "stages/stage_solve.h"

#include <tbb/parallel_for.h>

namespace pase {
namespace {

// The key of the stage over cut positions [i, j): its segments' ids (the
// vertices between consecutive cuts; only a cut's boundary output crosses
// into the next segment, read there alike whatever precedes) and the
// weights read again across segments inside it.
class RangeKeys {
 public:
  RangeKeys(const Graph& graph, const std::vector<int>& cuts) : cuts_(cuts) {
    const StageKeys keys(graph);
    std::map<std::vector<int64_t>, int64_t> ids;
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      segment_.push_back(ids.try_emplace(keys.key(cuts[i], cuts[i + 1]), static_cast<int64_t>(ids.size())).first->second);
    for (auto [reader, before] : keys.repeated_reads()) {
      const auto segment_of = [&](int v) { return std::upper_bound(cuts.begin(), cuts.end(), v) - cuts.begin(); };
      if (segment_of(reader) != segment_of(before)) repeated_.push_back({reader, before});
    }
  }
  [[nodiscard]] std::vector<int64_t> key(int i, int j) const {
    std::vector<int64_t> key(segment_.begin() + i, segment_.begin() + j);
    key.push_back(-1);
    for (auto [reader, before] : repeated_)
      if (before >= cuts_[i] && reader < cuts_[j]) key.insert(key.end(), {reader - cuts_[i], before - cuts_[i]});
    return key;
  }

 private:
  const std::vector<int>& cuts_;
  std::vector<int64_t> segment_;
  std::vector<std::pair<int, int>> repeated_;
};

using SolveKey = std::tuple<std::vector<int64_t>, int64_t, int64_t, bool>;  // range, devices, micro-batches held, under the cap

}  // namespace

namespace {

// Whether every stage has as many devices as the first.
bool all_equal(const std::vector<int64_t>& devices) {
  return std::adjacent_find(devices.begin(), devices.end(), std::not_equal_to<>()) == devices.end();
}

}  // namespace

double pipeline_least_step(const Graph& graph, const PipelineRequest& request) {
  const std::vector<int64_t> devices = devices_of_stages(request);
  const double m = static_cast<double>(request.stage.memory.micro_batches), s = static_cast<double>(devices.size());
  // With every stage on n devices and the step sum t + (M - 1) max t + max w:
  // max t >= sum t / S and max w >= sum w / S, and t, w are at least the sums
  // of their layers' (edges, sends and the tied all-reduce cost nothing
  // less), so step >= sum over layers of ((S + M - 1) t_l + w_l) / S, each
  // layer at its least; a layer's cost under a setup of S + M - 1
  // micro-batches with the step's terms whole is that bracket. Every stage
  // holds its layers' bytes (at least one micro-batch's activations) within
  // the cap, so the layers' bytes add up to at most S caps: the bound is the
  // least such sum within that (memorycap/separable_bound.h). Else: each
  // layer at its least time on the most devices a stage has (no stage runs
  // it faster), and sum t + (M - 1) max t >= L + (M - 1) L / S.
  const bool with_work = all_equal(devices) && request.schedule.kind != ScheduleKind::Interleaved;
  SolveRequest ask = request.stage;
  ask.memory = with_work ? weighted(request.stage.memory, request.stage.memory.micro_batches + static_cast<int64_t>(devices.size()) - 1, 1.0)
                         : weighted(request.stage.memory, 1, 0.0);
  ask.memory.activations_in_flight = 1;
  ask.cap = with_work && ask.cap ? std::optional<uint64_t>(saturating_mul(*ask.cap, devices.size())) : std::nullopt;
  const int64_t largest = *std::max_element(devices.begin(), devices.end());
  const std::unique_ptr<CostModel> model = request.make_model(ask.memory, largest);
  ask.mesh = stage_mesh(request, *model, largest);  // on its mesh's layouts where the stages are priced so
  ask.search_layouts = ask.mesh.has_value();
  const double least = least_cost_bound(graph, *model, ask);
  if (with_work) return least / s;
  // Interleaved: M max t + (sum t - max t) / V grows with max t (M >= 1 > 1 / V),
  // so with max t >= sum t / S >= L / S it is at least L (M / S + (1 - 1 / S) / V).
  if (request.schedule.kind == ScheduleKind::Interleaved)
    return least * (m / s + (1 - 1 / s) / static_cast<double>(request.schedule.chunks));
  return least + (m - 1) * least / s;
}

double pipeline_block_bound(const Graph& graph, const PipelineRequest& request) {
  const std::vector<int64_t> devices = devices_of_stages(request);
  // Under a cap a stage's M t + w is at least its Lagrangian bound (with one
  // micro-batch's activations: every stage holds at least that); one stage
  // is the whole graph. Where the stages are priced on their mesh's layouts,
  // so is every part here (the bounds are over the strategies the stages'
  // solves choose among, priced as they price them).
  SolveRequest capped = request.stage;
  capped.memory.activations_in_flight = 1;
  capped.place = false;
  capped.priced.reset();
  capped.priced_layouts.clear();
  const int64_t n = devices.front();
  const std::unique_ptr<CostModel> step_model = request.make_model(capped.memory, n);
  const std::optional<Mesh> mesh = stage_mesh(request, *step_model, n);
  capped.mesh = mesh;
  capped.search_layouts = mesh.has_value();
  if (devices.size() == 1) return request.stage.cap ? lagrangian_cost_bound(graph, *step_model, capped) : 0;
  const StageKeys keys(graph);
  const BlockRun run = block_run(graph, keys);
  if (!all_equal(devices) || request.schedule.kind == ScheduleKind::Interleaved || request.cuts != StageCuts::Blocks ||
      run.blocks == 0)
    return 0;
  // Some stage j holds r >= q = ceil(B / S) whole blocks (and maybe more
  // layers), and step >= sum over k != j of t_k + (M t_j + w_j). Its
  // M t_j + w_j is at least the optimum V(r) of r blocks alone; the others
  // hold the other B - r blocks, each taking at least T, one block's least
  // time (its DP), and the layers outside the run at least their least
  // times. Adding a block to j adds at least its least M t + w >= M T >= T,
  // and a layer outside the run its least M t + w >= its least time, so the
  // sum at r = q and nothing else in j holds for every partition.
  const int64_t q = (static_cast<int64_t>(run.blocks) + static_cast<int64_t>(devices.size()) - 1) /
                    static_cast<int64_t>(devices.size());
  const std::vector<int> cuts = stage_cut_vertices(graph, keys, StageCuts::Blocks);
  const Graph blocks = stage_graph(graph, cuts[run.first], cuts[run.first + static_cast<size_t>(q)]);
  SolveRequest ask = request.stage;
  ask.cap.reset();
  ask.place = false;
  ask.mesh = mesh;
  ask.search_layouts = mesh.has_value();
  ask.priced.reset();
  ask.priced_layouts.clear();
  auto optimum = [&](const Graph& part, const CostModel& model) {
    const SolveOutcome own = solve_request(part, model, ask);
    return own.bounded ? own.bounded->lower_bound : own.solution.cost;
  };
  const double step_of_blocks = request.stage.cap ? lagrangian_cost_bound(blocks, *request.make_model(ask.memory, n), capped)
                                                  : optimum(blocks, *request.make_model(ask.memory, n));
  ask.memory = weighted(request.stage.memory, 1, 0.0);
  const std::unique_ptr<CostModel> time_model = request.make_model(ask.memory, n);
  const Graph block = stage_graph(graph, cuts[run.first], cuts[run.first + 1]);
  const double block_time = optimum(block, *time_model);
  const double outside = least_cost_bound(graph, *time_model, ask) -
                         static_cast<double>(run.blocks) * least_cost_bound(block, *time_model, ask);
  // Sends: S - 1 boundaries, each paid by the stage on either side, and
  // stage j pays its own M times; each at least the cheapest cut's.
  double send = 0;
  if (devices.size() > 1) {
    const std::unique_ptr<CostModel> link = request.make_model(weighted(request.stage.memory, 1, 0.0), request.devices);
    send = std::numeric_limits<double>::infinity();
    for (size_t c = 1; c + 1 < cuts.size(); ++c)
      for (bool across : {false, true})
        send = std::min(send, send_seconds(crossing_elements(graph, cuts[c]), n, n, across, *link));
  }
  const double sends = (2.0 * static_cast<double>(devices.size() - 1) +
                        static_cast<double>(request.stage.memory.micro_batches - 1)) * send;
  return step_of_blocks + static_cast<double>(static_cast<int64_t>(run.blocks) - q) * block_time + std::max(0.0, outside) +
         sends;
}

namespace {

// One pipeline search: S stages of given devices over the cut positions.
// Every stage the outer DP may ask for is solved once per key, in parallel:
// first without the cap; under a cap then those whose optimum does not fit
// with their micro-batches in flight, by the capped search.
class PipelineSearch {
 public:
  PipelineSearch(const Graph& graph, const PipelineRequest& request)
      : graph_(graph),
        request_(request),
        devices_(devices_of_stages(request)),
        s_(static_cast<int>(devices_.size())),
        starts_(given()                         ? request.given_starts
                : !request.fixed_starts.empty() ? request.fixed_starts
                                                : stage_cut_vertices(graph, StageKeys(graph),
                                                                     request.equal_blocks ? StageCuts::Blocks : request.cuts)),
        p_(static_cast<int>(starts_.size()) - 1),
        setup_(request.stage.memory),
        m_(static_cast<double>(setup_.micro_batches)),
        keys_(graph, starts_),
        pricings_(graph, request) {
    if (p_ < s_)
      throw OptionError({"pipeline_stages", "the pipeline stages", "",
                         ": " + std::to_string(s_) + " stages, but the graph has " + std::to_string(p_) +
                             " places a stage may begin (" +
                             (request.cuts == StageCuts::Blocks ? "at each block" : "after each block boundary") + ")"});
    first_.assign(static_cast<size_t>(s_), 0);
    for (int k = 1; k < s_; ++k) first_[k] = first_[k - 1] + devices_[k - 1];
    link_model_ = request.make_model(weighted(setup_, 1, 0.0), request.devices);
    for (int cut : starts_) crossing_.push_back(crossing_elements(graph, cut));
    tied_ = priced_tied_reads(graph, pricings_.repeated_reads(), devices_, request.devices, *link_model_);  // tied_work
    if (request.equal_blocks) fixed_ = equal_block_bounds(graph, s_);
    if (given() || !request.fixed_starts.empty())
      for (int k = 0; k <= s_; ++k) fixed_.push_back(k);  // the given starts are the only cut positions
    for (int k = 0; k < s_; ++k)
      for (int i = k == 0 ? 0 : k; i + (s_ - k) <= p_ && (k > 0 || i == 0); ++i)
        for (int j = k == s_ - 1 ? p_ : i + 1; j + (s_ - k - 1) <= p_; ++j)
          if (allowed(k, i, j)) ranges_.push_back({k, i, j});
  }

  PipelineOutcome run() {
    price();
    drop_by_least_costs();
    solve_without_cap();
    if (request_.stage.cap) solve_under_cap(std::min(fitting_step(), request_.incumbent));
    PipelineOutcome outcome;
    outcome.positions = p_;
    const PartitionAnswer answer = best_partition({p_, s_, setup_.micro_batches, [&](int k, int i, int j) {
                                                     ++outcome.ranges;
                                                     return value(k, i, j);
                                                   }});
    outcome.stage_solves = solved_;
    outcome.cut = cut_;
    if (!answer.bounds.empty()) read_back(answer, outcome);
    return outcome;
  }

 private:
  using Job = std::pair<SolveKey, std::array<int, 3>>;  // a solve, and a range (k, i, j) it answers

  [[nodiscard]] bool allowed(int k, int i, int j) const {
    return (fixed_.empty() || (fixed_[k] == i && fixed_[k + 1] == j)) && (dropped_.empty() || !dropped_[cell(k, i, j)]);
  }
  [[nodiscard]] size_t cell(int k, int i, int j) const {
    const auto p1 = static_cast<size_t>(p_ + 1);
    return (static_cast<size_t>(k) * p1 + static_cast<size_t>(i)) * p1 + static_cast<size_t>(j);
  }
  // Whether the boundary after stage k joins devices of different nodes.
  [[nodiscard]] bool across(int k) const {
    return devices_across_nodes(first_[k], devices_[k], first_[k + 1], devices_[k + 1], link_model_->devices_per_node());
  }
  [[nodiscard]] double sends(int k, int i, int j) const {
    double seconds = 0;
    if (k + 1 < s_) seconds += send_seconds(crossing_[j], devices_[k], devices_[k + 1], across(k), *link_model_);
    if (k > 0) seconds += send_seconds(crossing_[i], devices_[k - 1], devices_[k], across(k - 1), *link_model_);
    return seconds;
  }
  // A weight two stages read (GPT's tied token table) is a copy in each: its
  // gradients are all-reduced between the two once per step, as Megatron-LM
  // does between its first and last stage. Stage k over [i, j) pays it for
  // each such weight it reads on one side only: the weight over the fewest
  // devices a stage has, each pair exchanging its piece over the link the job's
  // ends are joined by (the two readers: the first stage and the last).
  [[nodiscard]] double tied_work(int i, int j) const {
    double seconds = 0;
    for (const TiedRead& read : tied_)
      if ((read.reader >= starts_[i] && read.reader < starts_[j]) != (read.before >= starts_[i] && read.before < starts_[j]))
        seconds += read.seconds;
    return seconds;
  }
  [[nodiscard]] int64_t in_flight(int k) const {
    return micro_batches_in_flight(k, s_, setup_.micro_batches, request_.schedule);
  }
  [[nodiscard]] SolveKey key_of(int k, int i, int j, int64_t held, bool under_cap) const {
    std::vector<int64_t> range = keys_.key(i, j);
    if (given()) range.push_back(-1 - k);  // each stage its own strategy, alike or not
    return {std::move(range), devices_[k], held, under_cap};
  }
  [[nodiscard]] bool given() const { return request_.given_stages != nullptr; }
  // The request of stage k's solve: with a given pipeline, its own strategy.
  [[nodiscard]] PipelineRequest stage_request(const PipelineRequest& request, int k) const {
    PipelineRequest own = request;
    if (given()) own.stage.given = &request_.given_stages->at(static_cast<size_t>(k));
    return own;
  }
  [[nodiscard]] const StageSolve& base(int k, int i, int j) const { return *solves_.at(key_of(k, i, j, 1, false)); }
  // Which solve answers stage k over [i, j): the one without the cap where its optimum fits.
  [[nodiscard]] SolveKey answer_key(int k, int i, int j) const {
    SolveKey key = key_of(k, i, j, 1, false);
    if (!request_.stage.cap) return key;
    const PlanMemory& one = solves_.at(key)->outcome.bytes;
    const uint64_t held = static_cast<uint64_t>(in_flight(k));
    const bool fits = one.activations <= (UINT64_MAX - one.weights) / held &&
                      one.weights + held * one.activations <= *request_.stage.cap;
    return fits ? key : key_of(k, i, j, in_flight(k), true);
  }
  [[nodiscard]] StageValue with_sends(const StageSolve& stage, int k, int i, int j) const {
    const double send = sends(k, i, j), tied = tied_work(i, j);
    return {stage.t + send, stage.w + tied, stage.step_bound + m_ * send + tied, stage.time_bound + send};
  }

  // The whole graph to be priced once per device count and setup (the
  // stages slice it), when a stage is first solved (priced()): a search whose
  // every range is shared or ruled out prices nothing.
  void price() {
    for (int64_t n : devices_) {
      pricings_.add(n, setup_);
      if (s_ > 1) pricings_.add(n, weighted(setup_, 1, 0.0));  // each stage's least time (solve_stage's bound)
    }
    shared_ = request_;
    if (!shared_.stage.solve.dp.block_tables) shared_.stage.solve.dp.block_tables = std::make_shared<BlockTableCache>();
  }

  // The pricings, priced on first use (never from inside a parallel loop).
  [[nodiscard]] const Pricings& priced() const {
    pricings_.price_all();
    return pricings_;
  }

  template <typename Solve>
  void solve_all(const std::vector<Job>& jobs, const Solve& solve) {
    if (!jobs.empty()) (void)priced();
    std::vector<std::shared_ptr<const StageSolve>> solved(jobs.size());
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t n) {
      const auto& [key, at] = jobs[n];
      const StageSite site{{{starts_[at[1]], starts_[at[2]]}}, std::get<1>(key), &pricings_};
      solved[n] = std::make_shared<const StageSolve>(solve(stage_graph(graph_, site.ranges), site, key, at));
    });
    for (size_t n = 0; n < jobs.size(); ++n) solves_[jobs[n].first] = solved[n];
    solved_ += jobs.size();
  }

  void solve_without_cap() {
    std::vector<Job> jobs;
    for (const auto& [k, i, j] : ranges_)
      if (SolveKey key = key_of(k, i, j, 1, false); solves_.emplace(key, nullptr).second) jobs.push_back({std::move(key), {k, i, j}});
    take_shared(jobs);
    solve_all(jobs, [&](const Graph& stage, const StageSite& site, const SolveKey&, const std::array<int, 3>& at) {
      return solve_base(stage, site, at[0]);
    });
    share(jobs);
  }

  // Stage k without the cap (its own strategy where the pipeline is given).
  [[nodiscard]] StageSolve solve_base(const Graph& stage, const StageSite& site, int k) const {
    PipelineRequest uncapped = stage_request(shared_, k);
    uncapped.stage.cap.reset();
    return solve_stage(stage, site, 1, s_, uncapped);
  }
  // Stage k over [i, j) by the capped search holding `held` micro-batches,
  // told `cutoff` and `first_price` (CapOptions), which it keeps so that it
  // can be solved again alike; `on_the_clock` false: no time limit stops it.
  [[nodiscard]] StageSolve solve_capped(const Graph& stage, const StageSite& site, int64_t held, const std::array<int, 3>& at,
                                        double cutoff, double first_price, bool on_the_clock) const {
    PipelineRequest told = shared_;
    told.stage.cap_search.cutoff = cutoff, told.stage.cap_search.first_price = first_price;
    if (!on_the_clock) {
      told.stage.cap_search.max_seconds = 1e18;
      told.stage.cap_search.deadline = std::chrono::steady_clock::time_point::max();
    }
    StageSolve solved = solve_stage(stage, site, held, s_, told, &base(at[0], at[1], at[2]));
    solved.told_cutoff = cutoff, solved.told_first_price = first_price;
    return solved;
  }

  // The solves another search ran: taken, and left out of `jobs`.
  void take_shared(std::vector<Job>& jobs) {
    if (!shared()) return;
    const auto taken = std::remove_if(jobs.begin(), jobs.end(), [&](const Job& job) {
      const auto found = shared()->solves.find(shared_key(job.first));
      if (found == shared()->solves.end()) return false;
      solves_[job.first] = found->second;
      return true;
    });
    jobs.erase(taken, jobs.end());
  }
  // The solves of `jobs` that ran to their end (all but capped searches
  // stopped at their cutoff or the clock), for the other searches.
  void share(const std::vector<Job>& jobs) const {
    if (!shared()) return;
    for (const Job& job : jobs) {
      const StageSolve& solve = *solves_.at(job.first);
      if (ran_to_end(solve)) shared()->solves.emplace(shared_key(job.first), without_tables(solve));
    }
  }

  // Whether the search is for its own optimum (not given stages, fixed starts or Megatron-LM's split).
  [[nodiscard]] bool own_optimum() const {
    return !given() && request_.fixed_starts.empty() && !request_.equal_blocks &&
           request_.stage.source == StrategySource::Optimum;
  }
  // The searches' shared solves, where this one may use them.
  [[nodiscard]] SharedStageSolves* shared() const { return own_optimum() ? request_.shared_solves.get() : nullptr; }

  // Against an incumbent, before any stage is solved: each range's bounds
  // from its vertices' least costs alone on its devices (no edges, no cap,
  // so below what its solve gives; its sends and tied work exact), and a
  // range no partition faster than the incumbent holds (HoldingBounds) is
  // dropped unsolved. Where the solver chooses each layer's ZeRO stage or
  // recomputation, each vertex's least over every technique it may take.
  void drop_by_least_costs() {
    const double incumbent = request_.incumbent;
    if (!std::isfinite(incumbent) || !own_optimum() || s_ == 1) return;
    std::map<int64_t, std::pair<std::vector<double>, std::vector<double>>> least;  // devices: M t + w, t
    for (int64_t n : devices_)
      if (!least.count(n)) least[n] = {least_cost_prefix(n, setup_), least_cost_prefix(n, weighted(setup_, 1, 0.0))};
    const HoldingBounds holding({p_, s_, setup_.micro_batches, [&](int k, int i, int j) -> std::optional<StageValue> {
      if (!allowed(k, i, j)) return std::nullopt;
      const auto& [step, time] = least.at(devices_[k]);
      const auto begin = static_cast<size_t>(starts_[i]), end = static_cast<size_t>(starts_[j]);
      const double send = sends(k, i, j);
      StageValue stage;
      stage.time_bound = stage.t = time[end] - time[begin] + send;
      stage.step_bound = step[end] - step[begin] + m_ * send + tied_work(i, j);
      return stage;
    }});
    dropped_.assign(static_cast<size_t>(s_) * static_cast<size_t>(p_ + 1) * static_cast<size_t>(p_ + 1), 0);
    const auto kept = std::remove_if(ranges_.begin(), ranges_.end(), [&](const std::array<int, 3>& r) {
      return holding.at(r[0], r[1], r[2]) >= incumbent && (dropped_[cell(r[0], r[1], r[2])] = 1);
    });
    cut_ = cut_ || kept != ranges_.end();
    ranges_.erase(kept, ranges_.end());
  }
  // Pricings::least_cost_prefix, kept for the other searches (it needs the pricing).
  [[nodiscard]] std::vector<double> least_cost_prefix(int64_t n, const TrainingSetup& setup) const {
    const auto price = [&] { return priced().least_cost_prefix(n, setup); };
    return shared() ? shared()->least_prefix(n, setup, price) : price();
  }
  [[nodiscard]] SharedStageSolves::Key shared_key(const SolveKey& key) const {
    return {std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), s_ > 1};
  }

  // The step of the best partition whose stages' optima fit as they are.
  [[nodiscard]] double fitting_step() const {
    const PartitionAnswer fitting = best_partition({p_, s_, setup_.micro_batches, [&](int k, int i, int j) -> std::optional<StageValue> {
      if (!allowed(k, i, j) || std::get<3>(answer_key(k, i, j))) return std::nullopt;
      return with_sends(base(k, i, j), k, i, j);
    }});
    return fitting.bounds.empty() ? std::numeric_limits<double>::infinity() : fitting.step;
  }

  // The capped search for each stage whose optimum does not fit, by branch
  // and bound: a stage's optimum without the cap, M t + w with its sends, is
  // at most the step of any partition that holds it (step >= M t_k + w_k), so
  // the solves run least of it first, in batches, and after each the best
  // partition of the stages known to fit becomes the incumbent; a stage whose
  // bound reaches the incumbent is left out (no partition with it steps
  // faster; the lower bound, min(bound, step), still holds).
  void solve_under_cap(double incumbent) {
    if (!bound_under_cap(incumbent)) {
      cut_ = true;
      return;
    }
    std::map<SolveKey, std::pair<double, std::array<int, 3>>> wanted;  // each solve: its least bound, a range
    const HoldingBounds holding = holding_bounds(incumbent);
    for (const auto& [k, i, j] : ranges_) {
      const double least = least_step(k, i, j);
      if (least >= incumbent || holding.at(k, i, j) >= incumbent) {
        cut_ = cut_ || (std::get<3>(answer_key(k, i, j)) && std::isfinite(least));  // infinite: nothing fits
        continue;
      }
      SolveKey key = answer_key(k, i, j);
      if (solves_.count(key)) continue;
      auto [it, fresh] = wanted.try_emplace(std::move(key), least, std::array<int, 3>{k, i, j});
      if (!fresh && least < it->second.first) it->second = {least, {k, i, j}};
    }
    std::vector<std::pair<double, Job>> order;
    for (auto& [key, found] : wanted) order.push_back({found.first, {key, found.second}});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    // First the stages of the partition whose bound is least (an incumbent
    // early), then the rest least bound first in doubling batches.
    std::vector<Job> jobs = least_bound_partition(incumbent);
    size_t next = 0, batch = 4;
    while (true) {
      const bool fill = jobs.empty();  // not the first partition's stages
      const HoldingBounds now = fill ? holding_bounds(incumbent) : HoldingBounds(PartitionProblem{});
      for (; fill && next < order.size() && jobs.size() < batch && order[next].first < incumbent; ++next) {
        const auto& [key, at] = order[next].second;
        if (solves_.count(key)) continue;
        if (least_step(at[0], at[1], at[2]) < incumbent && now.at(at[0], at[1], at[2]) < incumbent)
          jobs.push_back(order[next].second);
        else cut_ = true;  // its Lagrangian bound (bound_under_cap), or every partition's holding it, reaches the incumbent
      }
      if (jobs.empty()) break;
      take_shared(jobs);
      for (const Job& job : jobs) solves_.emplace(job.first, nullptr);
      // Each capped search is told what its M t + w must stay below for a
      // partition holding it to beat the incumbent (its sends taken off): once
      // its bound reaches that it stops, and the stage is ruled out.
      solve_all(jobs, [&](const Graph& stage, const StageSite& site, const SolveKey& key, const std::array<int, 3>& at) {
        const double cutoff = std::isfinite(incumbent) ? incumbent - m_ * sends(at[0], at[1], at[2])
                                                       : shared_.stage.cap_search.cutoff;
        const auto priced = lagrangian_.find(key);  // where its bound was read
        return solve_capped(stage, site, std::get<2>(key), at, cutoff,
                            priced != lagrangian_.end() ? priced->second.price : shared_.stage.cap_search.first_price, true);
      });
      share(jobs);
      for (const Job& job : jobs) cut_ = cut_ || solves_.at(job.first)->cut_off;
      jobs.clear();
      batch *= 2;
      const PartitionAnswer known = best_partition({p_, s_, setup_.micro_batches, [&](int k, int i, int j) { return value(k, i, j); }});
      if (!known.bounds.empty()) incumbent = std::min(incumbent, known.step);
      if (!bound_under_cap(incumbent)) {
        cut_ = cut_ || std::any_of(order.begin() + static_cast<std::ptrdiff_t>(next), order.end(),
                                   [&](const auto& left) { return !solves_.count(left.second.first); });
        return;
      }
    }
    cut_ = cut_ || next < order.size();
  }

  // The stages under the cap not yet solved of the partition whose lower
  // bound (the outer DP's, over each stage's bounds) is least.
  [[nodiscard]] std::vector<Job> least_bound_partition(double incumbent) const {
    if (request_.stage.source != StrategySource::Optimum) return {};
    // With one micro-batch, t the time bound and w the step bound less it, the
    // outer DP's step is its lower bound: sum t + max (step_bound - t).
    const PartitionAnswer least = best_partition({p_, s_, 1, [&](int k, int i, int j) -> std::optional<StageValue> {
      std::optional<StageValue> stage = bound_value(k, i, j, incumbent);
      if (stage) stage->t = stage->time_bound, stage->w = std::max(0.0, stage->step_bound - stage->time_bound);
      return stage;
    }});
    std::vector<Job> jobs;
    for (int k = 0; k + 1 < static_cast<int>(least.bounds.size()); ++k) {
      const int i = least.bounds[k], j = least.bounds[k + 1];
      SolveKey key = answer_key(k, i, j);
      if (std::get<3>(key) && !solves_.count(key) &&
          std::none_of(jobs.begin(), jobs.end(), [&](const Job& job) { return job.first == key; }))
        jobs.push_back({std::move(key), {k, i, j}});
    }
    return jobs;
  }

  // Stage k over [i, j)'s M t + w with its sends is at least its optimum
  // without the cap, and under the cap at least its Lagrangian bound.
  [[nodiscard]] double least_step(int k, int i, int j) const {
    double least = base(k, i, j).least_step;
    if (const auto priced = lagrangian_.find(answer_key(k, i, j)); priced != lagrangian_.end())
      least = std::max(least, priced->second.bound);
    return least + m_ * sends(k, i, j);
  }

  // Against an incumbent (a searched strategy's bounds only, and only for
  // stages that may beat it): the Lagrangian bound (solve/solve_request.h)
  // of each stage the capped search would be asked for, in parallel, one DP
  // each at its price rounded so that ranges alike in size price their
  // blocks alike and share their tables through the block cache; then
  // whether some partition may still beat the incumbent.
  [[nodiscard]] bool bound_under_cap(double incumbent) {
    if (request_.stage.source != StrategySource::Optimum || !std::isfinite(incumbent)) return true;
    std::vector<Job> jobs;
    std::set<SolveKey> listed;
    const HoldingBounds holding = holding_bounds(incumbent);
    for (const auto& [k, i, j] : ranges_) {
      SolveKey key = answer_key(k, i, j);
      if (!std::get<3>(key) || solves_.count(key) || lagrangian_.count(key) ||
          base(k, i, j).least_step + m_ * sends(k, i, j) >= incumbent || holding.at(k, i, j) >= incumbent ||
          !listed.insert(key).second)
        continue;
      jobs.push_back({std::move(key), {k, i, j}});
    }
    std::vector<PricedBound> bounds(jobs.size());
    if (!jobs.empty()) (void)priced();
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t n) {
      const auto& [key, at] = jobs[n];
      SolveRequest ask = shared_.stage;
      ask.memory.activations_in_flight = std::get<2>(key);
      ask.place = false;
      ask.mesh.reset();
      ask.search_layouts = false;
      pricings_.slice_into(ask, devices_[at[0]], ask.memory, {{starts_[at[1]], starts_[at[2]]}});
      const std::unique_ptr<CostModel> model = request_.make_model(ask.memory, devices_[at[0]]);
      bounds[n] = lagrangian_bound(stage_graph(graph_, starts_[at[1]], starts_[at[2]]), *model, ask, true);
    });
    for (size_t n = 0; n < jobs.size(); ++n) lagrangian_[jobs[n].first] = bounds[n];
    return partitions_may_beat(incumbent);
  }

  // Per range, the least step of a partition holding it, over the stages'
  // bounds as they stand (bound_value).
  [[nodiscard]] HoldingBounds holding_bounds(double incumbent) const {
    return HoldingBounds({p_, s_, setup_.micro_batches, [&](int k, int i, int j) { return bound_value(k, i, j, incumbent); }});
  }

  // Whether some partition may step faster than the incumbent: the outer DP's
  // lower bound over the stages' bounds (those solved: their values; those
  // whose bound reaches the incumbent: left out, as no partition holding them
  // beats it).
  [[nodiscard]] bool partitions_may_beat(double incumbent) const {
    const PartitionAnswer bound = best_partition(
        {p_, s_, setup_.micro_batches, [&](int k, int i, int j) { return bound_value(k, i, j, incumbent); }});
    return !bound.bounds.empty() && bound.lower_bound < incumbent;
  }

  // Stage k over [i, j) for a lower bound: its value where it is solved (or
  // fits as it is), else its bounds; none where its bound reaches the
  // incumbent (no partition holding it beats that).
  [[nodiscard]] std::optional<StageValue> bound_value(int k, int i, int j, double incumbent) const {
    if (!allowed(k, i, j)) return std::nullopt;
    const SolveKey key = answer_key(k, i, j);
    if (!std::get<3>(key) || solves_.count(key)) return value(k, i, j);
    const double least = least_step(k, i, j);
    if (least >= incumbent) return std::nullopt;
    StageValue stage = with_sends(base(k, i, j), k, i, j);
    stage.step_bound = std::max(stage.step_bound, least + tied_work(i, j));
    stage.t = stage.time_bound;
    stage.w = std::max(0.0, stage.step_bound - m_ * stage.t);
    return stage;
  }

  [[nodiscard]] std::optional<StageValue> value(int k, int i, int j) const {
    if (!allowed(k, i, j)) return std::nullopt;
    const SolveKey key = answer_key(k, i, j);
    if (std::get<3>(key) && !solves_.count(key)) return std::nullopt;  // ruled out by the partition that fits
    const StageSolve& stage = *solves_.at(key);
    if (!stage.fits) return std::nullopt;
    return with_sends(stage, k, i, j);
  }

  // `solve`, solved again as it was (without the cap, or under it told what
  // it was told) where another search shared it without its tables.
  [[nodiscard]] std::shared_ptr<const StageSolve> with_tables(std::shared_ptr<const StageSolve> solve, int k, int i,
                                                              int j) const {
    if (!solve->tables_dropped) return solve;
    const StageSite site{{{starts_[i], starts_[j]}}, devices_[k], &priced()};
    const Graph stage = stage_graph(graph_, site.ranges);
    if (!std::get<3>(answer_key(k, i, j))) return std::make_shared<const StageSolve>(solve_base(stage, site, k));
    // It ran to its end once (shared only so): no clock stops it short now.
    return std::make_shared<const StageSolve>(
        solve_capped(stage, site, solve->in_flight, {k, i, j}, solve->told_cutoff, solve->told_first_price, false));
  }

  void read_back(const PartitionAnswer& answer, PipelineOutcome& outcome) const {
    outcome.step = answer.step;
    outcome.lower_bound =
        request_.equal_blocks || given() || !request_.fixed_starts.empty() ? std::nan("") : answer.lower_bound;
    for (int k = 0; k < s_; ++k) {
      const int i = answer.bounds[k], j = answer.bounds[k + 1];
      PipelineStage stage;
      stage.begin = starts_[i];
      stage.end = starts_[j];
      stage.devices = devices_[k];
      stage.first_device = first_[k];
      stage.in_flight = in_flight(k);
      stage.send_time = sends(k, i, j);
      stage.value = answer.stages[k];
      stage.solve = with_tables(solves_.at(answer_key(k, i, j)), k, i, j);
      stage.bytes = stage.solve->outcome.bytes;
      if (stage.solve->in_flight == 1) stage.bytes.activations *= static_cast<uint64_t>(stage.in_flight);
      outcome.stages.push_back(std::move(stage));
    }
    // One stage is the plain solve: its cost as the solver found it, to the last bit.
    if (s_ == 1) {
      outcome.step = outcome.stages[0].solve->step_cost;
      outcome.lower_bound = std::min(outcome.step, outcome.stages[0].solve->step_bound);
    }
  }

  const Graph& graph_;
  const PipelineRequest& request_;
  const std::vector<int64_t> devices_;
  const int s_;
  const std::vector<int> starts_;
  const int p_;
  const TrainingSetup setup_;
  const double m_;
  const RangeKeys keys_;
  mutable Pricings pricings_;  // priced()
  std::vector<int64_t> first_;
  std::vector<uint64_t> crossing_;  // per cut position: the activations that cross it (crossing_elements)
  std::vector<TiedRead> tied_;      // weights read again by a later vertex (tied_reads), priced
  std::unique_ptr<CostModel> link_model_;
  std::vector<int> fixed_;                  // equal_blocks: the stages' bounds
  std::vector<std::array<int, 3>> ranges_;  // (k, i, j) the outer DP may ask for
  PipelineRequest shared_;                  // the request with the block cache every stage's solve shares
  std::map<SolveKey, std::shared_ptr<const StageSolve>> solves_;
  std::map<SolveKey, PricedBound> lagrangian_;  // stages under the cap: their Lagrangian bounds (bound_under_cap)
  bool cut_ = false;  // a stage left unsearched under the cap by the incumbent
  std::vector<char> dropped_;  // per (k, i, j) (cell): ruled out by its vertices' least costs; empty: none
  size_t solved_ = 0;  // stage solves this search ran (not those another shared)
};

}  // namespace

PipelineOutcome solve_pipeline(const Graph& graph, const PipelineRequest& request) {
  if (request.schedule.kind == ScheduleKind::Interleaved)
    return request.search_chunks && request.given_chunks.empty() && !request.given_stages && !request.equal_blocks
               ? search_interleaved_chunks(graph, request)
               : solve_interleaved(graph, request);
  return PipelineSearch(graph, request).run();
}

}  // namespace pase
