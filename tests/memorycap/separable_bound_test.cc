// The bounds without a branch and bound (memorycap/separable_bound.h): on
// small random objectives, against every assignment within the cap, the
// separable bound is at most the capped optimum and at least the least
// vertex costs, infinite exactly when nothing fits; the DP over the priced
// objective less price x cap is a bound at any price; a hand case gives the
// dual's value.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "costmodel/memory_model.h"
#include "dp/solve.h"
#include "memorycap/separable_bound.h"
#include "random_objective.h"
#include "test_support.h"

using namespace pase;

namespace {

// The least cost of any assignment within `cap` (infinity: none fits), and the least bytes of any.
std::pair<double, uint64_t> capped_brute_force(const Objective& objective, const MemoryTables& memory, uint64_t cap) {
  double best = std::numeric_limits<double>::infinity();
  uint64_t least = ~uint64_t{0};
  std::vector<int32_t> choice(objective.vertex_count(), 0);
  do {
    const uint64_t bytes = plan_memory(memory, choice).total();
    least = std::min(least, bytes);
    if (bytes <= cap) best = std::min(best, objective.evaluate(choice));
  } while (test::next_assignment(choice, [&](size_t v) { return objective.config_count(v); }));
  return {best, least};
}

}  // namespace

TEST_CASE("the separable bound is below the capped optimum, above the least costs, infinite where nothing fits") {
  std::mt19937 rng(20261128);
  int binding = 0, lagrangian_tighter = 0;
  for (int round = 0; round < test::sanitized_rounds(60); ++round) {
    const Objective objective = test::random_objective(rng, 2 + static_cast<int>(rng() % 5), 5, round % 2 == 1);
    const MemoryTables memory = test::random_memory(rng, objective, 100, 50);
    const double least_costs = least_vertex_costs(objective);
    const uint64_t least_bytes = capped_brute_force(objective, memory, 0).second;
    for (uint64_t extra : {uint64_t{0}, uint64_t{10}, uint64_t{40}, uint64_t{100}, uint64_t{1000}}) {
      const uint64_t cap = least_bytes + extra;
      CAPTURE(round);
      CAPTURE(cap);
      const double optimum = capped_brute_force(objective, memory, cap).first;
      const PricedBound bound = separable_cap_bound(objective, memory, cap);
      CHECK(bound.bound >= least_costs);
      CHECK(bound.bound <= optimum * (1 + 1e-12));
      CHECK(bound.price >= 0);
      binding += bound.price > 0;
      // The priced DP, at the bound's price and at others: each a bound, and with the edges at least the separable one at its price.
      for (double factor : {0.0, 0.5, 1.0, 3.0}) {
        const double price = bound.price * factor;
        const double priced =
            solve(priced_by_bytes(objective, memory, price), test::vertex_names(objective.vertex_count()), SolveOptions{}).cost -
            price * double(cap);
        CHECK(priced <= optimum * (1 + 1e-12));
        if (factor == 1.0) {
          CHECK(priced >= bound.bound - 1e-9 * std::max(1.0, std::fabs(bound.bound)));
          lagrangian_tighter += priced > bound.bound + 1e-9;
        }
      }
    }
    CHECK(separable_cap_bound(objective, memory, least_bytes - 1).bound == std::numeric_limits<double>::infinity());
  }
  CHECK(binding > 20);             // caps below the least costs' bytes were tried
  CHECK(lagrangian_tighter > 10);  // and the edges raised the bound there
}

TEST_CASE("the separable bound of one vertex is the dual's value: the cheaper configuration mixed to fill the cap") {
  // Configuration 0: cost 0, 10 bytes; configuration 1: cost 1, 0 bytes. Cap 5:
  // max over mu of min(10 mu, 1) - 5 mu = 1/2 at mu = 1/10 (the LP's half-and-half).
  Objective objective;
  objective.vertex_cost = {std::vector<double>{0.0, 1.0}};
  MemoryTables memory;
  memory.offset = {0, 2};
  memory.weights = {10, 0};
  memory.activations = {0, 0};
  const PricedBound bound = separable_cap_bound(objective, memory, 5);
  CHECK(bound.bound == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(bound.price == doctest::Approx(0.1).epsilon(1e-6));
  CHECK(separable_cap_bound(objective, memory, 10).bound == 0.0);  // the cheaper one fits
  CHECK(separable_cap_bound(objective, memory, 10).price == 0.0);
  CHECK(separable_cap_bound(objective, memory, 0).bound == doctest::Approx(1.0).epsilon(1e-9));  // only the other fits
}
