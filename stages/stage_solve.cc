#include "stages/stage_solve.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

#include <tbb/parallel_for.h>

#include "base/checked_math.h"
#include "base/error.h"
#include "costmodel/cost_tables.h"
#include "graphs/layer_weights.h"
#include "graphs/stage_graph.h"
#include "graphs/vertex_model.h"
#include "plans/mesh_pricing.h"
#include "plans/mesh_search.h"
#include "solve/layer_techniques.h"
#include "solve/solve_request.h"
#include "stages/stage_cuts.h"
#include "stages/stage_key.h"

namespace pase {
namespace {

// A strategy's time on its layouts (SolveOutcome::layouts) under `time_model`
// (one micro-batch, no step terms): each layer over the links its axes
// cross, each edge by the words its two layouts move, over their link.
double time_on_layouts(const Graph& graph, const SolveOutcome& outcome, const CostModel& time_model, const Mesh& mesh) {
  const CostTables& tables = outcome.tables;
  const std::vector<int32_t>& choice = outcome.solution.choice;
  double layers = 0;
  for (size_t v = 0; v < graph.vertices.size(); ++v)
    layers += time_model.layer_on_nodes(tables.models[v], tables.configs[v][choice[v]], tables.per_node[v][choice[v]]);
  return layers + plan_from_layouts(graph, tables, outcome.layouts, choice, mesh, time_model).realized_edge_cost;
}

}  // namespace

TrainingSetup weighted(TrainingSetup setup, int64_t micro_batches, double step_weight) {
  setup.micro_batches = micro_batches;
  setup.step_weight = step_weight;
  return setup;
}

bool stages_on_layouts(const PipelineRequest& request) {
  if (!request.stage_layouts) return false;
  if (request.given_stages)
    for (const StrategyDocument& stage : *request.given_stages)
      if (!stage.plan) return false;
  return true;
}

std::optional<Mesh> stage_mesh(const PipelineRequest& request, const CostModel& model, int64_t devices) {
  if (!stages_on_layouts(request) || !prices_links(model) || model.devices_per_node() <= 0) return std::nullopt;
  return default_mesh(devices, model.devices_per_node());
}

int index_in(const StageRanges& ranges, int vertex) {
  int before = 0;
  for (const auto& [begin, end] : ranges) {
    if (vertex >= begin && vertex < end) return before + vertex - begin;
    before += end - begin;
  }
  return -1;
}

Pricings::Pricings(const Graph& graph, const PipelineRequest& request)
    : graph_(graph), request_(request), repeated_(StageKeys(graph).repeated_reads()) {}

void Pricings::price_all() {
  SharedStageSolves* shared = request_.shared_solves.get();
  std::vector<std::pair<const Key*, Priced*>> todo;
  for (auto& [k, priced] : tables_) {
    if (priced.tables) continue;
    if (shared) {  // another search of the graph priced it
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (const auto found = shared->pricings.find(k); found != shared->pricings.end()) {
        priced = *found->second;
        continue;
      }
    }
    todo.push_back({&k, &priced});
  }
  tbb::parallel_for(size_t{0}, todo.size(), [&](size_t n) {
    const auto& [devices, setup] = std::pair{std::get<0>(*todo[n].first), setup_of(*todo[n].first)};
    SolveRequest ask = request_.stage;
    ask.memory = setup;
    const std::unique_ptr<CostModel> model = request_.make_model(setup, devices);
    ask.mesh = stage_mesh(request_, *model, devices);
    ask.search_layouts = ask.mesh.has_value();
    PricedLayouts priced = price_graph_layouts(graph_, *model, ask);
    todo[n].second->tables = std::make_shared<const CostTables>(std::move(priced.tables));
    todo[n].second->layouts = std::move(priced.layouts);
  });
  if (!shared) return;
  std::lock_guard<std::mutex> lock(shared->mutex);
  for (const auto& [k, priced] : todo) shared->pricings.emplace(*k, std::make_shared<const StagePricing>(*priced));
}

std::vector<double> Pricings::least_cost_prefix(int64_t devices, const TrainingSetup& setup) const {
  const CostTables& tables = *tables_.at(key(devices, setup)).tables;
  std::vector<double> least;
  if (setup.per_layer_auto()) {  // the tables price one technique per layer: the least over every one it may take
    least = least_vertex_costs_with_techniques(graph_, *request_.make_model(setup, devices), tables, setup);
  } else {
    for (const SharedArray<double>& costs : tables.objective.vertex_cost)
      least.push_back(*std::min_element(costs.begin(), costs.end()));
  }
  std::vector<double> prefix(least.size() + 1, 0.0);
  for (size_t v = 0; v < least.size(); ++v) prefix[v + 1] = prefix[v] + least[v];
  return prefix;
}

void Pricings::slice_into(SolveRequest& ask, int64_t devices, const TrainingSetup& setup,
                          const StageRanges& ranges) const {
  const Priced& whole = tables_.at(key(devices, setup));
  CostTables slice = slice_cost_tables(*whole.tables, graph_, ranges);
  std::unique_ptr<CostModel> model;
  for (auto [reader, before] : repeated_) {
    const int at = index_in(ranges, reader);
    if (at < 0 || index_in(ranges, before) >= 0) continue;
    if (!model) model = request_.make_model(setup, devices);
    const size_t v = static_cast<size_t>(at);
    auto first_reader = std::make_shared<const VertexModel>(build_vertex_model(graph_.vertices[static_cast<size_t>(reader)]));
    std::vector<double> costs(slice.configs[v].size());
    for (size_t c = 0; c < costs.size(); ++c)
      costs[c] = slice.per_node.empty() ? model->layer(*first_reader, slice.configs[v][c])
                                        : model->layer_on_nodes(*first_reader, slice.configs[v][c], slice.per_node[v][c]);
    slice.models.set(v, std::move(first_reader));
    slice.objective.vertex_cost[v] = std::move(costs);
  }
  ask.priced = std::make_shared<const CostTables>(std::move(slice));
  ask.priced_layouts.clear();
  if (!whole.layouts.empty())
    for (const auto& [begin, end] : ranges)
      ask.priced_layouts.insert(ask.priced_layouts.end(), whole.layouts.begin() + begin, whole.layouts.begin() + end);
}

TrainingSetup Pricings::setup_of(const Key& k) const {
  return weighted(request_.stage.memory, std::get<1>(k), std::get<2>(k));
}

// The optimum of `stage` under `setup`, or its bound past the DP's limits;
// without a cap, so a bound over every strategy of the stage.
double least_cost(const Graph& stage, const StageSite& site, const TrainingSetup& setup, const PipelineRequest& request) {
  SolveRequest ask = request.stage;
  ask.memory = setup;
  ask.cap.reset();
  ask.place = false;
  ask.mesh.reset();
  ask.search_layouts = false;
  site.pricings->slice_into(ask, site.devices, setup, site.ranges);
  const std::unique_ptr<CostModel> model = request.make_model(setup, site.devices);
  const SolveOutcome outcome = solve_request(stage, *model, ask);
  return outcome.bounded ? outcome.bounded->lower_bound : outcome.solution.cost;
}

// The optimum of one stage on its devices holding `in_flight` micro-batches'
// activations: its strategy for M t + w, that strategy's t and w, and for a
// pipeline of `stages` stages the bounds of pipeline_partition.h:
// step_bound <= M t + w (its own optimum, or its capped search's bound) and
// time_bound <= t (one more solve, of t alone) over every strategy of the
// stage that fits. For the slowest stage b, sum t + (M - 1) t_b + max w >=
// sum over k != b of t_k + (M t_b + w_b).
StageSolve solve_stage(const Graph& stage, const StageSite& site, int64_t in_flight, int stages,
                       const PipelineRequest& request, const StageSolve* base) {
  StageSolve solved;
  solved.in_flight = in_flight;
  SolveRequest ask = request.stage;
  ask.memory.activations_in_flight = in_flight;
  ask.place = false;
  ask.mesh.reset();
  ask.search_layouts = false;
  site.pricings->slice_into(ask, site.devices, ask.memory, site.ranges);
  const std::unique_ptr<CostModel> model = request.make_model(ask.memory, site.devices);
  // A baseline on layouts chooses its configurations among those the mesh realizes.
  if (request.stage.source == StrategySource::Baseline && !ask.priced_layouts.empty())
    ask.mesh = stage_mesh(request, *model, site.devices);
  solved.outcome = solve_request(stage, *model, ask);
  const Graph solved_graph = solved.outcome.graph ? std::move(*solved.outcome.graph) : stage;
  solved.outcome.graph.reset();
  solved.outcome.placed.reset();  // pipeline_plan.h places the chosen stages
  solved.outcome.memory = MemoryTables{};
  solved.outcome.solution.plan = EliminationPlan{};  // its order and dependent sets: a few ints per vertex each
  solved.outcome.solution.tables = TablePlan{};
  for (const Vertex& vertex : solved_graph.vertices) {
    solved.recompute.push_back(vertex.recompute);
    solved.fused_scores.push_back(vertex.fused_scores);
    solved.zero.push_back(vertex.zero);
  }
  solved.cut_off = solved.outcome.capped && solved.outcome.capped->cut_off;
  if (!solved.outcome.solved() || solved.cut_off) return solved;
  solved.fits = true;
  const int64_t m = ask.memory.micro_batches;
  solved.step_cost = solved.outcome.solution.cost;
  solved.step_bound = solved.outcome.capped    ? solved.outcome.capped->lower_bound
                      : solved.outcome.bounded ? solved.outcome.bounded->lower_bound
                                               : solved.step_cost;
  // Its time per micro-batch: the same strategy priced without the step's terms, at one micro-batch.
  const std::unique_ptr<CostModel> time_model = request.make_model(weighted(ask.memory, 1, 0.0), site.devices);
  solved.t = solved.outcome.layouts.empty()
                ? evaluate_strategy_direct(solved_graph, solved.outcome.tables, *time_model, solved.outcome.solution.choice)
                : time_on_layouts(solved_graph, solved.outcome, *time_model, *stage_mesh(request, *model, site.devices));
  solved.w = std::max(0.0, solved.step_cost - static_cast<double>(m) * solved.t);
  solved.least_step = solved.step_bound;   // M t + w over every strategy, before the bounds below weaken it
  solved.time_bound = solved.step_bound;  // one stage: its step is its own optimum
  if (base) {  // the same stage without the cap bounds it (bounds over every strategy)
    solved.time_bound = base->time_bound;
    solved.step_bound = std::max(base->step_bound, solved.step_bound);
  } else if (stages > 1 && request.stage.source == StrategySource::Optimum) {  // a given or baseline strategy: no bound
    solved.time_bound = least_cost(stage, site, weighted(request.stage.memory, 1, 0.0), request);
  }
  return solved;
}

// Each stage's devices: as given, or N / S each.
bool ran_to_end(const StageSolve& solve) {
  const std::optional<CappedSolution>& capped = solve.outcome.capped;
  return !solve.cut_off && !(capped && capped->timed_out);
}

std::shared_ptr<const StageSolve> without_tables(const StageSolve& solve) {
  auto copy = std::make_shared<StageSolve>(solve);
  copy->outcome.tables = CostTables{};
  copy->outcome.layouts.clear();
  copy->tables_dropped = true;
  return copy;
}

std::vector<int64_t> devices_of_stages(const PipelineRequest& request) {
  const int64_t m = request.stage.memory.micro_batches;
  if (request.schedule.kind == ScheduleKind::Interleaved && request.stages > 1 && m % request.stages != 0)
    throw OptionError({"micro_batches", "the micro-batches", "",
                       ": " + std::to_string(m) + " is not a multiple of the " + std::to_string(request.stages) +
                           " stages (Megatron-LM's interleaved schedule runs the micro-batches in groups of the "
                           "stage count)"});
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

// One direction of the send across a stage boundary, per micro-batch: the
// `crossing` activation elements spread over the smaller stage's devices,
// each pair over the link between them.
double send_seconds(uint64_t crossing, int64_t from, int64_t to, bool across_nodes, const CostModel& model) {
  const double words = static_cast<double>(crossing) / static_cast<double>(std::min(from, to));
  return model.fetch_cost_on_nodes(words, 2, across_nodes) / 2;  // fetch_cost counts forward and backward
}

// Megatron-LM's stages over the cut positions of StageCuts::Blocks: an equal
// share of the run's blocks each (the first stages one more where they do
// not divide), the first also what precedes the run, the last what follows.
std::vector<int> equal_block_bounds(const Graph& graph, int stages) {
  const BlockRun run = block_run(graph, StageKeys(graph));
  const int positions = static_cast<int>(stage_cut_vertices(graph, StageKeys(graph), StageCuts::Blocks).size()) - 1;
  if (run.blocks < static_cast<size_t>(stages))
    throw OptionError({"pipeline_stages", "the pipeline stages", "",
                       ": " + std::to_string(stages) + " stages of equal blocks, but the graph repeats " +
                           std::to_string(run.blocks) + " blocks"});
  std::vector<int> bounds = {0};
  size_t block = 0;
  for (int k = 1; k < stages; ++k) {
    block += run.blocks / static_cast<size_t>(stages) + (static_cast<size_t>(k - 1) < run.blocks % static_cast<size_t>(stages));
    bounds.push_back(static_cast<int>(run.first + block));
  }
  bounds.push_back(positions);
  return bounds;
}

std::vector<TiedRead> tied_reads(const Graph& graph, const std::vector<std::pair<int, int>>& repeated) {
  std::vector<TiedRead> reads;
  std::set<std::pair<int, std::string>> seen;  // a reader and a weight, once
  for (const auto& [reader, before] : repeated) {
    const Vertex& vertex = graph.vertices[static_cast<size_t>(reader)];
    const Vertex& first = graph.vertices[static_cast<size_t>(before)];
    // The weight both read: the reader's weight whose name the earlier reader reads too.
    for (const LayerWeight& weight : layer_weights(vertex, build_vertex_model(vertex)))
      for (const LayerWeight& earlier : layer_weights(first, build_vertex_model(first)))
        if (weight.name == earlier.name && seen.insert({reader, weight.name}).second)
          reads.push_back({reader, before, static_cast<uint64_t>(checked_product(weight.shape).value_or(0))});
  }
  return reads;
}

std::vector<TiedRead> priced_tied_reads(const Graph& graph, const std::vector<std::pair<int, int>>& repeated,
                                        const std::vector<int64_t>& stage_devices, int64_t devices,
                                        const CostModel& link_model) {
  const int64_t per_node = link_model.devices_per_node();
  const int64_t fewest = *std::min_element(stage_devices.begin(), stage_devices.end());
  std::vector<TiedRead> reads = tied_reads(graph, repeated);
  for (TiedRead& read : reads)
    read.seconds = send_seconds(read.elements, fewest, fewest, per_node > 0 && devices > per_node, link_model);
  return reads;
}

}  // namespace pase
