// Bounds over every split of the devices among the stages
// (stages/split_bounds.h): against brute force over every split and every
// partition of small random problems, and a case by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "stages/device_splits.h"
#include "stages/split_bounds.h"

using namespace pase;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Random least-cost prefixes: each position's layer costs more on fewer units,
// step at least M times time.
SplitCosts random_costs(std::mt19937& random, int positions, int64_t units, double m) {
  std::uniform_real_distribution<double> cost(0.5, 3.0), extra(0.0, 2.0);
  SplitCosts costs;
  costs.positions = positions;
  costs.units = units;
  for (int64_t u = 1; u <= units; ++u) {
    std::vector<double> time{0}, step{0};
    for (int p = 0; p < positions; ++p) {
      const double t = cost(random) / static_cast<double>(u) + 0.1 * extra(random);
      time.push_back(time.back() + t);
      step.push_back(step.back() + m * t + extra(random));
    }
    costs.time.push_back(time);
    costs.step.push_back(step);
  }
  return costs;
}

// Every partition of [0, P) into S nonempty ranges, as S + 1 bounds.
void partitions(int positions, int stages, std::vector<int>& bounds, std::vector<std::vector<int>>& out) {
  const int k = static_cast<int>(bounds.size()) - 1;
  if (k == stages) {
    if (bounds.back() == positions) out.push_back(bounds);
    return;
  }
  for (int j = bounds.back() + 1; j + (stages - k - 1) <= positions; ++j) {
    bounds.push_back(j);
    partitions(positions, stages, bounds, out);
    bounds.pop_back();
  }
}

struct Brute {
  double least_sum = kInf, least_max = kInf;  // over every partition of one split, apart
  double joint = kInf;                        // min over partitions of sum a + max (b - a)
};

Brute brute(const SplitCosts& costs, const std::vector<int64_t>& units) {
  const int s = static_cast<int>(units.size());
  std::vector<int> start{0};
  std::vector<std::vector<int>> all;
  partitions(costs.positions, s, start, all);
  Brute b;
  for (const std::vector<int>& bounds : all) {
    double sum = 0, max = -kInf;
    for (int k = 0; k < s; ++k) {
      const auto& time = costs.time[static_cast<size_t>(units[static_cast<size_t>(k)] - 1)];
      const auto& step = costs.step[static_cast<size_t>(units[static_cast<size_t>(k)] - 1)];
      const double a = time[static_cast<size_t>(bounds[k + 1])] - time[static_cast<size_t>(bounds[k])];
      sum += a;
      max = std::max(max, step[static_cast<size_t>(bounds[k + 1])] - step[static_cast<size_t>(bounds[k])] - a);
    }
    b.least_sum = std::min(b.least_sum, sum);
    b.least_max = std::min(b.least_max, max);
    b.joint = std::min(b.joint, sum + max);
  }
  return b;
}

}  // namespace

TEST_CASE("split bounds: each split's bound is brute force's over its partitions, below their least step; the least "
          "over all splits below each") {
  std::mt19937 random(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int positions = 2 + trial % 5;
    const int64_t units = 2 + trial % 6;
    const SplitCosts costs = random_costs(random, positions, units, 1.0 + trial % 4);
    const int most = 1 + trial % 4;
    const SplitBounds bounds(costs, most);
    for (int s = 1; s <= most; ++s) {
      const auto splits = device_splits(units, s, 1, 100000);
      const SplitsBelow all = bounds.below(s, kInf, 100000);
      if (s > positions || s > units) {
        CHECK(all.splits.empty());
        CHECK(bounds.least(s) == kInf);
        continue;
      }
      REQUIRE(all.splits.size() == splits.size());
      CHECK(all.left_out == kInf);
      double least_leaf = kInf;
      for (const BoundedSplit& split : all.splits) {
        const Brute b = brute(costs, split.units);
        CHECK(split.bound == doctest::Approx(b.least_sum + b.least_max).epsilon(1e-12));
        CHECK(split.bound <= b.joint + 1e-9);
        CHECK(bounds.of(split.units) == doctest::Approx(split.bound).epsilon(1e-12));
        least_leaf = std::min(least_leaf, split.bound);
      }
      for (size_t i = 1; i < all.splits.size(); ++i) CHECK(all.splits[i - 1].bound <= all.splits[i].bound);
      CHECK(bounds.least(s) <= least_leaf + 1e-9);
      const BoundedSplit greedy = bounds.greedy(s);
      REQUIRE(greedy.units.size() == static_cast<size_t>(s));
      const Brute g = brute(costs, greedy.units);
      CHECK(greedy.bound == doctest::Approx(g.least_sum + g.least_max).epsilon(1e-12));
      CHECK(greedy.bound >= bounds.least(s) - 1e-9);
    }
  }
}

TEST_CASE("split bounds: below a step, every split that may beat it listed, least bound first, each bound at most "
          "its least step and at least its bound without the step; with a limit the least kept and the rest bounded") {
  std::mt19937 random(11);
  int tightened = 0;  // splits the step's cap on the excess ruled out, or bounded higher
  for (int trial = 0; trial < 30; ++trial) {
    const int positions = 4 + trial % 3;
    const int64_t units = 5 + trial % 4;
    const int s = 2 + trial % 3;
    const SplitCosts costs = random_costs(random, positions, units, 2.0 + trial % 3);
    const SplitBounds bounds(costs, s);
    std::map<std::vector<int64_t>, Brute> every;
    std::vector<double> joints;
    for (const auto& split : device_splits(units, s, 1, 100000)) {
      every[split] = brute(costs, split);
      joints.push_back(every[split].joint);
    }
    std::sort(joints.begin(), joints.end());
    for (double step : {joints[joints.size() / 4], joints[joints.size() / 2], joints.back() + 1}) {
      const SplitsBelow listed = bounds.below(s, step, 100000);
      CHECK(listed.left_out == kInf);
      std::set<std::vector<int64_t>> seen;
      for (size_t i = 0; i < listed.splits.size(); ++i) {
        const BoundedSplit& split = listed.splits[i];
        const Brute& b = every.at(split.units);
        seen.insert(split.units);
        CHECK(split.bound < step);
        CHECK(split.bound <= b.joint + 1e-9);                               // a bound on its steps
        CHECK(split.bound >= b.least_sum + b.least_max - 1e-9);             // tighter than without the step
        tightened += split.bound > b.least_sum + b.least_max + 1e-9;
        if (i > 0) CHECK(listed.splits[i - 1].bound <= split.bound);
      }
      for (const auto& [split, b] : every) {
        if (seen.count(split)) continue;
        CHECK(b.joint >= step - 1e-9);  // none left out that may beat the step
        tightened += b.least_sum + b.least_max < step;
      }
      for (size_t limit : {size_t{1}, size_t{2}, size_t{3}}) {
        if (limit >= listed.splits.size()) continue;
        const SplitsBelow few = bounds.below(s, step, limit);
        REQUIRE(few.splits.size() == limit);
        for (size_t i = 0; i < limit; ++i) CHECK(few.splits[i].bound == doctest::Approx(listed.splits[i].bound).epsilon(1e-12));
        CHECK(few.left_out >= few.splits.back().bound);
        CHECK(few.left_out <= listed.splits[limit].bound + 1e-9);  // no split left out bounds below it
      }
    }
  }
  CHECK(tightened > 0);
}

TEST_CASE("split bounds: by hand, two stages over two positions on three units") {
  // Position costs on u units: time 2/u and 4/u, step (M = 3) three times time.
  SplitCosts costs;
  costs.positions = 2;
  costs.units = 3;
  for (double u : {1.0, 2.0, 3.0}) {
    costs.time.push_back({0, 2 / u, 6 / u});
    costs.step.push_back({0, 6 / u, 18 / u});
  }
  const SplitBounds bounds(costs, 2);
  // Split (1, 2): one partition, a = 2 and 4 / 2 = 2, excess 2a: 4 and 4; 2 + 2 + 4 = 8.
  // Split (2, 1): a = 1 and 4, excess 2 and 8: 5 + 8 = 13.
  const SplitsBelow all = bounds.below(2, kInf, 10);
  REQUIRE(all.splits.size() == 2);
  CHECK(all.splits[0].units == std::vector<int64_t>{1, 2});
  CHECK(all.splits[0].bound == doctest::Approx(8));
  CHECK(all.splits[1].units == std::vector<int64_t>{2, 1});
  CHECK(all.splits[1].bound == doctest::Approx(13));
  CHECK(bounds.least(2) == doctest::Approx(8));
  CHECK(bounds.greedy(2).units == std::vector<int64_t>{1, 2});
  CHECK(bounds.below(2, 8, 10).splits.empty());  // below, not at
  // One stage on all three units: a = 6 / 3 = 2, excess 4: 6.
  CHECK(bounds.least(1) == doctest::Approx(6));
}

TEST_CASE("split bounds of fixed stages (one position each): each split's bound is its stages' sum a + max (b - a); "
          "below a step exactly the splits under it; the least at most each") {
  std::mt19937 random(13);
  for (int trial = 0; trial < 30; ++trial) {
    const int s = 2 + trial % 4;
    const int64_t units = s + trial % 5;
    SplitCosts costs = random_costs(random, s, units, 2.0 + trial % 3);
    costs.one_position_per_stage = true;
    const SplitBounds bounds(costs, s);
    std::map<std::vector<int64_t>, double> joint;  // the one partition: stage k at position k
    for (const auto& split : device_splits(units, s, 1, 100000)) {
      double sum = 0, max = -kInf;
      for (int k = 0; k < s; ++k) {
        const auto& time = costs.time[static_cast<size_t>(split[static_cast<size_t>(k)] - 1)];
        const auto& step = costs.step[static_cast<size_t>(split[static_cast<size_t>(k)] - 1)];
        const double a = time[static_cast<size_t>(k) + 1] - time[static_cast<size_t>(k)];
        sum += a;
        max = std::max(max, step[static_cast<size_t>(k) + 1] - step[static_cast<size_t>(k)] - a);
      }
      joint[split] = sum + max;
      CHECK(bounds.of(split) == doctest::Approx(sum + max).epsilon(1e-12));
      CHECK(bounds.least(s) <= sum + max + 1e-9);
    }
    std::vector<double> sorted;
    for (const auto& [split, j] : joint) sorted.push_back(j);
    std::sort(sorted.begin(), sorted.end());
    for (double step : {sorted[sorted.size() / 3], sorted.back() + 1}) {
      const SplitsBelow listed = bounds.below(s, step, 100000);
      std::set<std::vector<int64_t>> seen;
      for (const BoundedSplit& split : listed.splits) {
        seen.insert(split.units);
        CHECK(split.bound == doctest::Approx(joint.at(split.units)).epsilon(1e-12));
      }
      for (const auto& [split, j] : joint) CHECK(seen.count(split) == (j < step ? 1u : 0u));
    }
    const BoundedSplit greedy = bounds.greedy(s);
    REQUIRE(greedy.units.size() == static_cast<size_t>(s));
    CHECK(greedy.bound == doctest::Approx(joint.at(greedy.units)).epsilon(1e-12));
  }
}

TEST_CASE("split bounds: past the deadline the walk stops, the least bound of every split kept for those not reached") {
  std::mt19937 random(17);
  const SplitCosts costs = random_costs(random, 12, 40, 3.0);
  const SplitBounds bounds(costs, 6);
  const SplitsBelow all = bounds.below(6, kInf, 1000000);
  REQUIRE(all.splits.size() > 1000);  // C(39, 5) splits, every one below infinity
  const SplitsBelow late = bounds.below(6, kInf, 1000000, std::chrono::steady_clock::now() - std::chrono::seconds(1));
  CHECK(late.splits.size() < all.splits.size());
  CHECK(late.left_out == bounds.least(6));
  double least_listed = kInf;
  for (const BoundedSplit& split : all.splits) least_listed = std::min(least_listed, split.bound);
  CHECK(least_listed >= late.left_out - 1e-9);  // so the bound kept holds for every split not reached
}
