// Per-layer techniques inside the capped search: over the options of
// memorycap/vertex_options.h the memory-priced DP, the capped search and the
// frontier equal brute force over every (configuration, variant) per vertex,
// counted straight from the variants' own tables; on a priced graph the
// search over per-layer recomputation and ZeRO stages equals the best of
// every per-layer assignment, each priced as a graph of its own.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "dp/uniform_blocks.h"
#include "graphs/recompute.h"
#include "memorycap/memory_cap.h"
#include "memorycap/memory_frontier.h"
#include "memorycap/memory_priced_dp.h"
#include "memorycap/uniform_memory.h"
#include "memorycap/vertex_options.h"
#include "random_objective.h"
#include "solve/layer_techniques.h"
#include "test_support.h"

using namespace pase;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

CapOptions exhaustive_search() {
  CapOptions options;
  options.max_nodes = 1 << 20;
  options.max_search_work = UINT64_MAX;
  return options;
}

// One random variant of `base`: other vertex costs, random bytes.
struct Variant {
  Objective objective;
  MemoryTables memory;
};

Variant random_variant(std::mt19937& rng, const Objective& base) {
  Variant variant;
  variant.objective.vertex_cost.resize(base.vertex_count());
  variant.memory.offset.push_back(0);
  for (size_t v = 0; v < base.vertex_count(); ++v) {
    std::vector<double> cost;
    for (size_t s = 0; s < base.config_count(v); ++s) {
      cost.push_back(static_cast<double>(rng() % 40));
      variant.memory.weights.push_back(rng() % 60);
      variant.memory.activations.push_back(rng() % 30);
    }
    variant.objective.vertex_cost[v] = std::move(cost);
    variant.memory.offset.push_back(variant.memory.weights.size());
  }
  return variant;
}

struct Best {
  double cost = kInf;       // least cost within the cap
  double priced = kInf;     // least cost + lambda * bytes
  uint64_t least_bytes = ~uint64_t{0};
};

// Every (configuration, allowed variant) per vertex, priced from the
// variants' tables and the base's edges.
Best brute_force(const Objective& base, const std::vector<Variant>& variants, const std::vector<uint32_t>& allowed,
                 uint64_t cap, double lambda) {
  const size_t n = base.vertex_count();
  const size_t k = variants.size();
  Best best;
  std::vector<int32_t> digit(n, 0);  // configuration * k + variant
  std::vector<int32_t> config(n);
  while (true) {
    bool ok = true;
    double cost = 0;
    uint64_t bytes = 0;
    for (size_t v = 0; v < n && ok; ++v) {
      const size_t s = static_cast<size_t>(digit[v]) / k, variant = static_cast<size_t>(digit[v]) % k;
      ok = (allowed[v] >> variant & 1U) != 0;
      config[v] = static_cast<int32_t>(s);
      cost += variants[variant].objective.vertex_cost[v][s];
      bytes += variants[variant].memory.bytes(v, s);
    }
    if (ok) {
      for (const PairCost& pair : base.pairs) cost += pair.at(config[pair.u], config[pair.v]);
      if (bytes <= cap) best.cost = std::min(best.cost, cost);
      best.priced = std::min(best.priced, cost + lambda * static_cast<double>(bytes));
      best.least_bytes = std::min(best.least_bytes, bytes);
    }
    if (!test::next_assignment(digit, [&](size_t v) { return base.config_count(v) * k; })) return best;
  }
}

}  // namespace

TEST_CASE("options: the priced DP, the capped search and the frontier equal brute force over configurations and variants") {
  std::mt19937 rng(20261126);
  int cases = 0, variants_mixed = 0;
  for (int round = 0; round < 40; ++round) {
    CAPTURE(round);
    const Objective base = test::random_objective(rng, 2 + static_cast<int>(rng() % 4), 4, round % 2 == 1);
    const size_t k = 2 + rng() % 2;
    std::vector<Variant> variants;
    for (size_t i = 0; i < k; ++i) variants.push_back(random_variant(rng, base));
    // Identical blocks share arrays: let two vertices share rows in every variant, as repeated layers do.
    std::vector<uint32_t> allowed(base.vertex_count());
    for (uint32_t& mask : allowed) mask = 1U + static_cast<uint32_t>(rng() % ((1U << k) - 1));
    std::vector<VariantPrices> prices;
    for (const Variant& variant : variants) prices.push_back({&variant.objective, &variant.memory});
    const OptionSpace space = expand_options(base, prices, allowed);
    // Each option's cost and bytes are its variant's.
    for (size_t v = 0; v < base.vertex_count(); ++v)
      for (size_t o = 0; o < space.objective.config_count(v); ++o) {
        const size_t s = static_cast<size_t>(space.config[v][o]), variant = static_cast<size_t>(space.variant[v][o]);
        CHECK((allowed[v] >> variant & 1U) != 0);
        CHECK(space.objective.vertex_cost[v][o] == variants[variant].objective.vertex_cost[v][s]);
        CHECK(space.memory.bytes(v, o) == variants[variant].memory.bytes(v, s));
      }
    MemoryPricedDp dp(space, base, test::vertex_names(base.vertex_count()), SolveOptions{});
    for (double lambda : {0.0, 0.05, 0.3, 2.0}) {
      const PricedPoint point = dp.solve(lambda);
      CHECK(point.value == doctest::Approx(brute_force(base, variants, allowed, 0, lambda).priced).epsilon(1e-12));
      CHECK(point.cost == doctest::Approx(space.objective.evaluate(point.choice)).epsilon(1e-12));
    }
    const Best everything = brute_force(base, variants, allowed, ~uint64_t{0}, 0);
    CHECK(dp.least_bytes() == everything.least_bytes);
    for (double f : {-1.0, 0.0, 0.2, 0.5, 0.8, 1.5}) {
      const uint64_t cap = f < 0 ? everything.least_bytes - 1
                                 : everything.least_bytes + static_cast<uint64_t>(f * 60 * static_cast<double>(base.vertex_count()));
      CAPTURE(cap);
      ++cases;
      const CappedSolution result = solve_under_cap(dp, space.objective, space.memory, cap, exhaustive_search());
      if (f < 0) {
        CHECK_FALSE(result.feasible);
        CHECK(result.memory == everything.least_bytes);
        continue;
      }
      REQUIRE(result.feasible);
      CHECK(result.memory <= cap);
      CHECK(result.memory == plan_memory(space.memory, result.choice).total());
      CHECK(result.cost == doctest::Approx(brute_force(base, variants, allowed, cap, 0).cost).epsilon(1e-12));
      CHECK(result.gap == 0.0);
      const std::vector<int32_t> chosen = space.variants_of(result.choice);
      variants_mixed += std::any_of(chosen.begin(), chosen.end(), [&](int32_t c) { return c != chosen[0]; });
    }
    // The frontier: every point optimal under a cap of its own memory.
    for (const FrontierPoint& point : memory_frontier(dp, space.objective, space.memory)) {
      const double best = brute_force(base, variants, allowed, point.bytes.total(), 0).cost;
      CHECK(point.cost >= best * (1 - 1e-12));
      if (point.on_hull) CHECK(point.cost == doctest::Approx(best).epsilon(1e-12));
    }
  }
  CHECK(cases == 240);
  CHECK(variants_mixed > 0);  // the optimum does mix variants across vertices
}

namespace {

// The least cost within `cap` over every configuration of `graph` as priced.
double best_within(const Graph& graph, const CostModel& model, const TrainingSetup& setup, uint64_t cap) {
  const CostTables tables = build_cost_tables(graph, model);
  const MemoryTables memory = build_memory_tables(graph, tables, setup);
  const size_t n = graph.vertices.size();
  std::vector<int32_t> choice(n, 0);
  double best = kInf;
  while (true) {
    if (plan_memory(memory, choice).total() <= cap) best = std::min(best, tables.objective.evaluate(choice));
    if (!test::next_assignment(choice, [&](size_t v) { return tables.objective.config_count(v); })) return best;
  }
}

}  // namespace

TEST_CASE("choose_layer_techniques: equals the best per-layer assignment, each priced as its own graph") {
  const Graph graph = test::residual_block();  // on 4 devices: few enough strategies to enumerate
  const std::vector<char> boundary = block_boundaries(graph);
  REQUIRE(std::vector<char>(boundary.begin(), boundary.end()) == std::vector<char>{1, 0, 0, 1, 1});
  Machine machine;
  machine.devices = 4;
  TrainingSetup setup{Dtype::Bf16, Optimizer::Adam};
  setup.micro_batches = 2;
  setup.zero = kZeroAuto;
  setup.recompute = Recompute::Auto;
  const PaseCostModel model(machine, setup);
  const CostTables tables = build_cost_tables(graph, model);
  // Caps from the least memory any assignment needs to the uncapped optimum's.
  const TechniqueChoice none_fits = choose_layer_techniques(graph, model, tables, setup, 1, exhaustive_search(), {});
  REQUIRE(none_fits.capped);
  REQUIRE_FALSE(none_fits.capped->feasible);
  const uint64_t least = none_fits.capped->least_memory;
  const TechniqueChoice uncapped =
      choose_layer_techniques(graph, model, tables, setup, std::nullopt, exhaustive_search(), {});
  const uint64_t most = plan_memory(uncapped.memory, uncapped.solution.choice).total();
  REQUIRE(most > least);
  int mixed = 0;
  std::vector<uint64_t> caps = {least - 1, ~uint64_t{0}};
  for (double f : {0.0, 0.1, 0.25, 0.4, 0.6, 0.8})
    caps.push_back(least + static_cast<uint64_t>(f * static_cast<double>(most - least)));
  for (uint64_t cap : caps) {
    CAPTURE(cap);
    // Every assignment: a stage for each fc, recomputation for a and b (the rest are block boundaries).
    double best = kInf;
    for (int z1 = 0; z1 <= kMaxZeroStage; ++z1)
      for (int z2 = 0; z2 <= kMaxZeroStage; ++z2)
        for (int r = 0; r < 4; ++r) {
          Graph assigned = graph;
          assigned.vertices[0].zero = z1;
          assigned.vertices[4].zero = z2;
          assigned.vertices[1].recompute = (r & 1) != 0;
          assigned.vertices[2].recompute = (r & 2) != 0;
          best = std::min(best, best_within(assigned, model, setup, cap));
        }
    const std::optional<uint64_t> given = cap == ~uint64_t{0} ? std::nullopt : std::optional<uint64_t>(cap);
    const TechniqueChoice chosen =
        choose_layer_techniques(graph, model, tables, setup, given, exhaustive_search(), SolveOptions{});
    if (best == kInf) {
      REQUIRE(chosen.capped);
      CHECK_FALSE(chosen.capped->feasible);
      continue;
    }
    CHECK(chosen.solution.cost == doctest::Approx(best).epsilon(1e-12));
    if (given) {
      REQUIRE(chosen.capped);
      CHECK(chosen.capped->gap == 0.0);
      CHECK(plan_memory(chosen.memory, chosen.solution.choice).total() <= cap);
    }
    // The graph says what was chosen, and its own tables price the strategy at the optimum.
    CHECK_FALSE(chosen.graph.vertices[0].recompute);
    CHECK_FALSE(chosen.graph.vertices[3].recompute);
    const CostTables own = build_cost_tables(chosen.graph, model);
    CHECK(own.objective.evaluate(chosen.solution.choice) == doctest::Approx(best).epsilon(1e-12));
    mixed += chosen.graph.vertices[0].zero != chosen.graph.vertices[4].zero ||
             chosen.graph.vertices[1].recompute != chosen.graph.vertices[2].recompute;
  }
  CHECK(mixed > 0);  // some cap asks for different techniques on different layers
}

TEST_CASE("options under uniform blocks: the capped search equals brute force over one option per block position") {
  std::mt19937 rng(20261127);
  int cases = 0, dearer = 0;
  for (int round = 0; round < 16; ++round) {
    CAPTURE(round);
    const int size = 2 + round % 2, blocks = 2 + (round / 2) % 2;
    const Objective base = test::repeated_blocks(rng, size, blocks, 1);
    const std::vector<std::string> names = test::vertex_names(base.vertex_count());
    const UniformBlocks uniform = uniform_blocks(base, names, [&](int v, int w) {
      return base.config_count(static_cast<size_t>(v)) == base.config_count(static_cast<size_t>(w));
    });
    if (uniform.runs.empty()) continue;
    // Variants alike by block position (as a model's repeated layers are), each vertex's own elsewhere.
    const size_t n = base.vertex_count(), k = 2;
    std::vector<int> position(n);
    for (size_t v = 0; v < n; ++v)
      position[v] = v >= 1 && v < 1 + static_cast<size_t>(size * blocks) ? static_cast<int>((v - 1) % static_cast<size_t>(size))
                                                                          : static_cast<int>(v) + size;
    std::vector<Variant> variants(k);
    for (Variant& variant : variants) {
      const Variant drawn = random_variant(rng, base);
      variant.objective.vertex_cost.resize(n);
      variant.memory.offset.push_back(0);
      for (size_t v = 0; v < n; ++v) {
        size_t from = v;  // the first vertex at v's position: its prices are every such vertex's
        for (size_t w = 0; w < n; ++w)
          if (position[w] == position[v]) {
            from = w;
            break;
          }
        variant.objective.vertex_cost[v] = drawn.objective.vertex_cost[from];
        for (size_t s = 0; s < base.config_count(v); ++s) {
          variant.memory.weights.push_back(drawn.memory.weights[drawn.memory.offset[from] + s]);
          variant.memory.activations.push_back(drawn.memory.activations[drawn.memory.offset[from] + s]);
        }
        variant.memory.offset.push_back(variant.memory.weights.size());
      }
    }
    std::vector<VariantPrices> prices;
    for (const Variant& variant : variants) prices.push_back({&variant.objective, &variant.memory});
    const OptionSpace space = expand_options(base, prices, std::vector<uint32_t>(n, 3U));
    std::vector<int> representative(n);
    for (size_t v = 0; v < n; ++v) representative[v] = uniform.stands_for[static_cast<size_t>(uniform.merged[v])];
    const UniformBlocks options = merge_vertices(space.objective, names, representative);
    const OptionSpace merged = merge_options(space, options);
    const UniformBlocks configs = merge_vertices(base, names, representative);
    MemoryPricedDp dp(merged, configs.objective, options.names, SolveOptions{});
    // Brute force: one option per group, priced in the original option space.
    auto best_within = [&](uint64_t cap) {
      std::vector<int32_t> digits(options.objective.vertex_count(), 0), choice(n);
      double best = kInf;
      do {
        for (size_t v = 0; v < n; ++v) choice[v] = digits[static_cast<size_t>(uniform.merged[v])];
        if (plan_memory(space.memory, choice).total() <= cap) best = std::min(best, space.objective.evaluate(choice));
      } while (test::next_assignment(digits, [&](size_t w) { return options.objective.config_count(w); }));
      return best;
    };
    MemoryPricedDp free_dp(space, base, names, SolveOptions{});
    for (double f : {0.0, 0.3, 0.6, 1.0, 3.0}) {
      const uint64_t cap = dp.least_bytes() + static_cast<uint64_t>(f * 40 * static_cast<double>(n));
      CAPTURE(cap);
      ++cases;
      const CappedSolution result = solve_under_cap(dp, merged.objective, merged.memory, cap, exhaustive_search());
      REQUIRE(result.feasible);
      CHECK(result.cost == doctest::Approx(best_within(cap)).epsilon(1e-12));
      const std::vector<int32_t> expanded = expand_uniform(options, result.choice);
      CHECK(space.objective.evaluate(expanded) == doctest::Approx(result.cost).epsilon(1e-12));
      CHECK(plan_memory(space.memory, expanded).total() == result.memory);
      CHECK(result.memory <= cap);
      const CappedSolution free = solve_under_cap(free_dp, space.objective, space.memory, cap, exhaustive_search());
      CHECK(result.cost >= free.cost * (1 - 1e-12));
      dearer += result.cost > free.cost * (1 + 1e-9);
    }
  }
  CHECK(cases >= 40);
  CHECK(dearer > 0);  // the restriction does cost something in some cases
}
