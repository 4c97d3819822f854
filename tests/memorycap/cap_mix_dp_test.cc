// The mix DP under a memory cap (memorycap/cap_mix_dp.h): on an exact grid (a
// byte per unit) its answer is the cheapest strategy within the cap among
// the given strategies' configurations, by brute force over that product;
// on a coarse grid every answer still fits, costs no less, and costs no more
// than the reference when that fits; graphs of several components share the
// budget; every order kind gives the same.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "costmodel/memory_model.h"
#include "memorycap/cap_mix_dp.h"
#include "dp/ordering.h"
#include "random_objective.h"
#include "test_support.h"

using namespace pase;

namespace {

// Random bytes per configuration: `scale` times up to 38, plus up to 2 * (jitter - 1).
MemoryTables random_memory(std::mt19937& rng, const Objective& objective, uint64_t scale, uint64_t jitter) {
  MemoryTables memory;
  memory.offset.push_back(0);
  for (size_t v = 0; v < objective.vertex_count(); ++v) {
    for (size_t s = 0; s < objective.config_count(v); ++s) {
      memory.weights.push_back(scale * (rng() % 20) + rng() % jitter);
      memory.activations.push_back(scale * (rng() % 20) + rng() % jitter);
    }
    memory.offset.push_back(memory.weights.size());
  }
  return memory;
}

// Two objectives side by side: one graph of two components.
Objective side_by_side(const Objective& a, const Objective& b) {
  Objective joined = a;
  const int shift = static_cast<int>(a.vertex_count());
  for (const SharedArray<double>& cost : b.vertex_cost) joined.vertex_cost.push_back(cost);
  for (PairCost pair : b.pairs) {
    pair.u += shift;
    pair.v += shift;
    joined.pairs.push_back(pair);
  }
  return joined;
}

struct Restricted {
  double best = std::numeric_limits<double>::infinity();  // within the cap
  uint64_t least = std::numeric_limits<uint64_t>::max();  // least bytes of the product
  uint64_t most = 0;
};

// Every strategy whose vertex v takes one of `allowed[v]` (odometer).
Restricted brute_force_mix(const Objective& objective, const MemoryTables& memory,
                           const std::vector<std::vector<int32_t>>& allowed, uint64_t cap) {
  Restricted result;
  const size_t n = objective.vertex_count();
  std::vector<size_t> digit(n, 0);
  std::vector<int32_t> choice(n);
  while (true) {
    for (size_t v = 0; v < n; ++v) choice[v] = allowed[v][digit[v]];
    const uint64_t bytes = plan_memory(memory, choice).total();
    result.least = std::min(result.least, bytes);
    result.most = std::max(result.most, bytes);
    if (bytes <= cap) result.best = std::min(result.best, objective.evaluate(choice));
    size_t i = 0;
    for (; i < n; ++i) {
      if (++digit[i] < allowed[i].size()) break;
      digit[i] = 0;
    }
    if (i == n) return result;
  }
}

std::vector<std::vector<int32_t>> random_strategies(std::mt19937& rng, const Objective& objective, int count) {
  std::vector<std::vector<int32_t>> strategies(static_cast<size_t>(count));
  for (auto& strategy : strategies)
    for (size_t v = 0; v < objective.vertex_count(); ++v)
      strategy.push_back(static_cast<int32_t>(rng() % objective.config_count(v)));
  return strategies;
}

std::vector<std::vector<int32_t>> allowed_of(const std::vector<std::vector<int32_t>>& strategies, size_t n) {
  std::vector<std::vector<int32_t>> allowed(n);
  for (size_t v = 0; v < n; ++v) {
    for (const auto& strategy : strategies) allowed[v].push_back(strategy[v]);
    std::sort(allowed[v].begin(), allowed[v].end());
    allowed[v].erase(std::unique(allowed[v].begin(), allowed[v].end()), allowed[v].end());
  }
  return allowed;
}

}  // namespace

TEST_CASE("best_mix_under_cap") {
  std::mt19937 rng(20250611);
  SUBCASE("an exact grid: brute force over the strategies' configurations, every order") {
    int cases = 0, found = 0;
    const int rounds = test::sanitized_rounds(40);
    for (int round = 0; round < rounds; ++round) {
      Objective objective = test::random_objective(rng, 2 + static_cast<int>(rng() % 6), 5, round % 2 == 1);
      if (round % 4 == 3)  // two components
        objective = side_by_side(objective, test::random_objective(rng, 2 + static_cast<int>(rng() % 3), 4, true));
      const size_t n = objective.vertex_count();
      const MemoryTables memory = random_memory(rng, objective, /*scale=*/1, /*jitter=*/1);
      const auto strategies = random_strategies(rng, objective, 2 + static_cast<int>(rng() % 2));
      std::vector<const std::vector<int32_t>*> from;
      for (const auto& strategy : strategies) from.push_back(&strategy);
      const auto allowed = allowed_of(strategies, n);
      const Restricted span = brute_force_mix(objective, memory, allowed, 0);
      for (double f : {-1.0, 0.0, 0.2, 0.5, 0.8, 1.0}) {
        const uint64_t cap = f < 0 ? span.least - 1 : span.least + static_cast<uint64_t>(f * static_cast<double>(span.most - span.least));
        const Restricted correct = brute_force_mix(objective, memory, allowed, cap);
        for (OrderKind kind : all_order_kinds()) {
          CAPTURE(round);
          CAPTURE(cap);
          CAPTURE(order_kind_name(kind));
          const EliminationPlan plan = make_plan(undirected_neighbours(objective), kind, objective.config_counts());
          CapMixOptions options;
          options.relative = kind != OrderKind::MinDegree;  // the grid over the slack, on one order
          const CapMix mix = best_mix_under_cap(objective, memory, plan, from, cap, options);
          ++cases;
          if (f < 0) {
            CHECK(mix.choice.empty());
            continue;
          }
          REQUIRE(mix.units > 0);
          // At most 11 vertices, each within 38 bytes of the reference (or
          // of its least): at most 418 bytes over 512 (or 1024) units, one
          // byte per unit.
          CHECK(mix.unit_bytes == 1);
          REQUIRE(mix.choice.size() == n);
          ++found;
          for (size_t v = 0; v < n; ++v)
            CHECK(std::find(allowed[v].begin(), allowed[v].end(), mix.choice[v]) != allowed[v].end());
          CHECK(plan_memory(memory, mix.choice).total() <= cap);
          CHECK(objective.evaluate(mix.choice) == doctest::Approx(correct.best).epsilon(1e-12));
        }
      }
    }
    CHECK(cases == rounds * 6 * static_cast<int>(all_order_kinds().size()));
    CHECK(found == rounds * 5 * static_cast<int>(all_order_kinds().size()));
  }
  SUBCASE("a coarse grid: every answer fits and costs at least the best mix") {
    int found = 0;
    for (int round = 0; round < 40; ++round) {
      const Objective objective = test::random_objective(rng, 3 + static_cast<int>(rng() % 5), 5, round % 2 == 1);
      const size_t n = objective.vertex_count();
      const MemoryTables memory = random_memory(rng, objective, /*scale=*/1000003, /*jitter=*/50);
      const auto strategies = random_strategies(rng, objective, 3);
      std::vector<const std::vector<int32_t>*> from;
      for (const auto& strategy : strategies) from.push_back(&strategy);
      const auto allowed = allowed_of(strategies, n);
      const Restricted span = brute_force_mix(objective, memory, allowed, 0);
      for (double f : {0.0, 0.3, 0.6, 0.9, 1.0}) {
        const uint64_t cap = span.least + static_cast<uint64_t>(f * static_cast<double>(span.most - span.least));
        const Restricted correct = brute_force_mix(objective, memory, allowed, cap);
        CAPTURE(round);
        CAPTURE(cap);
        CapMixOptions options;
        options.max_units = 8;
        options.relative = round % 3 != 2;  // a third on the grid over the slack
        const CapMix mix = best_mix_under_cap(objective, memory,
                                              make_plan(undirected_neighbours(objective), OrderKind::MinDegree,
                                                        objective.config_counts()),
                                              from, cap, options);
        if (!options.relative && f == 0.0) {  // the least-memory mix counts no units at all
          REQUIRE(!mix.choice.empty());
          CHECK(plan_memory(memory, mix.choice).total() == cap);
          continue;
        }
        REQUIRE(mix.units == 8);
        CHECK(mix.unit_bytes > 1);
        // The reference keeps every vertex at 0 units: when it fits, the mix
        // finds it or something cheaper.
        if (options.relative && plan_memory(memory, strategies[0]).total() <= cap) {
          REQUIRE(!mix.choice.empty());
          CHECK(objective.evaluate(mix.choice) <= objective.evaluate(strategies[0]));
        }
        if (mix.choice.empty()) continue;
        ++found;
        CHECK(plan_memory(memory, mix.choice).total() <= cap);
        CHECK(objective.evaluate(mix.choice) >= correct.best * (1 - 1e-12));
      }
    }
    CHECK(found > 40);
  }
  SUBCASE("a budget too small for the coarsest grid: no answer, no work") {
    const Objective objective = test::random_objective(rng, 6, 5, false);
    const MemoryTables memory = random_memory(rng, objective, 1, 1);
    const auto strategies = random_strategies(rng, objective, 3);
    CapMixOptions options;
    options.max_work = 1;
    const CapMix mix = best_mix_under_cap(objective, memory,
                                          make_plan(undirected_neighbours(objective), OrderKind::MinDegree, objective.config_counts()),
                                          {&strategies[0], &strategies[1], &strategies[2]}, ~uint64_t{0} >> 1, options);
    CHECK(mix.choice.empty());
    CHECK(mix.units == 0);
    CHECK(mix.work == 0);
  }
}
