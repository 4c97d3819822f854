// The pipeline's outer DP (stages/pipeline_partition.h) against every
// partition of small problems, and the schedules' formulas against hand
// computations (stages/pipeline_schedule.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <tuple>

#include "base/error.h"
#include "stages/pipeline_partition.h"
#include "stages/pipeline_schedule.h"
#include "test_support.h"

using namespace pase;

namespace {


struct RandomStages {
  std::map<std::tuple<int, int, int>, std::optional<StageValue>> values;
  std::optional<StageValue> operator()(int k, int i, int j) const { return values.at({k, i, j}); }
};

RandomStages random_stages(std::mt19937& rng, int p, int s, int64_t m) {
  RandomStages stages;
  std::uniform_real_distribution<double> unit(0, 1);
  for (int k = 0; k < s; ++k)
    for (int i = 0; i < p; ++i)
      for (int j = i + 1; j <= p; ++j) {
        if (unit(rng) < 0.1) {
          stages.values[{k, i, j}] = std::nullopt;  // nothing fits
          continue;
        }
        StageValue v;
        // Integer-valued times make ties, which the enumeration of the max must survive.
        v.t = (j - i) * 2 + std::floor(unit(rng) * 4);
        v.w = std::floor(unit(rng) * 20);
        v.time_bound = v.t * (0.6 + 0.4 * unit(rng));
        v.step_bound = (static_cast<double>(m) * v.t + v.w) * (0.7 + 0.3 * unit(rng));
        stages.values[{k, i, j}] = v;
      }
  return stages;
}

}  // namespace

TEST_CASE("pipeline schedules: step time and micro-batches in flight, by hand") {
  // Balanced 1F1B: S t + (M - 1) t = (M + S - 1) t, a bubble of (S - 1) / M of the work.
  CHECK(pipeline_step_time({2, 2, 2, 2}, {1, 1, 1, 1}, 8, parse_schedule("1f1b")) == 2 * (8 + 3) + 1);
  // Unbalanced: 1 + 3 + 2 + (4 - 1) * 3 = 15, plus the largest step work 5.
  CHECK(pipeline_step_time({1, 3, 2}, {5, 0, 2}, 4, parse_schedule("gpipe")) == 20);
  // Interleaved with V = 2: M max t + (sum t - max t) / V: 8 * 2 + 6 / 2 = 19 (the bubble halves).
  CHECK(pipeline_step_time({2, 2, 2, 2}, {0, 0, 0, 0}, 8, parse_schedule("interleaved:2")) == 19);
  CHECK(micro_batches_in_flight(0, 4, 8, parse_schedule("1f1b")) == 4);
  CHECK(micro_batches_in_flight(3, 4, 8, parse_schedule("1f1b")) == 1);
  CHECK(micro_batches_in_flight(0, 4, 2, parse_schedule("1f1b")) == 2);
  CHECK(micro_batches_in_flight(2, 4, 8, parse_schedule("gpipe")) == 8);
  // Megatron-LM's interleaved warm-up on rank 0 of 4 with V = 2: 2 * 3 + 1 * 4 = 10 chunks, plus one: 11 of half a stage each.
  CHECK(micro_batches_in_flight(0, 4, 8, parse_schedule("interleaved:2")) == 6);
  CHECK(schedule_name(parse_schedule("interleaved:3")) == "interleaved:3");
  CHECK_THROWS_WITH_AS((void)parse_schedule("zb"),
                       "schedule: expected 1f1b, gpipe or interleaved:V (V from 2 to 9999 chunks per stage), got 'zb'",
                       OptionError);
  CHECK_THROWS_AS((void)parse_schedule("interleaved:1"), OptionError);
}

TEST_CASE("the outer DP finds the least step time of every partition, and its bound holds") {
  std::mt19937 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int p = 1 + static_cast<int>(rng() % 7), s = 1 + static_cast<int>(rng() % 4);
    const int64_t m = 1 + static_cast<int64_t>(rng() % 6);
    const RandomStages stages = random_stages(rng, p, s, m);
    PartitionProblem problem{p, s, m, std::cref(stages)};
    double brute = INFINITY, brute_bound = INFINITY;
    test::each_partition(p, s, [&](const std::vector<int>& bounds) {
      std::vector<double> t, w;
      double time_bounds = 0, excess = -INFINITY;
      for (int k = 0; k < s; ++k) {
        const std::optional<StageValue> v = stages(k, bounds[k], bounds[k + 1]);
        if (!v) return;
        t.push_back(v->t), w.push_back(v->w);
        time_bounds += v->time_bound, excess = std::max(excess, v->step_bound - v->time_bound);
      }
      brute = std::min(brute, pipeline_step_time(t, w, m, parse_schedule("1f1b")));
      brute_bound = std::min(brute_bound, time_bounds + excess);
    });
    const PartitionAnswer answer = best_partition(problem);
    if (brute == INFINITY) {
      CHECK(answer.bounds.empty());
      continue;
    }
    ++checked;
    CAPTURE(trial);
    REQUIRE(answer.bounds.size() == static_cast<size_t>(s + 1));
    CHECK(answer.step == doctest::Approx(brute).epsilon(1e-12));
    CHECK(answer.lower_bound == doctest::Approx(std::min(brute_bound, brute)).epsilon(1e-12));
    CHECK(answer.lower_bound <= answer.step);
    // The partition read back is the one priced.
    std::vector<double> t, w;
    for (int k = 0; k < s; ++k) {
      const std::optional<StageValue> v = stages(k, answer.bounds[k], answer.bounds[k + 1]);
      REQUIRE(v);
      t.push_back(v->t), w.push_back(v->w);
    }
    CHECK(pipeline_step_time(t, w, m, parse_schedule("1f1b")) == doctest::Approx(answer.step).epsilon(1e-12));
  }
  CHECK(checked > 200);
}

TEST_CASE("a range's holding bound is at most the bound of every partition that holds it, and exact for two stages") {
  std::mt19937 rng(11);
  int held = 0, exact = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int p = 1 + static_cast<int>(rng() % 7), s = 1 + static_cast<int>(rng() % 4);
    const int64_t m = 1 + static_cast<int64_t>(rng() % 6);
    const RandomStages stages = random_stages(rng, p, s, m);
    const HoldingBounds holding(PartitionProblem{p, s, m, std::cref(stages)});
    // Per range: the least of sum time_bound + max excess over the partitions holding it.
    std::map<std::tuple<int, int, int>, double> least;
    test::each_partition(p, s, [&](const std::vector<int>& bounds) {
      double time_bounds = 0, excess = -INFINITY;
      for (int k = 0; k < s; ++k) {
        const std::optional<StageValue> v = stages(k, bounds[k], bounds[k + 1]);
        if (!v) return;
        time_bounds += v->time_bound, excess = std::max(excess, v->step_bound - v->time_bound);
      }
      for (int k = 0; k < s; ++k) {
        auto [it, fresh] = least.try_emplace({k, bounds[k], bounds[k + 1]}, time_bounds + excess);
        if (!fresh) it->second = std::min(it->second, time_bounds + excess);
      }
    });
    CAPTURE(trial);
    for (int k = 0; k < s; ++k)
      for (int i = 0; i <= p; ++i)
        for (int j = i + 1; j <= p; ++j) {
          const double bound = holding.at(k, i, j);
          const auto found = least.find({k, i, j});
          if (found == least.end()) {
            CHECK(bound == INFINITY);  // no partition holds it (or it does not run)
            continue;
          }
          ++held;
          CHECK(bound <= found->second * (1 + 1e-12));
          // Two stages: one partition holds each range, so its bound is that partition's.
          if (s <= 2) {
            CHECK(bound == doctest::Approx(found->second).epsilon(1e-12));
            ++exact;
          }
        }
  }
  CHECK(held > 1000);
  CHECK(exact > 100);
}

TEST_CASE("holding bounds by hand: three stages in their one partition") {
  // Positions 0..3, one position per stage: the only partition is 0|1|2, so
  // each of its ranges is bounded by sum tb + max excess = (1 + 2 + 3) + max(4, 10, 1).
  std::map<std::tuple<int, int, int>, std::optional<StageValue>> values;
  values[{0, 0, 1}] = StageValue{0, 0, 5, 1};   // excess 4
  values[{1, 1, 2}] = StageValue{0, 0, 12, 2};  // excess 10
  values[{2, 2, 3}] = StageValue{0, 0, 4, 3};   // excess 1
  const HoldingBounds holding(PartitionProblem{3, 3, 4, [&](int k, int i, int j) {
                                                 const auto it = values.find({k, i, j});
                                                 return it == values.end() ? std::nullopt : it->second;
                                               }});
  CHECK(holding.at(0, 0, 1) == 16);
  CHECK(holding.at(1, 1, 2) == 16);
  CHECK(holding.at(2, 2, 3) == 16);
  CHECK(holding.at(0, 0, 2) == INFINITY);  // leaves one position for two stages
}
