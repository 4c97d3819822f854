#include "solve/solve_request.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "base/byte_size.h"
#include "base/check.h"
#include "base/error.h"
#include "costmodel/kernel_splits.h"
#include "graphs/sequence_parallel.h"
#include "memorycap/memory_priced_dp.h"
#include "memorycap/relaxed_cap.h"
#include "memorycap/separable_bound.h"
#include "memorycap/uniform_memory.h"
#include "plans/mesh.h"
#include "plans/mesh_search.h"
#include "solve/layer_techniques.h"
#include "strategy/baselines.h"

namespace pase {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Whether the request searches for its strategy (not a given or built-in one).
bool searches(const SolveRequest& request) {
  return request.source == StrategySource::Optimum || request.source == StrategySource::Frontier;
}

// The configurations a request searches: on a mesh, those it realizes; a
// search (not a given strategy) under min_row, those kernels run well.
ConfigFilter searched_configurations(const SolveRequest& request) {
  const Mesh* mesh = request.mesh ? &*request.mesh : nullptr;
  const int64_t min_row = searches(request) ? request.min_row : 0;
  if (!mesh && min_row <= 1) return {};
  return [mesh, min_row](const VertexModel& model, const int32_t* config) {
    return (!mesh || realizable(*mesh, config, static_cast<int>(model.domain.size()))) &&
           keeps_rows(model, config, min_row);
  };
}

// The graph priced, over the configurations searched; with search_layouts
// each of them on every way the mesh runs it.
// Without `edges` the tables have no edge matrices: for the bounds that take
// every edge at nothing (least_cost_bound), which would not read them.
void price(SolveOutcome& out, const Graph& graph, const CostModel& model, const SolveRequest& request,
           bool edges = true) {
  if (request.priced) {
    out.tables = *request.priced;
    out.layouts = request.priced_layouts;
    return;
  }
  // On a mesh's layouts the edges are priced there, over the layouts: the
  // configurations' own edge matrices would be thrown away.
  const bool layouts_searched = request.mesh && request.search_layouts;
  out.tables = edges && !layouts_searched
                   ? build_cost_tables(graph, model, kDefaultMaxConfigs, searched_configurations(request))
                   : build_vertex_cost_tables(graph, model, kDefaultMaxConfigs, searched_configurations(request));
  if (!layouts_searched) return;
  MeshTables layouts = price_on_mesh(graph, out.tables, *request.mesh, model, layout_space(*request.mesh),
                                     kMaxLayoutsPerLayer, edges);
  out.tables = std::move(layouts.tables);
  out.layouts = std::move(layouts.assignments);
}

// Past the exact DP's limits under a cap: the capped search over the
// relaxation a bounded solve would run, its answer on the true objective.
void choose_capped_relaxed(SolveOutcome& out, const Graph& graph, const SolveRequest& request, ExactRefusal refusal) {
  BoundedOptions options;
  options.solve = request.solve;
  const std::vector<std::string> names = graph.vertex_names();
  const Relaxation relaxation = relax_to_fit(out.tables.objective, names, options);
  // Its tables were sized unfolded (a relaxed block is no longer like the others).
  SolveOptions unfolded = request.solve;
  unfolded.fold = false;
  MemoryPricedDp dp(relaxation.objective, names, out.memory, unfolded);
  // The bounded solve without the cap seeds the moves under it.
  std::vector<int32_t> seed = solve_bounded(out.tables.objective, names, options, relaxation).solution.choice;
  out.capped = on_true_objective(solve_under_cap(dp, relaxation.objective, out.memory, *request.cap, request.cap_search),
                                 out.tables.objective, out.memory, std::move(seed));
  out.solution = dp.plan();
  out.solution.cost = out.capped->cost;
  out.solution.choice = out.capped->choice;
  out.solution.stats = dp.last_stats();
  out.bounded = relaxed_report(out.solution, *out.capped, relaxation.relaxed_edges);
  out.refusal = std::move(refusal);
}

// The optimum under a cap: the capped search, its order and sizes from the
// memory-priced DP.
void choose_capped(SolveOutcome& out, const Graph& graph, const SolveRequest& request) {
  try {
    MemoryPricedDp dp(graph, out.tables, out.memory, request.solve);
    out.capped = solve_under_cap(dp, out.tables.objective, out.memory, *request.cap, request.cap_search);
    out.solution = dp.plan();
    out.solution.cost = out.capped->cost;
    out.solution.choice = out.capped->choice;
    out.solution.stats = dp.last_stats();
  } catch (const LimitError&) {
    // Past the exact DP's limits (planned again only here, to say why).
    std::optional<ExactRefusal> refusal =
        past_exact_limits(out.tables.objective, graph.vertex_names(), request.solve, request.exact);
    if (!refusal) throw;
    choose_capped_relaxed(out, graph, request, std::move(*refusal));
  }
}

// The optimum without a cap: the exact DP, or past its limits a bounded solve.
void choose_optimum(SolveOutcome& out, const Graph& graph, const SolveRequest& request) {
  Answer answer = solve_or_bound(out.tables.objective, graph.vertex_names(), request.solve, request.exact);
  out.solution = std::move(answer.solution);
  out.bounded = std::move(answer.bounded);
  out.refusal = std::move(answer.refusal);
}

// Whether vertices v and w mean the same by each configuration index (one
// configuration list), as merged vertices must.
bool same_configurations(const CostTables& tables, int v, int w) {
  const ConfigSet &a = tables.configs[static_cast<size_t>(v)], &b = tables.configs[static_cast<size_t>(w)];
  return a.rank == b.rank && a.splits == b.splits;
}

// The capped search over the merged objective and bytes (memorycap/uniform_memory.h),
// its strategy expanded.
void choose_uniform_capped(SolveOutcome& out, const SolveRequest& request, const UniformBlocks& uniform) {
  const MemoryTables memory = merge_memory_tables(out.memory, uniform);
  MemoryPricedDp dp(uniform.objective, uniform.names, memory, request.solve);
  CappedSolution capped = solve_under_cap(dp, uniform.objective, memory, *request.cap, request.cap_search);
  capped.choice = expand_uniform(uniform, capped.choice);
  out.solution = expand_solution(uniform, dp.plan());
  out.solution.cost = capped.cost;
  out.solution.choice = capped.choice;
  out.solution.stats = dp.last_stats();
  out.capped = std::move(capped);
}

// The runs of identical blocks of the priced graph (uniform_blocks), every
// vertex a run merges (not only those the predicate saw) checked to mean
// what its group's does by each configuration index.
UniformBlocks uniform_runs(const CostTables& tables, const Graph& graph) {
  UniformBlocks uniform = uniform_blocks(tables.objective, graph.vertex_names(),
                                         [&tables](int v, int w) { return same_configurations(tables, v, w); });
  for (size_t v = 0; v < uniform.merged.size(); ++v)
    PASE_ASSERT(same_configurations(tables, static_cast<int>(v), uniform.stands_for[static_cast<size_t>(uniform.merged[v])]), v);
  return uniform;
}

// The optimum over strategies that give identical blocks one configuration
// each, and the free optimum beside it (what the restriction costs), both
// under the cap when there is one.
void choose_uniform(SolveOutcome& out, const Graph& graph, const SolveRequest& request) {
  const UniformBlocks uniform = uniform_runs(out.tables, graph);
  UniformOutcome report;
  report.runs = uniform.runs;
  if (!uniform.runs.empty()) {  // the free answer first, as without the restriction
    if (request.cap) {
      choose_capped(out, graph, request);
      report.free_cost = out.capped->feasible ? out.capped->cost : 0.0;
      report.free_exact = out.capped->feasible && out.capped->gap == 0;
    } else {
      choose_optimum(out, graph, request);
      report.free_cost = out.solution.cost;
      report.free_exact = !out.bounded || out.bounded->proven_optimal();
    }
  }
  if (request.cap) {
    choose_uniform_capped(out, request, uniform);
  } else {
    Answer answer = solve_or_bound(uniform.objective, uniform.names, request.solve, request.exact);
    out.solution = expand_solution(uniform, std::move(answer.solution));
    PASE_ASSERT(std::fabs(out.tables.objective.evaluate(out.solution.choice) - out.solution.cost) <=
                    1e-9 * std::fabs(out.solution.cost),
                out.solution.cost);
    out.bounded = std::move(answer.bounded);
    out.refusal = std::move(answer.refusal);
  }
  if (uniform.runs.empty()) report.free_cost = out.solution.cost;
  out.uniform = std::move(report);
}

// The built-in strategy over `tables`; one that does not apply to the graph is bad input.
BaselineResult applicable_baseline(const Graph& graph, const CostTables& tables, const SolveRequest& request) {
  BaselineResult result = run_baseline(request.baseline, graph, tables, request.mcmc, request.tensor_parallel);
  if (!result.applicable) throw BaselineNotApplicable(request.baseline, graph.name, result.note);
  return result;
}

void choose_baseline(SolveOutcome& out, const Graph& graph, const SolveRequest& request) {
  BaselineResult result = applicable_baseline(graph, out.tables, request);
  out.solution.choice = std::move(result.choice);
  out.solution.cost = out.tables.objective.evaluate(out.solution.choice);
  out.solution.stats.seconds = result.seconds;
  out.note = result.note;
}

// A built-in strategy on a mesh whose layouts are searched: the baseline
// chooses each layer's configuration (among those the mesh realizes), the
// DP the axes it runs on (every other configuration shut out at an infinite
// cost), so the baseline is priced as the mesh runs it best, over the links
// its collectives cross, as the optimum beside it is.
void choose_baseline_on_layouts(SolveOutcome& out, const Graph& graph, const CostModel& model,
                                const SolveRequest& request) {
  const CostTables configs = build_cost_tables(graph, model, kDefaultMaxConfigs, searched_configurations(request));
  const BaselineResult result = applicable_baseline(graph, configs, request);
  Objective pinned = out.tables.objective;
  // Layers alike (one cost array, one configuration chosen) share their
  // pinned array, so repeated blocks still fold.
  std::map<std::pair<const void*, std::vector<int32_t>>, SharedArray<double>> pinned_of;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const ConfigSet& expanded = out.tables.configs[v];
    const int32_t* chosen = configs.configs[v][static_cast<size_t>(result.choice[v])];
    std::vector<int32_t> key(chosen, chosen + expanded.rank);
    auto [it, inserted] = pinned_of.try_emplace({out.tables.objective.vertex_cost[v].storage_id(), key});
    if (inserted) {
      std::vector<double> costs(expanded.size(), std::numeric_limits<double>::infinity());
      for (size_t s = 0; s < expanded.size(); ++s)
        if (std::equal(chosen, chosen + expanded.rank, expanded[s])) costs[s] = out.tables.objective.vertex_cost[v][s];
      it->second = std::move(costs);
    }
    pinned.vertex_cost[v] = it->second;
  }
  Answer answer = solve_or_bound(pinned, graph.vertex_names(), request.solve, /*exact=*/true);
  out.solution = std::move(answer.solution);
  out.solution.cost = out.tables.objective.evaluate(out.solution.choice);
  out.solution.stats.seconds = result.seconds;
  out.note = result.note;
}

void choose_frontier(SolveOutcome& out, const Graph& graph, const SolveRequest& request) {
  if (request.uniform_blocks) {  // over the merged objective and bytes, each point's strategy expanded
    const UniformBlocks uniform = uniform_runs(out.tables, graph);
    const MemoryTables memory = merge_memory_tables(out.memory, uniform);
    MemoryPricedDp dp(uniform.objective, uniform.names, memory, request.solve);
    out.frontier = memory_frontier(dp, uniform.objective, memory);
    out.frontier_runs = dp.runs();
    for (FrontierPoint& point : out.frontier) point.choice = expand_uniform(uniform, point.choice);
    out.uniform = UniformOutcome{uniform.runs, 0.0, false};
    return;
  }
  MemoryPricedDp dp(graph, out.tables, out.memory, request.solve);
  out.frontier = memory_frontier(dp, out.tables.objective, out.memory);
  out.frontier_runs = dp.runs();
}

// Per-layer techniques left to the solver (--recompute auto, --zero auto):
// the search over configurations and techniques, the graph with the chosen
// ones and its tables in the outcome.
void choose_techniques(SolveOutcome& out, const Graph& graph, const CostModel& model, const SolveRequest& request) {
  if (request.source == StrategySource::Frontier) {
    std::optional<UniformBlocks> uniform;
    if (request.uniform_blocks) uniform = uniform_runs(out.tables, graph);
    TechniqueFrontier frontier = layer_technique_frontier(graph, model, out.tables, request.memory, request.solve,
                                                          uniform ? &*uniform : nullptr);
    if (uniform) out.uniform = UniformOutcome{uniform->runs, 0.0, false};
    out.frontier = std::move(frontier.points);
    out.frontier_runs = frontier.dp_runs;
    return;
  }
  TechniqueChoice chosen =
      choose_layer_techniques(graph, model, out.tables, request.memory, request.cap, request.cap_search, request.solve,
                              request.exact);
  out.tables = std::move(chosen.tables);
  out.memory = std::move(chosen.memory);
  out.solution = std::move(chosen.solution);
  out.capped = std::move(chosen.capped);
  out.graph = std::move(chosen.graph);
  out.bounded = std::move(chosen.bounded);
  out.refusal = std::move(chosen.refusal);
}

// A given strategy priced on its mesh's layouts (search_layouts): each
// layer's configuration at the axes its plan runs it over, so a plan is
// priced as the search that wrote it priced it.
void take_given_layouts(SolveOutcome& out, const Graph& graph, const SolveRequest& request) {
  const Plan& plan = *request.given->plan;
  std::map<std::string, const PlannedLayer*> planned;
  for (const PlannedLayer& layer : plan.layers) planned.emplace(layer.name, &layer);
  const std::string file = request.given_path.empty() ? "the strategy file" : request.given_path;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const auto layer = planned.find(graph.vertices[v].name);
    if (layer == planned.end())
      throw InputError(file + ": layer '" + graph.vertices[v].name + "': field 'mesh_axes': missing from the plan");
    const ConfigSet& configs = out.tables.configs[v];
    const int32_t* config = configs[static_cast<size_t>(out.solution.choice[v])];
    const std::vector<AxisAssignment>& layouts = *out.layouts[v];
    bool found = false;
    for (size_t s = 0; s < configs.size() && !found; ++s)
      if (std::equal(config, config + configs.rank, configs[s]) && layouts[s] == layer->second->mesh_axes) {
        out.solution.choice[v] = static_cast<int32_t>(s);
        found = true;
      }
    if (!found)
      throw InputError(file + ": layer '" + graph.vertices[v].name +
                       "': field 'mesh_axes': not a way the plan's mesh runs the layer's configuration");
  }
}

// Per-layer techniques under uniform blocks: each block position one
// configuration and one set of techniques in every block of a run, beside
// the free optimum (what the restriction costs).
void choose_uniform_techniques(SolveOutcome& out, const Graph& graph, const CostModel& model,
                               const SolveRequest& request) {
  const CostTables tables = out.tables;
  const UniformBlocks uniform = uniform_runs(tables, graph);
  choose_techniques(out, graph, model, request);  // the free answer
  UniformOutcome report;
  report.runs = uniform.runs;
  report.free_cost = out.solution.cost;
  report.free_exact = !out.capped || (out.capped->feasible && out.capped->gap == 0);
  if (request.cap && !out.capped->feasible) report.free_cost = 0.0;
  if (!uniform.runs.empty()) {
    TechniqueChoice chosen = choose_uniform_layer_techniques(graph, model, tables, request.memory, request.cap,
                                                             request.cap_search, request.solve, uniform);
    out.tables = std::move(chosen.tables);
    out.memory = std::move(chosen.memory);
    out.solution = std::move(chosen.solution);
    out.capped = std::move(chosen.capped);
    out.graph = std::move(chosen.graph);
  }
  out.uniform = std::move(report);
}

void choose(SolveOutcome& out, const Graph& graph, const CostModel& model, const SolveRequest& request) {
  if (searches(request) && request.memory.per_layer_auto()) {
    if (request.uniform_blocks && request.source == StrategySource::Optimum) choose_uniform_techniques(out, graph, model, request);
    else choose_techniques(out, graph, model, request);
    return;
  }
  if (request.source == StrategySource::Baseline && request.memory.per_layer_auto()) {
    const bool zero = request.memory.zero == kZeroAuto;
    throw OptionError({zero ? "zero" : "recompute", zero ? "zero" : "recompute", "",
                       " auto: the solver chooses it per layer; the " + request.baseline + " baseline takes one " +
                           (zero ? "stage (0, 1, 2 or 3)" : "mode (none or full)")});
  }
  switch (request.source) {
    case StrategySource::Optimum:
      if (request.uniform_blocks) choose_uniform(out, graph, request);
      else if (request.cap) choose_capped(out, graph, request);
      else choose_optimum(out, graph, request);
      return;
    case StrategySource::Given:
      out.solution.choice = strategy_choice(*request.given, graph, out.tables);
      if (!out.layouts.empty()) take_given_layouts(out, graph, request);
      out.solution.cost = out.tables.objective.evaluate(out.solution.choice);
      return;
    case StrategySource::Baseline:
      if (out.layouts.empty()) choose_baseline(out, graph, request);
      else choose_baseline_on_layouts(out, graph, model, request);
      return;
    case StrategySource::Frontier: choose_frontier(out, graph, request); return;
  }
}

// On the request's mesh; else on the default mesh when that realizes the
// strategy, with a bounded effort (the plan says whether its placement is
// proven optimal), or the reason it does not.
void place(SolveOutcome& out, const Graph& graph, const CostModel& model, const SolveRequest& request) {
  PlanOptions options;
  options.threads = request.solve.dp.threads > 0 ? request.solve.dp.threads : 1;
  if (request.mesh && !out.layouts.empty()) {
    out.placed = plan_from_layouts(graph, out.tables, out.layouts, out.solution.choice, *request.mesh, model);
    return;
  }
  if (request.mesh) {
    out.placed = build_plan(graph, out.tables, out.solution.choice, *request.mesh, model, options);
    return;
  }
  if (!request.place) return;
  const int64_t per_node = request.devices_per_node > 0 ? request.devices_per_node : model.devices_per_node();
  const Mesh fallback = default_mesh(model.devices(), per_node);
  out.no_plan_reason = unrealizable_reason(graph, out.tables, out.solution.choice, fallback);
  if (!out.no_plan_reason.empty()) return;
  options.max_work = request.placement_work;
  out.placed = build_plan(graph, out.tables, out.solution.choice, fallback, model, options);
}

}  // namespace

SolveOutcome solve_request(const Graph& graph, const CostModel& model, const SolveRequest& request) {
  if (request.sequence_parallel && request.source == StrategySource::Baseline && request.baseline == "megatron") {
    // The GEMMs that meet the sequence-split ops priced as they do, and the
    // baseline's layout over them; the graph with their roles comes back.
    Graph marked = graph;
    set_sequence_parallel(marked);
    SolveRequest plain = request;
    plain.sequence_parallel = false;
    SolveOutcome out = solve_request(marked, model, plain);
    if (!out.graph) out.graph = std::move(marked);
    return out;
  }
  SolveOutcome out;
  auto phase = [&](const char* name) {
    if (request.on_phase) request.on_phase(name);
  };
  phase("pricing");
  const Clock::time_point priced = Clock::now();
  price(out, graph, model, request);
  out.seconds.price = seconds_since(priced);
  const Clock::time_point solved = Clock::now();
  if (request.plan_only && request.source == StrategySource::Optimum) {
    out.solution = plan_only(out.tables.objective, request.solve.order, request.solve.dp.threads, request.solve.fold);
    out.seconds.solve = seconds_since(solved);
    return out;
  }
  out.memory = build_memory_tables(graph, out.tables, request.memory);
  phase("searching");
  choose(out, graph, model, request);
  if (!out.solution.choice.empty()) out.bytes = plan_memory(out.memory, out.solution.choice);
  out.seconds.solve = seconds_since(solved);
  if (out.capped) out.solution.stats.seconds = out.seconds.solve;
  // A capped search cut off at a cost found elsewhere answers nothing to place.
  if (!out.solved() || request.source == StrategySource::Frontier || (out.capped && out.capped->cut_off)) return out;
  const Clock::time_point placed = Clock::now();
  phase("placing the plan");
  place(out, out.graph ? *out.graph : graph, model, request);
  out.seconds.place = seconds_since(placed);
  return out;
}

CostTables price_graph(const Graph& graph, const CostModel& model, const SolveRequest& request) {
  return build_cost_tables(graph, model, kDefaultMaxConfigs, searched_configurations(request));
}

PricedLayouts price_graph_layouts(const Graph& graph, const CostModel& model, const SolveRequest& request) {
  SolveOutcome out;
  price(out, graph, model, request);
  return {std::move(out.tables), std::move(out.layouts)};
}

double least_cost_bound(const Graph& graph, const CostModel& model, const SolveRequest& request) {
  SolveOutcome out;
  price(out, graph, model, request, /*edges=*/false);
  if (request.memory.per_layer_auto())
    return least_layer_costs_with_techniques(graph, model, out.tables, request.memory, request.cap);
  if (!request.cap) return least_vertex_costs(out.tables.objective);
  return separable_cap_bound(out.tables.objective, build_memory_tables(graph, out.tables, request.memory), *request.cap).bound;
}

PricedBound lagrangian_bound(const Graph& graph, const CostModel& model, const SolveRequest& request, bool round_price) {
  if (!request.cap) return {least_cost_bound(graph, model, request), 0};
  SolveOutcome out;
  price(out, graph, model, request);
  if (request.memory.per_layer_auto())
    return layer_techniques_lagrangian_bound(graph, model, out.tables, request.memory, *request.cap, request.solve,
                                             round_price);
  const MemoryTables memory = build_memory_tables(graph, out.tables, request.memory);
  const PricedBound separable = separable_cap_bound(out.tables.objective, memory, *request.cap);
  if (!std::isfinite(separable.bound)) return separable;
  const double price = round_price ? rounded_price(separable.price) : separable.price;
  const Answer answer =
      solve_or_bound(priced_by_bytes(out.tables.objective, memory, price), graph.vertex_names(), request.solve, false);
  const double optimum = answer.bounded ? answer.bounded->lower_bound : answer.solution.cost;
  return {std::max(separable.bound, optimum - price * static_cast<double>(*request.cap)), price};
}

double lagrangian_cost_bound(const Graph& graph, const CostModel& model, const SolveRequest& request) {
  return lagrangian_bound(graph, model, request, false).bound;
}

SolveRequest pricing_request(const TrainingSetup& memory, const StrategyDocument* given) {
  SolveRequest request;
  request.memory = memory;
  request.place = false;
  if (given) {
    request.source = StrategySource::Given;
    request.given = given;
  }
  return request;
}

std::string over_machine_memory_words(const CostModel& model, uint64_t bytes, std::optional<uint64_t> reserve) {
  const std::optional<uint64_t> machine = model.memory_per_device();
  if (!machine) return "";
  const uint64_t kept = std::min(*machine, reserve.value_or(default_memory_reserve(*machine)));
  if (bytes <= *machine - kept) return "";
  return "the strategy needs " + format_gib(bytes) + " GiB per device, more than the " + format_gib(*machine - kept) +
         " GiB a device of the machine has for training (" + format_gib(*machine) + " GiB less a " + format_gib(kept) +
         " GiB reserve; --memory-per-device machine finds the best strategy that fits)";
}

std::string no_fit_words(const CappedSolution& capped) {
  return "no strategy fits in " + std::to_string(capped.cap) + " bytes (" + format_gib(capped.cap) +
         " GiB) per device: the least any strategy needs is " + std::to_string(capped.least_memory) + " bytes (" +
         format_gib(capped.least_memory) + " GiB)";
}

}  // namespace pase
