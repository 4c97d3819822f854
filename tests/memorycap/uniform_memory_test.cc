// Uniform blocks under a memory cap (memorycap/uniform_memory.h): the capped
// search over the merged objective and merged bytes is, on random deep
// objectives, the optimum over the uniform strategies that fit, found by brute
// force with every strategy's bytes counted in the original tables.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "dp/uniform_blocks.h"
#include "memorycap/memory_cap.h"
#include "memorycap/memory_priced_dp.h"
#include "memorycap/uniform_memory.h"
#include "random_objective.h"

using namespace pase;

namespace {

struct Uniform {
  double cost = std::numeric_limits<double>::infinity();
  std::vector<uint64_t> bytes;  // of every uniform strategy, to choose caps from
};

// Every strategy constant on `group`'s groups: the cheapest within `cap`.
Uniform brute_force(const Objective& objective, const MemoryTables& memory, const std::vector<int>& group,
                    uint64_t cap) {
  std::vector<int> member;
  for (size_t v = 0; v < group.size(); ++v)
    if (static_cast<size_t>(group[v]) == member.size()) member.push_back(static_cast<int>(v));
  std::vector<int32_t> digits(member.size(), 0), choice(group.size(), 0);
  Uniform out;
  do {
    for (size_t v = 0; v < choice.size(); ++v) choice[v] = digits[static_cast<size_t>(group[v])];
    const uint64_t bytes = plan_memory(memory, choice).total();
    out.bytes.push_back(bytes);
    if (bytes <= cap) out.cost = std::min(out.cost, objective.evaluate(choice));
  } while (test::next_assignment(digits, [&](size_t i) { return objective.config_count(static_cast<size_t>(member[i])); }));
  return out;
}

}  // namespace

TEST_CASE("uniform blocks under a cap: the merged capped search is brute force's over uniform strategies that fit") {
  std::mt19937 rng(31);
  int checked = 0;
  for (int trial = 0; trial < 30; ++trial) {
    CAPTURE(trial);
    const Objective objective = test::repeated_blocks(rng, 2 + trial % 2, 3 + trial % 2, 1 + trial % 2);
    const MemoryTables memory = test::random_memory(rng, objective, 40, 40);
    const UniformBlocks uniform = uniform_blocks(objective, test::vertex_names(objective.vertex_count()),
                                                 [&](int v, int w) {
                                                   return objective.config_count(static_cast<size_t>(v)) ==
                                                          objective.config_count(static_cast<size_t>(w));
                                                 });
    if (uniform.runs.empty()) continue;
    std::vector<uint64_t> bytes = brute_force(objective, memory, uniform.merged, ~uint64_t{0}).bytes;
    std::sort(bytes.begin(), bytes.end());
    const MemoryTables merged = merge_memory_tables(memory, uniform);
    for (const uint64_t cap : {bytes[bytes.size() / 4], bytes[bytes.size() / 2]}) {
      CAPTURE(cap);
      SolveOptions options;
      options.dp.threads = 1;
      MemoryPricedDp dp(uniform.objective, uniform.names, merged, options);
      const CappedSolution capped = solve_under_cap(dp, uniform.objective, merged, cap);
      const double correct = brute_force(objective, memory, uniform.merged, cap).cost;
      REQUIRE(capped.feasible);
      CHECK(capped.lower_bound <= correct * (1 + 1e-12));
      CHECK(capped.cost >= correct * (1 - 1e-12));
      if (capped.gap == 0) CHECK(capped.cost == doctest::Approx(correct).epsilon(1e-12));
      const std::vector<int32_t> choice = expand_uniform(uniform, capped.choice);
      CHECK(plan_memory(memory, choice).total() == capped.memory);
      CHECK(capped.memory <= cap);
      CHECK(objective.evaluate(choice) == doctest::Approx(capped.cost).epsilon(1e-12));
      ++checked;
    }
  }
  CHECK(checked >= 40);
}
