// Uniform blocks (dp/uniform_blocks.h): the DP over the merged objective is
// the optimum over the strategies that give every block of a run the first
// block's configurations, checked against brute force over exactly those
// strategies; the expanded strategy prices at it in the original objective,
// and never below the free optimum.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "dp/chain_find.h"
#include "dp/solve.h"
#include "dp/uniform_blocks.h"
#include "random_objective.h"

using namespace pase;

namespace {

// The least cost over every strategy that gives all the vertices of a group
// (`group`: per vertex, its group) one configuration: an odometer over the
// groups, each strategy priced in the original objective.
double brute_force_uniform(const Objective& objective, const std::vector<int>& group) {
  std::vector<int> member;  // one vertex per group
  for (size_t v = 0; v < group.size(); ++v)
    if (static_cast<size_t>(group[v]) == member.size()) member.push_back(static_cast<int>(v));
  std::vector<int32_t> digits(member.size(), 0), choice(objective.vertex_count(), 0);
  double best = std::numeric_limits<double>::infinity();
  do {
    for (size_t v = 0; v < choice.size(); ++v) choice[v] = digits[static_cast<size_t>(group[v])];
    best = std::min(best, objective.evaluate(choice));
  } while (test::next_assignment(digits, [&](size_t i) { return objective.config_count(static_cast<size_t>(member[i])); }));
  return best;
}

// Vertices alike by their configurations' count (a random objective's are alike in nothing else).
bool same_count(const Objective& objective, int v, int w) {
  return objective.config_count(static_cast<size_t>(v)) == objective.config_count(static_cast<size_t>(w));
}

}  // namespace

TEST_CASE("uniform blocks: the merged objective's optimum is brute force's over uniform strategies") {
  std::mt19937 rng(2024);
  int runs = 0, dearer = 0;
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const int separators = 1 + trial % 2;
    // Small enough to enumerate: a prefix, blocks of 2-3 vertices, a suffix.
    const Objective objective = test::repeated_blocks(rng, 2 + trial % 2, 3 + trial % 3, separators);
    const std::vector<std::string> names = test::vertex_names(objective.vertex_count());
    const std::optional<ChainFold> run = find_chain(objective);
    if (!run) continue;
    ++runs;
    const UniformBlocks uniform =
        uniform_blocks(objective, names, [&](int v, int w) { return same_count(objective, v, w); });
    REQUIRE(uniform.runs.size() == 1);
    CHECK(uniform.runs[0].blocks == run->blocks);
    CHECK(uniform.runs[0].period == run->period);
    CHECK(uniform.runs[0].first == static_cast<int>(run->first));
    CHECK(uniform.objective.vertex_count() ==
          objective.vertex_count() - (run->blocks - 1) * run->period - uniform.runs[0].extended);
    for (size_t v = run->first; v < run->first + run->blocks * run->period; ++v)
      CHECK(uniform.merged[v] == uniform.merged[run->first + (v - run->first) % run->period]);
    SolveOptions options;
    options.dp.threads = 1;
    const Solution merged = solve(uniform.objective, uniform.names, options);
    const double correct = brute_force_uniform(objective, uniform.merged);
    CHECK(merged.cost == doctest::Approx(correct).epsilon(1e-12));
    const std::vector<int32_t> choice = expand_uniform(uniform, merged.choice);
    CHECK(objective.evaluate(choice) == doctest::Approx(merged.cost).epsilon(1e-12));
    for (size_t v = run->first + run->period; v < run->first + run->blocks * run->period; ++v)
      CHECK(choice[v] == choice[run->first + (v - run->first) % run->period]);
    const double free_optimum = solve(objective, names, options).cost;
    CHECK(free_optimum <= merged.cost * (1 + 1e-12));
    dearer += free_optimum < merged.cost * (1 - 1e-9);
  }
  MESSAGE(runs << " runs made uniform, " << dearer << " of them dearer than the free optimum");
  CHECK(runs >= 30);
  CHECK(dearer > 0);  // the restriction binds somewhere, or the test would not tell
}

TEST_CASE("uniform blocks: an objective without repeated blocks is left as it is") {
  std::mt19937 rng(7);
  const Objective objective = test::random_objective(rng, 7, 3, false);
  const UniformBlocks uniform = uniform_blocks(objective, test::vertex_names(objective.vertex_count()),
                                               [&](int v, int w) { return same_count(objective, v, w); });
  CHECK(uniform.runs.empty());
  CHECK(uniform.objective.vertex_count() == objective.vertex_count());
  std::vector<int32_t> choice(objective.vertex_count(), 0);
  CHECK(uniform.objective.evaluate(choice) == objective.evaluate(choice));
}

TEST_CASE("uniform blocks: a residual stream's edge to its own copy is a cost on the merged vertex") {
  // prefix - [a - s] x3 - suffix, every edge of the path "5 unless equal",
  // and each separator s also feeding the next block's s (a residual
  // stream) at 1 or 7 when equal: merged, the s -> a edges join the one
  // block's a and s, and the s -> s edges become a cost on s.
  Objective objective;
  objective.vertex_cost = {{0, 4}, {1, 0}, {0, 2}, {1, 0}, {0, 2}, {1, 0}, {0, 2}, {3, 0}};
  auto cross = std::make_shared<std::vector<double>>(std::vector<double>{0, 5, 5, 0});
  auto stream = std::make_shared<std::vector<double>>(std::vector<double>{1, 5, 5, 7});
  const SharedArray<int32_t> identity = std::vector<int32_t>{0, 1};
  auto add = [&](int u, int v, std::shared_ptr<const std::vector<double>> cost) {
    PairCost pair;
    pair.u = u;
    pair.v = v;
    pair.u_class = pair.v_class = identity;
    pair.u_classes = pair.v_classes = 2;
    pair.cost = std::move(cost);
    objective.pairs.push_back(pair);
  };
  for (int v = 0; v + 1 < 8; ++v) add(v, v + 1, cross);
  for (int v : {0, 2, 4}) add(v, v + 2, stream);  // the prefix too, so the first block is alike
  const UniformBlocks uniform =
      uniform_blocks(objective, test::vertex_names(8), [&](int v, int w) { return same_count(objective, v, w); });
  REQUIRE(uniform.runs.size() == 1);
  CHECK(uniform.runs[0].blocks == 3);
  CHECK(uniform.runs[0].period == 2);
  CHECK(uniform.objective.vertex_count() == 4);
  // prefix -> a, prefix -> s, a -> s (the matrix times 3), s -> a (times 2), s -> suffix.
  CHECK(uniform.objective.pairs.size() == 5);
  const std::vector<int32_t> all_zero(4, 0), all_one(4, 1);
  // Vertices, then the two s -> s edges on s's diagonal, then prefix -> s.
  CHECK(uniform.objective.evaluate(all_zero) == 0 + 3 * 1 + 3 * 0 + 3 + 2 * 1 + 1);
  CHECK(uniform.objective.evaluate(all_one) == 4 + 0 + 3 * 2 + 0 + 2 * 7 + 7);
  for (const std::vector<int32_t>& merged : {all_zero, all_one})
    CHECK(objective.evaluate(expand_uniform(uniform, merged)) == uniform.objective.evaluate(merged));
}

TEST_CASE("uniform blocks: a run found inside the model's blocks takes the block cut in two by its ends too") {
  // prefix p, then four blocks [x y], then a suffix q. The prefix feeds x0 by
  // another matrix than y feeds the next x, so the first block is not alike
  // and the run found is [y0 x1] [y1 x2] [y2 x3]: x0 before it and y3 after
  // it make up one more block, merged too, so every x and every y is one.
  Objective objective;
  objective.vertex_cost = {{0, 1, 2}, {3, 1}, {0, 4}, {3, 1}, {0, 4}, {3, 1}, {0, 4}, {3, 1}, {0, 4}, {2, 2}};
  const SharedArray<int32_t> two = std::vector<int32_t>{0, 1}, three = std::vector<int32_t>{0, 1, 2};
  auto matrix = [](std::vector<double> values) { return std::make_shared<const std::vector<double>>(std::move(values)); };
  const auto xy = matrix({0, 2, 3, 0}), yx = matrix({0, 5, 1, 0}), px = matrix({0, 1, 1, 0, 2, 2}), yq = matrix({1, 0, 0, 1});
  auto add = [&](int u, int v, const SharedArray<int32_t>& u_class, const std::shared_ptr<const std::vector<double>>& cost) {
    PairCost pair;
    pair.u = u;
    pair.v = v;
    pair.u_class = u_class;
    pair.v_class = two;
    pair.u_classes = static_cast<int32_t>(u_class.size());
    pair.v_classes = 2;
    pair.cost = cost;
    objective.pairs.push_back(pair);
  };
  add(0, 1, three, px);
  for (int b = 0; b < 4; ++b) {
    add(1 + 2 * b, 2 + 2 * b, two, xy);
    add(2 + 2 * b, b < 3 ? 3 + 2 * b : 9, two, b < 3 ? yx : yq);
  }
  const UniformBlocks uniform =
      uniform_blocks(objective, test::vertex_names(10), [&](int v, int w) { return same_count(objective, v, w); });
  REQUIRE(uniform.runs.size() == 1);
  CHECK(uniform.runs[0].first == 2);  // y0
  CHECK(uniform.runs[0].blocks == 3);
  CHECK(uniform.runs[0].extended == 2);
  for (int b = 1; b < 4; ++b) {
    CHECK(uniform.merged[static_cast<size_t>(1 + 2 * b)] == uniform.merged[1]);
    CHECK(uniform.merged[static_cast<size_t>(2 + 2 * b)] == uniform.merged[2]);
  }
  CHECK(uniform.objective.vertex_count() == 4);
  SolveOptions options;
  options.dp.threads = 1;
  const Solution merged = solve(uniform.objective, uniform.names, options);
  CHECK(merged.cost == brute_force_uniform(objective, uniform.merged));
  CHECK(objective.evaluate(expand_uniform(uniform, merged.choice)) == merged.cost);
}
