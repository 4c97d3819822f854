#include "solve/layer_techniques.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "graphs/recompute.h"
#include "base/error.h"
#include "memorycap/memory_priced_dp.h"
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

Graph with_variant(const Graph& graph, const LayerTechnique& variant, const std::vector<char>& boundary) {
  Graph out = graph;
  std::vector<LayerTechnique> each(out.vertices.size());
  for (size_t v = 0; v < each.size(); ++v) each[v] = on_layer(variant, boundary[v] != 0);
  set_layer_techniques(out, each);
  return out;
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
    for (size_t k = 0; k < variants.size(); ++k) {
      const Graph g = with_variant(graph, variants[k], boundary);
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

TechniqueChoice choose_layer_techniques(const Graph& graph, const CostModel& model, const CostTables& tables,
                                        const TrainingSetup& setup, std::optional<uint64_t> cap,
                                        const CapOptions& cap_options, const SolveOptions& solve) {
  const TechniqueSpace techniques(graph, model, tables, setup);
  MemoryPricedDp dp(techniques.space, techniques.configurations(), graph.vertex_names(), solve);
  const CappedSolution found = solve_under_cap(dp, techniques.space.objective, techniques.space.memory,
                                               cap.value_or(std::numeric_limits<uint64_t>::max()), cap_options);
  return technique_choice(graph, model, tables, setup, techniques, found.choice, found, cap.has_value(), dp.plan(),
                          dp.last_stats());
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
                                         const TrainingSetup& setup) {
  return least_vertex_costs(TechniqueSpace(graph, model, tables, setup).space.objective);
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
