#include "stages/split_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <tbb/parallel_for.h>

namespace pase {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

struct SplitBounds::Prefix {
  std::vector<double> sum, max;  // [position]: over the stages fixed, ending there
  int stages = 0;
  int64_t units = 0;
};

SplitBounds::SplitBounds(SplitCosts costs, int most_stages)
    : costs_(std::move(costs)),
      most_(static_cast<int>(std::min<int64_t>({most_stages, costs_.positions, costs_.units}))),
      p1_(static_cast<size_t>(costs_.positions) + 1),
      u1_(static_cast<size_t>(costs_.units) + 1) {
  sum_ = tables(most_, kInf, &max_);
}

// Backward: r stages over [i, P) on u units, the first over [i, j) on v,
// the rest after; only stages whose excess is at most `cap` in the sums.
std::vector<double> SplitBounds::tables(int most, double cap, std::vector<double>* max) const {
  const int p = costs_.positions;
  const int64_t units = costs_.units;
  std::vector<double> sum(static_cast<size_t>(most + 1) * p1_ * u1_, kInf);
  sum[at(0, p, 0)] = 0;
  if (max) {
    max->assign(sum.size(), kInf);
    (*max)[at(0, p, 0)] = -kInf;  // no stage: nothing to the max
  }
  const bool fixed = costs_.one_position_per_stage;  // then r stages cover the last r positions, one each
  for (int r = 1; r <= most; ++r)
    tbb::parallel_for(fixed ? p - r : 0, p - r + 1, [&](int i) {
      for (int j = i + 1; j <= (fixed ? i + 1 : p - r + 1); ++j)
        for (int64_t v = 1; v + (r - 1) <= units; ++v) {
          const auto [a, excess] = range(i, j, v);
          const int64_t first = v + (r - 1);
          if (excess <= cap) {
            const double* after = &sum[at(r - 1, j, 0)];
            double* here = &sum[at(r, i, 0)];
            for (int64_t u = first; u <= units; ++u) here[u] = std::min(here[u], a + after[u - v]);
          }
          if (!max) continue;
          const double* after = &(*max)[at(r - 1, j, 0)];
          double* here = &(*max)[at(r, i, 0)];
          for (int64_t u = first; u <= units; ++u) here[u] = std::min(here[u], std::max(excess, after[u - v]));
        }
    });
  return sum;
}

std::pair<double, double> SplitBounds::range(int i, int j, int64_t units) const {
  const auto& time = costs_.time[static_cast<size_t>(units - 1)];
  const auto& step = costs_.step[static_cast<size_t>(units - 1)];
  const double a = time[static_cast<size_t>(j)] - time[static_cast<size_t>(i)];
  return {a, step[static_cast<size_t>(j)] - step[static_cast<size_t>(i)] - a};
}

SplitBounds::Prefix SplitBounds::root() const {
  Prefix prefix{std::vector<double>(p1_, kInf), std::vector<double>(p1_, kInf), 0, 0};
  prefix.sum[0] = 0, prefix.max[0] = -kInf;  // no stage yet: nothing to the max
  return prefix;
}

SplitBounds::Prefix SplitBounds::extend(const Prefix& prefix, int64_t units, double cap, int stages_after) const {
  Prefix next;
  next.stages = prefix.stages + 1;
  next.units = prefix.units + units;
  next.sum.assign(p1_, kInf);
  next.max.assign(p1_, kInf);
  const double* time = costs_.time[static_cast<size_t>(units - 1)].data();
  const double* step = costs_.step[static_cast<size_t>(units - 1)].data();
  const int end = costs_.positions - stages_after;  // the stages after need a position each
  for (int i = 0; i < end; ++i) {
    const auto at_i = static_cast<size_t>(i);
    if (prefix.max[at_i] == kInf) continue;  // no way to end there
    const int last = costs_.one_position_per_stage ? std::min(i + 1, end) : end;
    for (int j = i + 1; j <= last; ++j) {
      const auto at_j = static_cast<size_t>(j);
      const double a = time[at_j] - time[at_i], excess = step[at_j] - step[at_i] - a;  // range(i, j, units)
      if (excess <= cap) next.sum[at_j] = std::min(next.sum[at_j], prefix.sum[at_i] + a);
      next.max[at_j] = std::min(next.max[at_j], std::max(prefix.max[at_i], excess));
    }
  }
  return next;
}

double SplitBounds::bound(const Prefix& prefix, int stages_left, int64_t units_left, const std::vector<double>& sums) const {
  double sum = kInf, max = kInf;
  for (size_t j = 0; j < p1_; ++j) {
    const size_t after = at(stages_left, static_cast<int>(j), units_left);
    sum = std::min(sum, prefix.sum[j] + sums[after]);
    max = std::min(max, std::max(prefix.max[j], max_[after]));
  }
  return sum + max;
}

double SplitBounds::least(int stages) const {
  if (stages < 1 || stages > most_) return kInf;
  return sum_[at(stages, 0, costs_.units)] + max_[at(stages, 0, costs_.units)];
}

double SplitBounds::of(const std::vector<int64_t>& units) const {
  Prefix prefix = root();
  for (int64_t u : units) {
    if (u < 1 || prefix.units + u > costs_.units) return kInf;
    prefix = extend(prefix, u, kInf, static_cast<int>(units.size()) - prefix.stages - 1);
  }
  return prefix.units == costs_.units ? prefix.sum.back() + prefix.max.back() : kInf;
}

BoundedSplit SplitBounds::greedy(int stages) const {
  BoundedSplit split;
  if (!std::isfinite(least(stages))) return split;
  Prefix prefix = root();
  for (int k = 0; k < stages; ++k) {
    const int left = stages - k - 1;
    const int64_t most = costs_.units - prefix.units - left;
    Prefix best;
    double best_bound = kInf;
    for (int64_t v = left == 0 ? most : 1; v <= most; ++v) {  // the last stage takes the units left
      Prefix next = extend(prefix, v, kInf, left);
      const double b = bound(next, left, costs_.units - next.units, sum_);
      if (b < best_bound) best_bound = b, best = std::move(next);
    }
    if (!std::isfinite(best_bound)) return {};
    split.units.push_back(best.units - prefix.units);
    split.bound = best_bound;
    prefix = std::move(best);
  }
  return split;
}

// Against `step`: a partition whose largest excess is c or more steps at
// least (least sum of a over every partition) + c, so with c = step - that
// sum it does not beat the step; the sums are then taken over the stages of
// excess below c only, which raises the least sum, which lowers c: a few
// rounds, each one DP of the sums.
std::pair<std::vector<double>, double> SplitBounds::sums_against(int stages, double step) const {
  std::vector<double> sums = sum_;
  double cap = kInf;
  for (int round = 0; round < 3 && std::isfinite(step); ++round) {
    const double least_sum = sums[at(stages, 0, costs_.units)];
    const double next = step - least_sum;
    if (!std::isfinite(least_sum) || next >= cap) break;
    cap = next;
    sums = tables(stages, cap, nullptr);
  }
  return {std::move(sums), cap};
}

SplitsBelow SplitBounds::below(int stages, double step, size_t limit, std::chrono::steady_clock::time_point deadline) const {
  SplitsBelow out;
  out.left_out = kInf;
  if (stages < 1 || stages > most_ || least(stages) >= step) return out;  // no split's bound is below least()
  const std::pair<std::vector<double>, double> against = sums_against(stages, step);  // no binding: the walk captures them
  const std::vector<double>& sums = against.first;
  const double cap = against.second;
  double threshold = step;  // lowered to the limit-th bound once more are found
  std::vector<int64_t> units;
  size_t walked = 0;
  bool late = false;  // past the deadline: the rest not walked
  const auto visit = [&](const auto& self, const Prefix& prefix) -> void {
    if (late || (++walked % 256 == 0 && std::chrono::steady_clock::now() >= deadline)) {
      late = true;
      return;
    }
    const int left = stages - prefix.stages;
    if (left == 0) {
      const double b = prefix.sum.back() + prefix.max.back();
      if (b >= threshold) return;
      out.splits.push_back({units, b});
      if (out.splits.size() < 2 * limit + 1) return;
      std::nth_element(out.splits.begin(), out.splits.begin() + static_cast<std::ptrdiff_t>(limit), out.splits.end(),
                       [](const BoundedSplit& x, const BoundedSplit& y) { return x.bound < y.bound; });
      for (size_t s = limit; s < out.splits.size(); ++s) out.left_out = std::min(out.left_out, out.splits[s].bound);
      threshold = std::min(threshold, out.left_out);
      out.splits.resize(limit);
      return;
    }
    const int64_t most = costs_.units - prefix.units - (left - 1);
    for (int64_t v = left == 1 ? most : 1; v <= most; ++v) {
      Prefix next = extend(prefix, v, cap, left - 1);
      const double b = bound(next, left - 1, costs_.units - next.units, sums);
      if (b >= threshold) {
        if (b < step) out.left_out = std::min(out.left_out, b);  // cut for the limit, not the step
        continue;
      }
      units.push_back(v);
      self(self, next);
      units.pop_back();
    }
  };
  visit(visit, root());
  if (late) out.left_out = std::min(out.left_out, least(stages));  // every split bounds at least that
  std::sort(out.splits.begin(), out.splits.end(),
            [](const BoundedSplit& x, const BoundedSplit& y) { return x.bound < y.bound || (x.bound == y.bound && x.units < y.units); });
  if (out.splits.size() > limit) {
    for (size_t s = limit; s < out.splits.size(); ++s) out.left_out = std::min(out.left_out, out.splits[s].bound);
    out.splits.resize(limit);
  }
  return out;
}

}  // namespace pase
