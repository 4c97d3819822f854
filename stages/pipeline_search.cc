#include "stages/pipeline_search.h"

#include <algorithm>
#include <limits>
#include <array>
#include <cstdint>
#include <map>
#include <numeric>
#include <utility>

#include "base/error.h"
#include "costmodel/cost_tables.h"
#include "dp/block_table_cache.h"
#include "graphs/stage_graph.h"
#include "graphs/vertex_model.h"
#include "solve/solve_request.h"
#include "stages/stage_cuts.h"
#include "stages/stage_key.h"

#include <tbb/parallel_for.h>

namespace pase {
namespace {

// `setup` at `micro_batches` with the step's terms weighted by `step_weight`.
TrainingSetup weighted(TrainingSetup setup, int64_t micro_batches, double step_weight) {
  setup.micro_batches = micro_batches;
  setup.step_weight = step_weight;
  return setup;
}

// The whole graph priced once per device count and setup; each stage's
// tables are a slice of it (slice_cost_tables), so equal blocks share their
// arrays and the DP keeps their folded tables (DpOptions::block_tables).
class Pricings {
 public:
  Pricings(const Graph& graph, const PipelineRequest& request)
      : graph_(graph), request_(request), repeated_(StageKeys(graph).repeated_reads()) {}
  void add(int64_t devices, const TrainingSetup& setup) { tables_.try_emplace(key(devices, setup)); }
  void price_all() {
    std::vector<std::pair<const Key*, std::shared_ptr<const CostTables>*>> todo;
    for (auto& [k, tables] : tables_)
      if (!tables) todo.push_back({&k, &tables});
    tbb::parallel_for(size_t{0}, todo.size(), [&](size_t n) {
      const auto& [devices, setup] = std::pair{std::get<0>(*todo[n].first), setup_of(*todo[n].first)};
      SolveRequest ask = request_.stage;
      ask.memory = setup;
      *todo[n].second = std::make_shared<const CostTables>(
          price_graph(graph_, *request_.make_model(setup, devices), ask));
    });
  }
  /// The stage's tables: the whole graph's, sliced (slice_cost_tables). A
  /// weight the stage reads whose first reader lies before it (a tied
  /// embedding) is stepped by this stage's copy too, which the whole graph's
  /// pricing leaves to its first reader: that reader is priced again here
  /// as the stage's own pricing prices it.
  [[nodiscard]] std::shared_ptr<const CostTables> slice(int64_t devices, const TrainingSetup& setup, int begin,
                                                        int end) const {
    CostTables slice = slice_cost_tables(*tables_.at(key(devices, setup)), graph_, begin, end);
    std::unique_ptr<CostModel> model;
    for (auto [reader, before] : repeated_) {
      if (reader < begin || reader >= end || before >= begin) continue;
      if (!model) model = request_.make_model(setup, devices);
      const size_t v = static_cast<size_t>(reader - begin);
      auto first_reader = std::make_shared<const VertexModel>(build_vertex_model(graph_.vertices[static_cast<size_t>(reader)]));
      std::vector<double> costs(slice.configs[v].size());
      for (size_t c = 0; c < costs.size(); ++c) costs[c] = model->layer(*first_reader, slice.configs[v][c]);
      slice.models.set(v, std::move(first_reader));
      slice.objective.vertex_cost[v] = std::move(costs);
    }
    return std::make_shared<const CostTables>(std::move(slice));
  }

 private:
  using Key = std::tuple<int64_t, int64_t, double>;  // devices, micro-batches, step weight
  static Key key(int64_t devices, const TrainingSetup& setup) {
    return {devices, setup.micro_batches, setup.step_weight};
  }
  [[nodiscard]] TrainingSetup setup_of(const Key& k) const {
    return weighted(request_.stage.memory, std::get<1>(k), std::get<2>(k));
  }
  const Graph& graph_;
  const PipelineRequest& request_;
  std::map<Key, std::shared_ptr<const CostTables>> tables_;
  std::vector<std::pair<int, int>> repeated_;  // StageKeys::repeated_reads
};

// Where a stage of the graph lies, and what prices it.
struct StageSite {
  int begin = 0, end = 0;
  int64_t devices = 0;
  const Pricings* pricings = nullptr;
};

// The optimum of `stage` under `setup`, or its bound past the DP's limits;
// without a cap, so a bound over every strategy of the stage.
double least_cost(const Graph& stage, const StageSite& site, const TrainingSetup& setup, const PipelineRequest& request) {
  SolveRequest ask = request.stage;
  ask.memory = setup;
  ask.cap.reset();
  ask.place = false;
  ask.mesh.reset();
  ask.search_layouts = false;
  ask.priced = site.pricings->slice(site.devices, setup, site.begin, site.end);
  const std::unique_ptr<CostModel> model = request.make_model(setup, site.devices);
  const SolveOutcome outcome = solve_request(stage, *model, ask);
  return outcome.bounded ? outcome.bounded->lower_bound : outcome.solution.cost;
}

// The optimum of one stage on its devices holding `in_flight` micro-batches'
// activations: its strategy for M t + w, that strategy's t and w, and for a
// pipeline of `stages` stages the bounds of pipeline_partition.h:
// step_bound <= M t + w / S and time_bound <= t + w / S over every strategy
// of the stage. For the slowest stage b, sum t + (M - 1) t_b + max w >=
// sum over k != b of (t_k + w_k / S) + M t_b + w_b / S.
StageSolve solve_stage(const Graph& stage, const StageSite& site, int64_t in_flight, int stages,
                       const PipelineRequest& request, const StageSolve* base = nullptr) {
  StageSolve solved;
  solved.in_flight = in_flight;
  SolveRequest ask = request.stage;
  ask.memory.activations_in_flight = in_flight;
  ask.place = false;
  ask.mesh.reset();
  ask.search_layouts = false;
  ask.priced = site.pricings->slice(site.devices, ask.memory, site.begin, site.end);
  const std::unique_ptr<CostModel> model = request.make_model(ask.memory, site.devices);
  solved.outcome = solve_request(stage, *model, ask);
  solved.graph = solved.outcome.graph ? std::move(*solved.outcome.graph) : stage;
  solved.outcome.graph.reset();
  if (!solved.outcome.solved()) return solved;
  solved.fits = true;
  const int64_t m = ask.memory.micro_batches;
  solved.step_cost = solved.outcome.solution.cost;
  solved.step_bound = solved.outcome.capped    ? solved.outcome.capped->lower_bound
                      : solved.outcome.bounded ? solved.outcome.bounded->lower_bound
                                               : solved.step_cost;
  // Its time per micro-batch: the same strategy priced without the step's terms, at one micro-batch.
  const std::unique_ptr<CostModel> time_model = request.make_model(weighted(ask.memory, 1, 0.0), site.devices);
  solved.t = evaluate_strategy_direct(solved.graph, solved.outcome.tables, *time_model, solved.outcome.solution.choice);
  solved.w = std::max(0.0, solved.step_cost - static_cast<double>(m) * solved.t);
  solved.time_bound = solved.step_bound;  // one stage: its step is its own optimum
  if (base) {  // the same stage without the cap bounds it (bounds over every strategy)
    solved.time_bound = base->time_bound;
    solved.step_bound = stages > 1 ? base->step_bound : std::max(base->step_bound, solved.step_bound);
  } else if (stages > 1) {
    const double share = 1.0 / static_cast<double>(stages);
    solved.time_bound = least_cost(stage, site, weighted(request.stage.memory, 1, share), request);
    solved.step_bound = least_cost(stage, site, weighted(request.stage.memory, m, share), request);
  }
  return solved;
}

// Each stage's devices: as given, or N / S each.
std::vector<int64_t> devices_of_stages(const PipelineRequest& request) {
  if (!request.stage_devices.empty()) {
    const int64_t sum = std::accumulate(request.stage_devices.begin(), request.stage_devices.end(), int64_t{0});
    if (sum != request.devices)
      throw OptionError({"stage_devices", "the stage devices", "",
                         " add up to " + std::to_string(sum) + ", not the " + std::to_string(request.devices) +
                             " devices"});
    return request.stage_devices;
  }
  if (request.stages < 1 || request.devices % request.stages != 0)
    throw OptionError({"pipeline_stages", "the pipeline stages", "",
                       ": " + std::to_string(request.stages) + " stages do not divide " +
                           std::to_string(request.devices) + " devices evenly (give each stage's devices)"});
  return std::vector<int64_t>(static_cast<size_t>(request.stages), request.devices / request.stages);
}

// One direction of the send across the boundary before vertex `cut`, per
// micro-batch: the crossing activations spread over the smaller stage's
// devices, each pair over the link between them.
double send_seconds(const Graph& graph, int cut, int64_t from, int64_t to, bool across_nodes, const CostModel& model) {
  const double words = static_cast<double>(crossing_elements(graph, cut)) / static_cast<double>(std::min(from, to));
  return model.fetch_cost_on_nodes(words, 2, across_nodes) / 2;  // fetch_cost counts forward and backward
}

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

double pipeline_least_step(const Graph& graph, const PipelineRequest& request) {
  const std::vector<int64_t> devices = devices_of_stages(request);
  SolveRequest ask = request.stage;
  ask.memory = weighted(request.stage.memory, 1, 0.0);
  ask.mesh.reset();
  ask.search_layouts = false;
  // Each layer at its least time on the most devices a stage has: no stage runs it faster.
  const int64_t largest = *std::max_element(devices.begin(), devices.end());
  const double least = least_cost_bound(graph, *request.make_model(ask.memory, largest), ask);
  const double m = static_cast<double>(request.stage.memory.micro_batches);
  return least + (m - 1) * least / static_cast<double>(devices.size());
}

PipelineOutcome solve_pipeline(const Graph& graph, const PipelineRequest& request) {
  const std::vector<int64_t> devices = devices_of_stages(request);
  const int s = static_cast<int>(devices.size());
  const std::vector<int> starts = stage_cut_vertices(graph, StageKeys(graph), request.cuts);
  PipelineOutcome outcome;
  outcome.positions = static_cast<int>(starts.size()) - 1;
  if (outcome.positions < s)
    throw OptionError({"pipeline_stages", "the pipeline stages", "",
                       ": " + std::to_string(s) + " stages, but the graph has " + std::to_string(outcome.positions) +
                           " places a stage may begin (" +
                           (request.cuts == StageCuts::Blocks ? "at each block" : "after each block boundary") + ")"});
  std::vector<int64_t> first(static_cast<size_t>(s), 0);
  for (int k = 1; k < s; ++k) first[k] = first[k - 1] + devices[k - 1];
  const TrainingSetup& setup = request.stage.memory;
  const std::unique_ptr<CostModel> link_model = request.make_model(weighted(setup, 1, 0.0), request.devices);
  const int64_t per_node = link_model->devices_per_node();
  // Whether the boundary after stage k joins devices of different nodes.
  auto across = [&](int k) {
    if (per_node <= 0) return false;
    return first[k] / per_node != (first[k + 1] + devices[k + 1] - 1) / per_node;
  };
  auto sends = [&](int k, int i, int j) {
    double seconds = 0;
    if (k + 1 < s) seconds += send_seconds(graph, starts[j], devices[k], devices[k + 1], across(k), *link_model);
    if (k > 0) seconds += send_seconds(graph, starts[i], devices[k - 1], devices[k], across(k - 1), *link_model);
    return seconds;
  };
  // Every stage the outer DP may ask for, each distinct one solved once, in
  // parallel, without the cap; under a cap, then those whose optimum does not
  // fit with their micro-batches in flight, by the capped search.
  const RangeKeys keys(graph, starts);
  const int p = outcome.positions;
  std::vector<std::array<int, 3>> ranges;  // (k, i, j) the outer DP may ask for
  for (int k = 0; k < s; ++k)
    for (int i = k == 0 ? 0 : k; i + (s - k) <= p && (k > 0 || i == 0); ++i)
      for (int j = k == s - 1 ? p : i + 1; j + (s - k - 1) <= p; ++j) ranges.push_back({k, i, j});
  Pricings pricings(graph, request);
  const double share = 1.0 / static_cast<double>(s);
  for (int64_t n : devices) {
    pricings.add(n, setup);
    if (s > 1) pricings.add(n, weighted(setup, 1, share)), pricings.add(n, weighted(setup, setup.micro_batches, share));
  }
  pricings.price_all();
  PipelineRequest uncapped = request;
  if (!uncapped.stage.solve.dp.block_tables) uncapped.stage.solve.dp.block_tables = std::make_shared<BlockTableCache>();
  PipelineRequest capped = uncapped;
  uncapped.stage.cap.reset();
  std::map<SolveKey, std::shared_ptr<const StageSolve>> solves;
  auto key_of = [&](int k, int i, int j, int64_t held, bool under_cap) -> SolveKey {
    return {keys.key(i, j), devices[k], held, under_cap};
  };
  auto solve_all = [&](const std::vector<std::pair<SolveKey, std::array<int, 3>>>& jobs, auto&& solve) {
    std::vector<std::shared_ptr<const StageSolve>> solved(jobs.size());
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t n) {
      const auto& [key, at] = jobs[n];
      const StageSite site{starts[at[1]], starts[at[2]], std::get<1>(key), &pricings};
      solved[n] = std::make_shared<const StageSolve>(solve(stage_graph(graph, site.begin, site.end), site, key, at));
    });
    for (size_t n = 0; n < jobs.size(); ++n) solves[jobs[n].first] = solved[n];
  };
  std::vector<std::pair<SolveKey, std::array<int, 3>>> jobs;
  for (const auto& [k, i, j] : ranges)
    if (SolveKey key = key_of(k, i, j, 1, false); solves.emplace(key, nullptr).second) jobs.push_back({std::move(key), {k, i, j}});
  solve_all(jobs, [&](const Graph& stage, const StageSite& site, const SolveKey&, const std::array<int, 3>&) {
    return solve_stage(stage, site, 1, s, uncapped);
  });
  // Which solve answers stage k over [i, j): the one without the cap where its optimum fits.
  auto in_flight = [&](int k) { return micro_batches_in_flight(k, s, setup.micro_batches, request.schedule); };
  auto answer_key = [&](int k, int i, int j) {
    SolveKey base = key_of(k, i, j, 1, false);
    if (!request.stage.cap) return base;
    const PlanMemory& one = solves.at(base)->outcome.bytes;
    const uint64_t held = static_cast<uint64_t>(in_flight(k));
    const bool fits = one.activations <= (UINT64_MAX - one.weights) / held && one.weights + held * one.activations <= *request.stage.cap;
    return fits ? base : key_of(k, i, j, in_flight(k), true);
  };
  const double m = static_cast<double>(setup.micro_batches);
  // Under a cap: the best partition of stages whose optimum fits as it is
  // bounds the rest. A stage that does not fit costs M t + w at least its
  // optimum without the cap, and the step at least that: where it reaches
  // the partition found, the capped search is not run and the stage is left
  // out (any partition with it steps no faster than the one found, so the
  // lower bound, min(bound, step), still holds).
  double incumbent = std::numeric_limits<double>::infinity();
  if (request.stage.cap) {
    const PartitionAnswer fitting = best_partition({p, s, setup.micro_batches, [&](int k, int i, int j) -> std::optional<StageValue> {
      if (std::get<3>(answer_key(k, i, j))) return std::nullopt;
      const StageSolve& base = *solves.at(key_of(k, i, j, 1, false));
      const double send = sends(k, i, j);
      return StageValue{base.t + send, base.w, base.step_bound + m * send, base.time_bound + send};
    }});
    if (!fitting.bounds.empty()) incumbent = fitting.step;
  }
  auto ruled_out = [&](int k, int i, int j) {
    return solves.at(key_of(k, i, j, 1, false))->step_cost + m * sends(k, i, j) >= incumbent;
  };
  jobs.clear();
  for (const auto& [k, i, j] : ranges)
    if (SolveKey key = answer_key(k, i, j); !ruled_out(k, i, j) && solves.emplace(key, nullptr).second)
      jobs.push_back({std::move(key), {k, i, j}});
  solve_all(jobs, [&](const Graph& stage, const StageSite& site, const SolveKey& key, const std::array<int, 3>& at) {
    return solve_stage(stage, site, std::get<2>(key), s, capped, solves.at(key_of(at[0], at[1], at[2], 1, false)).get());
  });
  auto stage_solve = [&](int k, int i, int j) { return solves.at(answer_key(k, i, j)); };
  PartitionProblem problem{p, s, setup.micro_batches, [&](int k, int i, int j) -> std::optional<StageValue> {
    ++outcome.ranges;
    const SolveKey key = answer_key(k, i, j);
    if (std::get<3>(key) && !solves.count(key)) return std::nullopt;  // ruled out by the partition that fits
    const std::shared_ptr<const StageSolve> stage = solves.at(key);
    if (!stage->fits) return std::nullopt;
    const double send = sends(k, i, j);
    return StageValue{stage->t + send, stage->w, stage->step_bound + m * send, stage->time_bound + send};
  }};
  const PartitionAnswer answer = best_partition(problem);
  outcome.stage_solves = solves.size();
  if (answer.bounds.empty()) return outcome;
  outcome.step = answer.step;
  outcome.lower_bound = answer.lower_bound;
  for (int k = 0; k < s; ++k) {
    PipelineStage stage;
    stage.begin = starts[answer.bounds[k]];
    stage.end = starts[answer.bounds[k + 1]];
    stage.devices = devices[k];
    stage.first_device = first[k];
    stage.in_flight = micro_batches_in_flight(k, s, setup.micro_batches, request.schedule);
    stage.send_time = sends(k, answer.bounds[k], answer.bounds[k + 1]);
    stage.value = answer.stages[k];
    stage.solve = stage_solve(k, answer.bounds[k], answer.bounds[k + 1]);
    stage.bytes = stage.solve->outcome.bytes;
    if (stage.solve->in_flight == 1) stage.bytes.activations *= static_cast<uint64_t>(stage.in_flight);
    outcome.stages.push_back(std::move(stage));
  }
  // One stage is the plain solve: its cost as the solver found it, to the last bit.
  if (s == 1) {
    outcome.step = outcome.stages[0].solve->step_cost;
    outcome.lower_bound = std::min(outcome.step, outcome.stages[0].solve->step_bound);
  }
  return outcome;
}

}  // namespace pase
