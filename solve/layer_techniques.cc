#include "solve/layer_techniques.h"

#include <algorithm>

#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <stdexcept>
#include <string>

#include "graphs/recompute.h"
#include "base/error.h"
#include "dp/bounded_solve.h"
#include "memorycap/memory_priced_dp.h"
#include "memorycap/relaxed_cap.h"
#include "memorycap/separable_bound.h"
#include "memorycap/uniform_memory.h"
#include "memorycap/vertex_options.h"

namespace pase {
namespace {

// The graph, priced, with every layer at one variant (recomputation only off
// the block boundaries).
struct PricedVariant {
  CostTables tables;
  MemoryTables memory;
};

// A variant as a layer runs it: a block boundary keeps its outputs.
LayerTechnique on_layer(LayerTechnique variant, bool boundary) {
  variant.recompute = variant.recompute && !boundary;
  return variant;
}

// Every layer of `graph` at `variant` (its copy, made once for every variant).
void set_variant(Graph& graph, const LayerTechnique& variant, const std::vector<char>& boundary) {
  std::vector<LayerTechnique> each(graph.vertices.size());
  for (size_t v = 0; v < each.size(); ++v) each[v] = on_layer(variant, boundary[v] != 0);
  set_layer_techniques(graph, each);
}

// Relative difference within what the DP's summation order allows.
bool same_cost(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

}  // namespace

std::vector<LayerTechnique> technique_variants(const TrainingSetup& setup) {
  std::vector<bool> recompute;
  if (setup.recompute == Recompute::Auto) recompute = {false, true};
  else recompute = {setup.recompute == Recompute::Full};
  std::vector<int> stages;
  if (setup.zero == kZeroAuto)
    for (int z = 0; z <= kMaxZeroStage; ++z) stages.push_back(z);
  else
    stages = {setup.zero};
  std::vector<LayerTechnique> variants;
  for (bool r : recompute)
    for (int z : stages) variants.push_back({r, z});
  return variants;
}

void set_layer_techniques(Graph& graph, const std::vector<LayerTechnique>& chosen) {
  if (chosen.size() != graph.vertices.size()) throw std::logic_error("set_layer_techniques: one technique per vertex");
  for (size_t v = 0; v < chosen.size(); ++v) {
    graph.vertices[v].recompute = chosen[v].recompute;
    graph.vertices[v].zero = chosen[v].zero;
  }
}

namespace {

// Every variant priced and the options they give each layer: what the
// searches over per-layer techniques run on.
struct TechniqueSpace {
  std::vector<LayerTechnique> variants;
  std::vector<char> boundary;
  std::vector<PricedVariant> priced;
  OptionSpace space;

  TechniqueSpace(const Graph& graph, const CostModel& model, const CostTables& tables, const TrainingSetup& setup)
      : variants(technique_variants(setup)), boundary(block_boundaries(graph)), priced(variants.size()) {
    const size_t n = graph.vertices.size();
    std::vector<VariantPrices> prices;
    Graph g = graph;
    for (size_t k = 0; k < variants.size(); ++k) {
      set_variant(g, variants[k], boundary);
      priced[k].tables = reprice_vertices(g, model, tables);
      priced[k].memory = build_memory_tables(g, priced[k].tables, setup);
    }
    for (const PricedVariant& p : priced) prices.push_back({&p.tables.objective, &p.memory});
    // A block boundary keeps its outputs: its recomputing variants are its
    // others again (unless every variant recomputes: --recompute full).
    std::vector<uint32_t> allowed(n, 0);
    for (size_t v = 0; v < n; ++v) {
      for (size_t k = 0; k < variants.size(); ++k)
        if (!variants[k].recompute || !boundary[v]) allowed[v] |= 1U << k;
      if (allowed[v] == 0) allowed[v] = (1U << variants.size()) - 1;
    }
    space = expand_options(priced[0].tables.objective, prices, allowed);
  }

  [[nodiscard]] const Objective& configurations() const { return priced[0].tables.objective; }

  // Each layer's techniques under a strategy over options.
  [[nodiscard]] std::vector<LayerTechnique> techniques_of(const std::vector<int32_t>& options) const {
    const std::vector<int32_t> variant = space.variants_of(options);
    std::vector<LayerTechnique> chosen(options.size());
    for (size_t v = 0; v < chosen.size(); ++v)
      chosen[v] = on_layer(variants[static_cast<size_t>(variant[v])], boundary[v] != 0);
    return chosen;
  }
};

}  // namespace

namespace {

// The strategy a search over options found, back in configurations: the
// graph with each layer's variant, priced as any graph is, checked against
// what the search priced; `plan` the DP's order and table sizes, `stats` its
// last run's.
TechniqueChoice technique_choice(const Graph& graph, const CostModel& model, const CostTables& tables,
                                 const TrainingSetup& setup, const TechniqueSpace& techniques,
                                 const std::vector<int32_t>& options, const CappedSolution& found, bool capped,
                                 Solution plan, const DpStats& stats) {
  TechniqueChoice out;
  out.solution = std::move(plan);
  out.solution.stats = stats;
  out.graph = graph;
  set_layer_techniques(out.graph, techniques.techniques_of(options));
  out.tables = reprice_vertices(out.graph, model, tables);
  out.memory = build_memory_tables(out.graph, out.tables, setup);
  out.solution.choice = techniques.space.configs_of(options);
  out.solution.cost = out.tables.objective.evaluate(out.solution.choice);
  const uint64_t bytes = plan_memory(out.memory, out.solution.choice).total();
  if (!same_cost(out.solution.cost, found.cost) || bytes != found.memory)
    throw std::logic_error("the per-layer techniques chosen price at " + std::to_string(out.solution.cost) + " and " +
                           std::to_string(bytes) + " bytes, not the search's " + std::to_string(found.cost) + " and " +
                           std::to_string(found.memory));
  if (capped) {
    out.capped = found;
    out.capped->choice = out.solution.choice;
    out.capped->cost = out.solution.cost;
  }
  return out;
}

// Whether vertex v's options mean what its representative's do (the same
// configuration and variant at each index), as merged vertices' must.
bool same_options(const OptionSpace& space, size_t v, size_t r) {
  return space.first[v] == space.first[r] && space.config[v] == space.config[r] && space.variant[v] == space.variant[r];
}

}  // namespace

namespace {

// Each configuration at its cheapest option (the fewest bytes on a tie): an
// objective over the configurations (their edges), and per vertex and
// configuration the option it stands for. Without a cap no strategy gains
// by another option, so its optimum is the optimum over options.
struct CheapestOptions {
  Objective objective;
  std::vector<SharedArray<int32_t>> option;
};

CheapestOptions cheapest_options(const OptionSpace& space, const Objective& configurations) {
  CheapestOptions out;
  out.objective = configurations;
  out.option.resize(configurations.vertex_count());
  // Vertices whose options share their arrays share the collapsed ones (repeated blocks still fold).
  std::map<std::pair<const void*, const void*>, std::pair<SharedArray<double>, SharedArray<int32_t>>> made;
  for (size_t v = 0; v < configurations.vertex_count(); ++v) {
    const SharedArray<double>& costs = space.objective.vertex_cost[v];
    const SharedArray<int32_t>& first = space.first[v];
    auto [it, inserted] = made.try_emplace({costs.storage_id(), first.storage_id()});
    if (inserted) {
      const size_t configs = configurations.config_count(v);
      std::vector<double> least(configs);
      std::vector<int32_t> chosen(configs);
      for (size_t s = 0; s < configs; ++s) {
        int32_t best = first[s];
        for (int32_t o = first[s] + 1; o < first[s + 1]; ++o)
          if (costs[o] < costs[best] || (costs[o] == costs[best] && space.memory.bytes(v, o) < space.memory.bytes(v, best)))
            best = o;
        least[s] = costs[best];
        chosen[s] = best;
      }
      it->second = {SharedArray<double>(std::move(least)), SharedArray<int32_t>(std::move(chosen))};
    }
    out.objective.vertex_cost[v] = it->second.first;
    out.option[v] = it->second.second;
  }
  return out;
}

// Past the exact DP's limits without a cap: the cheapest options' objective
// solved as a plain one is (dp/bounded_solve.h), bounded with its proof.
TechniqueChoice bounded_without_cap(const Graph& graph, const CostModel& model, const CostTables& tables,
                                    const TrainingSetup& setup, const TechniqueSpace& techniques,
                                    const SolveOptions& solve) {
  const CheapestOptions cheapest = cheapest_options(techniques.space, techniques.configurations());
  Answer answer = solve_or_bound(cheapest.objective, graph.vertex_names(), solve, /*exact=*/false);
  std::vector<int32_t> options(answer.solution.choice.size());
  for (size_t v = 0; v < options.size(); ++v)
    options[v] = cheapest.option[v][static_cast<size_t>(answer.solution.choice[v])];
  CappedSolution found;
  found.cost = answer.solution.cost;
  found.memory = plan_memory(techniques.space.memory, options).total();
  const DpStats stats = answer.solution.stats;
  TechniqueChoice out = technique_choice(graph, model, tables, setup, techniques, options, found, false,
                                         std::move(answer.solution), stats);
  out.bounded = std::move(answer.bounded);
  out.refusal = std::move(answer.refusal);
  return out;
}

// Past the exact DP's limits under a cap: the capped search over the options
// of a relaxation of the configurations (the same edges relaxed in both),
// its answer on the true options (memorycap/relaxed_cap.h).
TechniqueChoice relaxed_under_cap(const Graph& graph, const CostModel& model, const CostTables& tables,
                                  const TrainingSetup& setup, const TechniqueSpace& techniques, uint64_t cap,
                                  const CapOptions& cap_options, const SolveOptions& solve) {
  BoundedOptions options;
  options.solve = solve;
  const std::vector<std::string> names = graph.vertex_names();
  const Relaxation relaxation = relax_to_fit(techniques.configurations(), names, options);
  OptionSpace relaxed = techniques.space;
  relaxed.objective = relax_edges(techniques.space.objective, relaxation.relaxed);
  SolveOptions unfolded = solve;  // its tables were sized unfolded (a relaxed block is no longer like the others)
  unfolded.fold = false;
  MemoryPricedDp dp(relaxed, relaxation.objective, names, unfolded);
  // The bounded solve without the cap (each configuration at its cheapest option) seeds the moves under it.
  const CheapestOptions cheapest = cheapest_options(techniques.space, techniques.configurations());
  Relaxation cheapest_relaxed = relaxation;  // the same edges, over the cheapest options' costs
  cheapest_relaxed.objective = relax_edges(cheapest.objective, relaxation.relaxed);
  const std::vector<int32_t> configs =
      solve_bounded(cheapest.objective, names, options, cheapest_relaxed).solution.choice;
  std::vector<int32_t> seed(configs.size());
  for (size_t v = 0; v < seed.size(); ++v) seed[v] = cheapest.option[v][static_cast<size_t>(configs[v])];
  const CappedSolution found =
      on_true_objective(solve_under_cap(dp, relaxed.objective, relaxed.memory, cap, cap_options),
                        techniques.space.objective, techniques.space.memory, std::move(seed));
  TechniqueChoice out =
      technique_choice(graph, model, tables, setup, techniques, found.choice, found, true, dp.plan(), dp.last_stats());
  out.bounded = relaxed_report(out.solution, found, relaxation.relaxed_edges);
  return out;
}

}  // namespace

TechniqueChoice choose_layer_techniques(const Graph& graph, const CostModel& model, const CostTables& tables,
                                        const TrainingSetup& setup, std::optional<uint64_t> cap,
                                        const CapOptions& cap_options, const SolveOptions& solve, bool exact) {
  const TechniqueSpace techniques(graph, model, tables, setup);
  try {
    MemoryPricedDp dp(techniques.space, techniques.configurations(), graph.vertex_names(), solve);
    const CappedSolution found = solve_under_cap(dp, techniques.space.objective, techniques.space.memory,
                                                 cap.value_or(std::numeric_limits<uint64_t>::max()), cap_options);
    return technique_choice(graph, model, tables, setup, techniques, found.choice, found, cap.has_value(), dp.plan(),
                            dp.last_stats());
  } catch (const LimitError&) {
    if (exact) throw;
    // Without a cap, the bounded solve plans and says why itself.
    if (!cap) return bounded_without_cap(graph, model, tables, setup, techniques, solve);
    // Under one, planned again only here, to say why.
    std::optional<ExactRefusal> refusal =
        past_exact_limits(techniques.configurations(), graph.vertex_names(), solve, exact);
    if (!refusal) throw;
    TechniqueChoice out = relaxed_under_cap(graph, model, tables, setup, techniques, *cap, cap_options, solve);
    out.refusal = std::move(refusal);
    return out;
  }
}

namespace {

// The option space with every block of `uniform`'s runs merged into its
// first: its configurations merged alike for the DP's tables.
struct MergedTechniques {
  UniformBlocks configs;  // the configurations' objective, merged
  UniformBlocks options;  // the options' objective, merged (its groups are `configs`')
  OptionSpace space;      // over the merged options
};

MergedTechniques merge_techniques(const Graph& graph, const TechniqueSpace& techniques, const UniformBlocks& uniform) {
  std::vector<int> representative(uniform.merged.size());
  for (size_t v = 0; v < representative.size(); ++v) {
    representative[v] = uniform.stands_for[static_cast<size_t>(uniform.merged[v])];
    if (!same_options(techniques.space, v, static_cast<size_t>(representative[v])))
      throw ResourceError("uniform blocks: layer '" + graph.vertices[v].name + "' has other recomputation or ZeRO "
                          "options than '" + graph.vertices[static_cast<size_t>(representative[v])].name +
                          "', whose configuration it takes; give one stage and one mode");
  }
  const std::vector<std::string> names = graph.vertex_names();
  MergedTechniques merged;
  merged.configs = merge_vertices(techniques.configurations(), names, representative);
  merged.options = merge_vertices(techniques.space.objective, names, representative);
  merged.space = merge_options(techniques.space, merged.options);
  return merged;
}

}  // namespace

TechniqueChoice choose_uniform_layer_techniques(const Graph& graph, const CostModel& model, const CostTables& tables,
                                                const TrainingSetup& setup, std::optional<uint64_t> cap,
                                                const CapOptions& cap_options, const SolveOptions& solve,
                                                const UniformBlocks& uniform) {
  const TechniqueSpace techniques(graph, model, tables, setup);
  const MergedTechniques merged = merge_techniques(graph, techniques, uniform);
  MemoryPricedDp dp(merged.space, merged.configs.objective, merged.options.names, solve);
  CappedSolution found = solve_under_cap(dp, merged.space.objective, merged.space.memory,
                                         cap.value_or(std::numeric_limits<uint64_t>::max()), cap_options);
  const std::vector<int32_t> expanded = expand_uniform(merged.options, found.choice);
  return technique_choice(graph, model, tables, setup, techniques, expanded, found, cap.has_value(),
                          expand_solution(merged.configs, dp.plan()), dp.last_stats());
}

double least_layer_costs_with_techniques(const Graph& graph, const CostModel& model, const CostTables& tables,
                                         const TrainingSetup& setup, std::optional<uint64_t> cap) {
  const TechniqueSpace techniques(graph, model, tables, setup);
  if (!cap) return least_vertex_costs(techniques.space.objective);
  return separable_cap_bound(techniques.space.objective, techniques.space.memory, *cap).bound;
}

std::vector<double> least_vertex_costs_with_techniques(const Graph& graph, const CostModel& model,
                                                       const CostTables& tables, const TrainingSetup& setup) {
  const TechniqueSpace techniques(graph, model, tables, setup);
  const Objective& options = techniques.space.objective;
  std::vector<double> least(options.vertex_count());
  for (size_t v = 0; v < least.size(); ++v)
    least[v] = *std::min_element(options.vertex_cost[v].begin(), options.vertex_cost[v].end());
  return least;
}

PricedBound layer_techniques_lagrangian_bound(const Graph& graph, const CostModel& model, const CostTables& tables,
                                              const TrainingSetup& setup, uint64_t cap, const SolveOptions& solve,
                                              bool round_price) {
  const TechniqueSpace techniques(graph, model, tables, setup);
  const PricedBound separable = separable_cap_bound(techniques.space.objective, techniques.space.memory, cap);
  if (!std::isfinite(separable.bound)) return separable;
  const double price = round_price ? rounded_price(separable.price) : separable.price;
  OptionSpace priced = techniques.space;
  priced.objective = priced_by_bytes(techniques.space.objective, techniques.space.memory, price);
  const Answer answer =
      solve_or_bound(cheapest_options(priced, techniques.configurations()).objective, graph.vertex_names(), solve, false);
  const double optimum = answer.bounded ? answer.bounded->lower_bound : answer.solution.cost;
  return {std::max(separable.bound, optimum - price * static_cast<double>(cap)), price};
}

TechniqueFrontier layer_technique_frontier(const Graph& graph, const CostModel& model, const CostTables& tables,
                                           const TrainingSetup& setup, const SolveOptions& solve,
                                           const UniformBlocks* uniform) {
  const TechniqueSpace techniques(graph, model, tables, setup);
  TechniqueFrontier out;
  if (uniform && !uniform->runs.empty()) {
    const MergedTechniques merged = merge_techniques(graph, techniques, *uniform);
    MemoryPricedDp dp(merged.space, merged.configs.objective, merged.options.names, solve);
    out.points = memory_frontier(dp, merged.space.objective, merged.space.memory);
    out.dp_runs = dp.runs();
    for (FrontierPoint& point : out.points)
      point.choice = techniques.space.configs_of(expand_uniform(merged.options, point.choice));
    return out;
  }
  MemoryPricedDp dp(techniques.space, techniques.configurations(), graph.vertex_names(), solve);
  out.points = memory_frontier(dp, techniques.space.objective, techniques.space.memory);
  out.dp_runs = dp.runs();
  for (FrontierPoint& point : out.points) point.choice = techniques.space.configs_of(point.choice);
  return out;
}

}  // namespace pase
