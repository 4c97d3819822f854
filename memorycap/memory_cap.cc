#include "memorycap/memory_cap.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>

#include "base/checked_math.h"
#include "memorycap/cap_local_search.h"
#include "memorycap/cap_mix_dp.h"

namespace pase {
namespace {

// The Lagrangian bound of the strategies a node allows, and the two hull
// strategies that bracket the cap there.
struct NodeBound {
  bool empty = false;                // no strategy the node allows fits
  double bound = 0.0;                // no strategy the node allows, within the cap, costs less
  std::optional<PricedPoint> left;   // fits: the cheapest fitting strategy on the node's hull
  std::optional<PricedPoint> right;  // does not fit (none when the node's optimum fits: then bound = its cost)
  bool timed_out = false;            // stopped at the deadline: only `bound` holds
  std::vector<PricedPoint> passed;   // the other strategies of the walk (starts for single-vertex moves)
};

using Clock = std::chrono::steady_clock;

// The steps a branch-and-bound node's mix DP may take where a DP run takes
// fewer (up to two runs' worth): on a small graph a grid of a few hundred
// units costs that much, and a coarser one finds little (the Transformer at
// p = 8); AlexNet's runs are so small that its mixes stay cheap.
constexpr uint64_t kLeastMixWork = uint64_t{10} * 1000 * 1000;

// Walks the node's hull: `left` fits, `right` does not, both optimal for
// some price. At the price where their lines cross, either a strategy between
// them beats both (it replaces the one on its side of the cap), or none does:
// then that price maximises the bound, the hull's edge read at the cap. Stops
// early once the bound reaches `prune_at` (the node cannot hold a better answer).
NodeBound bound_node(MemoryPricedDp& dp, uint64_t cap, const ByteRanges& ranges, double prune_at, int max_runs,
                     Clock::time_point deadline = Clock::time_point::max()) {
  NodeBound node;
  if (dp.least_bytes(ranges) > cap) {
    node.empty = true;
    return node;
  }
  const int start = dp.runs();
  PricedPoint right = dp.solve(0.0, ranges);
  node.bound = right.cost;  // DP(0) - 0 * cap
  if (right.memory <= cap) {
    node.left = std::move(right);
    return node;
  }
  if (node.bound >= prune_at) return node;
  if (Clock::now() >= deadline) {
    node.timed_out = true;
    return node;
  }
  PricedPoint left = dp.least_memory(ranges);
  while (dp.runs() - start < max_runs) {
    if (left.cost <= right.cost) {  // only at price 0: the fitting side costs no more, it is optimal
      node.bound = std::max(node.bound, left.cost);
      break;
    }
    const double lambda = (left.cost - right.cost) / static_cast<double>(right.memory - left.memory);
    PricedPoint point = dp.solve(lambda, ranges);
    // Less a rounding allowance: the DP sums in floating point, and a bound
    // must never exceed the optimum it bounds.
    const double priced_cap = lambda * static_cast<double>(cap);
    node.bound = std::max(node.bound, point.value - priced_cap - 1e-12 * (std::abs(point.value) + priced_cap));
    const double left_value = left.cost + lambda * static_cast<double>(left.memory);
    const bool between = point.memory != left.memory && point.memory != right.memory &&
                         point.value < left_value - 1e-12 * std::abs(left_value);
    if (!between || node.bound >= prune_at) break;
    if (Clock::now() >= deadline) {
      node.timed_out = true;
      return node;
    }
    PricedPoint& replaced = point.memory <= cap ? left : right;
    node.passed.push_back(std::move(replaced));
    replaced = std::move(point);
  }
  node.left = std::move(left);
  node.right = std::move(right);
  return node;
}

// An open branch-and-bound node: its byte ranges and its parent's bound
// (which its own is at least).
struct Open {
  double bound;
  ByteRanges ranges;
  bool operator<(const Open& other) const { return bound > other.bound; }  // least bound first
};

}  // namespace

double relative_gap(double cost, double lower_bound) {
  if (!(lower_bound > 0.0)) return cost > lower_bound ? std::numeric_limits<double>::infinity() : 0.0;
  const double gap = (cost - lower_bound) / lower_bound;
  return gap <= kGapTolerance ? 0.0 : gap;
}

CappedSolution solve_under_cap(MemoryPricedDp& dp, const Objective& objective, const MemoryTables& memory,
                               uint64_t cap, const CapOptions& options) {
  const auto start = Clock::now();
  // The branch and bound's deadline (the root's bound always completes).
  const auto deadline = options.max_seconds >= 1e9 ? Clock::time_point::max()
                        : start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.max_seconds));
  CappedSolution result;
  result.cap = cap;
  result.least_memory = dp.least_bytes();
  const int runs_before = dp.runs();
  auto take = [&](const PricedPoint& point) {
    result.choice = point.choice;
    result.cost = point.cost;
    result.memory = point.memory;
  };
  if (dp.least_bytes() > cap) {  // nothing fits: report the strategy that needs least
    take(dp.least_memory());
    result.dp_runs = dp.runs() - runs_before;
    return result;
  }
  result.feasible = true;
  CapLocalSearch search(objective, memory);
  // Offers a strategy that fits (and single-vertex moves from it) as the answer.
  auto offer = [&](std::vector<int32_t> choice) {
    search.improve(choice, cap);
    const double cost = objective.evaluate(choice);
    if (result.choice.empty() || cost < result.cost) {
      result.cost = cost;
      result.memory = plan_memory(memory, choice).total();
      result.choice = std::move(choice);
    }
  };
  // A strategy of the walk: improved if it fits, else moved down to the cap first.
  auto offer_point = [&](const PricedPoint& point) {
    std::vector<int32_t> choice = point.choice;
    if (point.memory <= cap || search.repair(choice, cap)) offer(std::move(choice));
  };
  auto offer_node = [&](const NodeBound& node) {
    if (node.left) offer_point(*node.left);
    if (node.right) offer_point(*node.right);
    for (const PricedPoint& point : node.passed) offer_point(point);
  };

  NodeBound root = bound_node(dp, cap, {}, std::numeric_limits<double>::infinity(), options.max_dp_runs_per_bound);
  result.nodes = 1;
  result.root_lower_bound = root.bound;
  result.lower_bound = root.bound;
  if (!root.right) {  // the optimum without a cap fits: no search (the same strategy as without a cap)
    take(*root.left);
    result.dp_runs = dp.runs() - runs_before;
    return result;
  }
  offer_node(root);
  // The best cap-fitting mix of the answer so far and a node's two hull
  // strategies, then of those and the walk's nearest strategies beyond the
  // two (the last it replaced on each side), each on both grids: the answer
  // is often a few layers of one and the rest of another, which
  // single-vertex moves cannot reach.
  // Steps per mix DP: at the root, mix_work; in the branch and bound, half
  // a DP run's (a node's four mixes cost at most two runs), but up to
  // kLeastMixWork where that is at most two runs' (small graphs), counted
  // against its budget.
  const uint64_t run_work = std::max<uint64_t>(1, dp.run_work());
  uint64_t mix_limit = options.mix_work;
  uint64_t mix_spent = 0;  // steps the mix DPs took in the branch and bound
  auto offer_mix = [&](const NodeBound& node) {
    if (!node.left || !node.right || mix_limit == 0 || result.choice.empty()) return;
    CapMixOptions mix_options;
    mix_options.max_work = mix_limit;
    std::vector<const PricedPoint*> nearest;  // the walk's last replaced on each side
    for (const bool fits : {true, false}) {
      const PricedPoint* last = nullptr;
      for (const PricedPoint& point : node.passed)
        if ((point.memory <= cap) == fits) last = &point;
      if (last) nearest.push_back(last);
    }
    for (const bool wider : {false, true})
      for (const bool relative : {false, true}) {
        if (wider && nearest.empty()) break;
        const std::vector<int32_t> answer = result.choice;  // the reference: the answer so far
        std::vector<const std::vector<int32_t>*> from = {&answer, &node.left->choice, &node.right->choice};
        if (wider)
          for (const PricedPoint* point : nearest) from.push_back(&point->choice);
        mix_options.relative = relative;
        CapMix mix = best_mix_under_cap(objective, memory, dp.plan().plan, from, cap, mix_options);
        mix_spent += mix.work;
        if (!mix.choice.empty()) offer(std::move(mix.choice));
      }
  };
  offer_mix(root);

  // Branch and bound, least bound first. A node splits one vertex's allowed
  // configurations by bytes, where its two hull strategies differ, so each
  // child shuts out one of them; the children's bounds are at least the
  // parent's. Nodes whose bound reaches the answer's cost are dropped.
  const size_t n = objective.vertex_count();
  const double prune_slack = 1.0 - kGapTolerance;
  std::priority_queue<Open> open;
  auto branch = [&](const ByteRanges& parent, const NodeBound& node) {
    const std::vector<int32_t>& a = node.left->choice;
    const std::vector<int32_t>& b = node.right->choice;
    size_t pick = n;
    uint64_t widest = 0;
    for (size_t v = 0; v < n; ++v) {
      const uint64_t bytes_a = memory.bytes(v, static_cast<size_t>(a[v])), bytes_b = memory.bytes(v, static_cast<size_t>(b[v]));
      if (bytes_a < bytes_b && bytes_b - bytes_a > widest) {
        widest = bytes_b - bytes_a;
        pick = v;
      }
    }
    if (pick == n) return false;  // cannot happen: the fitting one holds fewer bytes somewhere
    const uint64_t split = memory.bytes(pick, static_cast<size_t>(b[pick]));
    ByteRanges low = parent.empty() ? ByteRanges(n) : parent;
    ByteRanges high = low;
    low[pick].hi = std::min(low[pick].hi, split);
    high[pick].lo = std::max(high[pick].lo, split);
    open.push({node.bound, std::move(low)});
    open.push({node.bound, std::move(high)});
    return true;
  };
  auto good_enough = [&](double bound) { return relative_gap(result.cost, bound) <= options.target_gap; };
  // The budget: the DP steps the runs take (a folded block counts its copy)
  // and the mix DPs' steps, at least 8 runs' worth.
  const uint64_t search_work = std::max(options.max_search_work, saturating_mul(8, run_work));
  const uint64_t work_start = dp.work();
  mix_spent = 0;
  mix_limit = std::min(options.mix_work, std::max(run_work / 2, std::min(kLeastMixWork, 2 * run_work)));
  auto spent = [&] { return dp.work() - work_start + mix_spent; };
  const bool branched = !good_enough(root.bound) && branch({}, root);
  double bound = root.bound;  // what is proven when the search stops
  while (!open.empty()) {
    // Every strategy within the cap lies in an open node or was beaten by the
    // answer, so the least open bound (least first) is a bound on them all.
    bound = std::max(root.bound, std::min(result.cost, open.top().bound));
    if (open.top().bound >= result.cost * prune_slack) {  // nothing left can beat the answer
      open = {};
      break;
    }
    if (result.nodes >= options.max_nodes + 1 || spent() >= search_work || Clock::now() >= deadline ||
        good_enough(bound))
      break;
    Open next = open.top();
    open.pop();
    NodeBound node =
        bound_node(dp, cap, next.ranges, result.cost * prune_slack, options.max_dp_runs_per_bound, deadline);
    if (node.timed_out) {  // unfinished: it stays open with what it had
      open.push({std::max(next.bound, node.bound), std::move(next.ranges)});
      break;
    }
    ++result.nodes;
    if (node.empty) continue;
    node.bound = std::max(node.bound, next.bound);
    offer_node(node);
    offer_mix(node);
    if (!node.right || node.bound >= result.cost * prune_slack) continue;  // solved or pruned
    branch(next.ranges, node);
  }
  result.lower_bound = branched && open.empty() ? result.cost : bound;
  result.gap = relative_gap(result.cost, result.lower_bound);
  result.dp_runs = dp.runs() - runs_before;
  return result;
}

}  // namespace pase
