#include "memorycap/memory_frontier.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "memorycap/cap_local_search.h"
#include "memorycap/memory_cap.h"

namespace pase {
namespace {

// A line DP(lambda) - lambda * m: below every strategy's cost at memory m or less.
struct BoundLine {
  double lambda, value;
};

}  // namespace

std::vector<FrontierPoint> memory_frontier(MemoryPricedDp& dp, const Objective& objective, const MemoryTables& memory,
                                           const FrontierOptions& options) {
  std::vector<PricedPoint> hull;  // least memory first
  std::vector<BoundLine> lines;
  PricedPoint cheapest = dp.solve(0.0);
  lines.push_back({0.0, cheapest.cost});
  PricedPoint smallest = dp.least_memory();
  hull.push_back(smallest);
  if (smallest.memory < cheapest.memory && smallest.cost > cheapest.cost) {
    // Refine every edge until the DP proves it (iteratively: an edge's new
    // point goes between its ends, and both halves are refined in turn).
    std::vector<PricedPoint> pending = {cheapest};  // right ends still to reach, last = nearest
    while (!pending.empty()) {
      const PricedPoint& left = hull.back();
      const PricedPoint& right = pending.back();
      bool proven = true;
      if (dp.runs() < options.max_dp_runs && left.cost > right.cost) {
        const double lambda = (left.cost - right.cost) / static_cast<double>(right.memory - left.memory);
        PricedPoint point = dp.solve(lambda);
        lines.push_back({lambda, point.value});
        const double left_value = left.cost + lambda * static_cast<double>(left.memory);
        if (point.memory > left.memory && point.memory < right.memory &&
            point.value < left_value - 1e-12 * std::abs(left_value)) {
          pending.push_back(std::move(point));
          proven = false;
        }
      }
      if (proven) {
        hull.push_back(std::move(pending.back()));
        pending.pop_back();
      }
    }
  }
  // A bound on every cap m: the best of the lines, less a rounding allowance.
  auto bound_at = [&](uint64_t m) {
    double best = -std::numeric_limits<double>::infinity();
    for (const BoundLine& line : lines) {
      const double priced = line.lambda * static_cast<double>(m);
      best = std::max(best, line.value - priced - 1e-12 * (std::abs(line.value) + priced));
    }
    return best;
  };

  std::vector<FrontierPoint> points;
  auto add = [&](std::vector<int32_t> choice, bool on_hull) {
    FrontierPoint point;
    point.cost = objective.evaluate(choice);
    point.bytes = plan_memory(memory, choice);
    point.on_hull = on_hull;
    point.lower_bound = on_hull ? point.cost : std::min(point.cost, bound_at(point.bytes.total()));
    point.gap = relative_gap(point.cost, point.lower_bound);
    point.choice = std::move(choice);
    points.push_back(std::move(point));
  };
  CapLocalSearch search(objective, memory);
  for (size_t i = 0; i < hull.size(); ++i) {
    add(hull[i].choice, true);
    if (i + 1 == hull.size()) break;
    // Between this hull point and the next: move the next one down under its
    // own memory, again and again, while that beats this one.
    std::vector<int32_t> choice = hull[i + 1].choice;
    std::vector<FrontierPoint> between;
    for (int k = 0; k < options.max_between; ++k) {
      const uint64_t bytes = plan_memory(memory, choice).total();
      if (bytes <= hull[i].memory + 1 || !search.repair(choice, bytes - 1)) break;
      search.improve(choice, plan_memory(memory, choice).total());
      const uint64_t now = plan_memory(memory, choice).total();
      if (now <= hull[i].memory || objective.evaluate(choice) >= hull[i].cost) break;
      add(choice, false);
    }
  }
  // Least memory first, each strictly cheaper than all before it.
  std::sort(points.begin(), points.end(), [](const FrontierPoint& a, const FrontierPoint& b) {
    return a.bytes.total() != b.bytes.total() ? a.bytes.total() < b.bytes.total() : a.cost < b.cost;
  });
  std::vector<FrontierPoint> frontier;
  for (FrontierPoint& point : points)
    if (frontier.empty() || point.cost < frontier.back().cost) frontier.push_back(std::move(point));
  return frontier;
}

std::vector<FrontierPoint> merge_frontiers(const std::vector<std::vector<FrontierPoint>>& frontiers) {
  std::vector<FrontierPoint> points;
  for (size_t f = 0; f < frontiers.size(); ++f)
    for (const FrontierPoint& point : frontiers[f]) {
      points.push_back(point);
      points.back().source = f;
    }
  std::sort(points.begin(), points.end(), [](const FrontierPoint& a, const FrontierPoint& b) {
    return a.bytes.total() != b.bytes.total() ? a.bytes.total() < b.bytes.total() : a.cost < b.cost;
  });
  std::vector<FrontierPoint> merged;
  for (FrontierPoint& point : points)
    if (merged.empty() || point.cost < merged.back().cost) merged.push_back(std::move(point));
  // Every other frontier's bound at a point's memory: that of its first point
  // at this memory or more (none below its least memory: nothing of it fits).
  for (FrontierPoint& point : merged) {
    double bound = point.lower_bound;
    for (size_t f = 0; f < frontiers.size(); ++f) {
      if (f == point.source || frontiers[f].empty() || frontiers[f].front().bytes.total() > point.bytes.total()) continue;
      const auto at = std::lower_bound(frontiers[f].begin(), frontiers[f].end(), point.bytes.total(),
                                       [](const FrontierPoint& p, uint64_t m) { return p.bytes.total() < m; });
      bound = std::min(bound, at == frontiers[f].end() ? frontiers[f].back().lower_bound : at->lower_bound);
    }
    point.lower_bound = std::min(point.cost, bound);
    point.gap = relative_gap(point.cost, point.lower_bound);
    point.on_hull = point.on_hull && point.gap == 0.0;
  }
  return merged;
}

}  // namespace pase
