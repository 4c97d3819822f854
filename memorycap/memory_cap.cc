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
  double price = 0.0;                // the price per byte `bound` was read at
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
// DP(lambda) - lambda * cap, less a rounding allowance: the DP sums in
// floating point, and a bound must never exceed the optimum it bounds.
double lagrangian_bound(const PricedPoint& point, uint64_t cap) {
  const double priced_cap = point.lambda * static_cast<double>(cap);
  return point.value - priced_cap - 1e-12 * (std::abs(point.value) + priced_cap);
}

// At `deadline` (checked between DP runs) the node stops: timed_out, its
// bound what the runs so far proved; a node that must `answer` (the root)
// still returns two hull ends, else only the bound holds.
NodeBound bound_node(MemoryPricedDp& dp, uint64_t cap, const ByteRanges& ranges, double prune_at, int max_runs,
                     Clock::time_point deadline = Clock::time_point::max(), double first_price = 0.0,
                     bool answer = false) {
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
  if (node.bound >= prune_at) {  // the optimum without the cap already reaches what was found
    node.right = std::move(right);
    return node;
  }
  // A like search's price: its bound may reach prune_at at once; if not, its
  // strategy (optimal at that price, so on the hull) starts the walk nearer
  // the cap than price 0 or the least memory would.
  std::optional<PricedPoint> hinted;
  if (first_price > 0 && std::isfinite(prune_at)) {
    hinted = dp.solve(first_price, ranges);
    if (const double bound = lagrangian_bound(*hinted, cap); bound > node.bound) {
      node.bound = bound;
      node.price = first_price;
    }
    if (node.bound >= prune_at) {
      node.right = std::move(right);
      return node;
    }
  }
  const bool hint_fits = hinted && hinted->memory <= cap;
  if (Clock::now() >= deadline) {
    node.timed_out = true;
    // The root answers even so: with the strategy that needs least (it fits).
    if (!answer) return node;
    node.left = hint_fits ? std::move(*hinted) : dp.least_memory(ranges);
    node.right = std::move(right);
    return node;
  }
  PricedPoint left = hint_fits ? std::move(*hinted) : dp.least_memory(ranges);
  if (hinted && !hint_fits) {
    node.passed.push_back(std::move(right));
    right = std::move(*hinted);
  }
  while (dp.runs() - start < max_runs) {
    if (left.cost <= right.cost) {  // only at price 0: the fitting side costs no more, it is optimal
      node.bound = std::max(node.bound, left.cost);
      break;
    }
    const double lambda = (left.cost - right.cost) / static_cast<double>(right.memory - left.memory);
    PricedPoint point = dp.solve(lambda, ranges);
    if (const double bound = lagrangian_bound(point, cap); bound > node.bound) {
      node.bound = bound;
      node.price = lambda;
    }
    const double left_value = left.cost + lambda * static_cast<double>(left.memory);
    const bool between = point.memory != left.memory && point.memory != right.memory &&
                         point.value < left_value - 1e-12 * std::abs(left_value);
    if (!between || node.bound >= prune_at) break;
    if (Clock::now() >= deadline) {
      node.timed_out = true;
      if (!answer) return node;
      break;  // the root: the walk's two ends and what it passed are the answer's candidates
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

// The capped search of one cap: the root's Lagrangian bound, the answer the
// walk's strategies (and single-vertex moves and mixes from them) give, and
// the branch and bound that closes the gap within its budget.
class CappedSearch {
 public:
  CappedSearch(MemoryPricedDp& dp, const Objective& objective, const MemoryTables& memory, uint64_t cap,
               const CapOptions& options)
      : dp_(dp), objective_(objective), memory_(memory), cap_(cap), options_(options), search_(objective, memory),
        runs_before_(dp.runs()), run_work_(std::max<uint64_t>(1, dp.run_work())), mix_limit_(options.mix_work) {
    const auto start = Clock::now();
    // The search's end: its own seconds or the caller's deadline, the earlier.
    deadline_ = options.max_seconds >= 1e9 ? Clock::time_point::max()
                : start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.max_seconds));
    deadline_ = std::min(deadline_, options.deadline);
    result_.cap = cap;
    result_.least_memory = dp.least_bytes();
  }

  CappedSolution run() {
    if (dp_.least_bytes() > cap_) {  // nothing fits: report the strategy that needs least
      take(dp_.least_memory());
      return finish();
    }
    result_.feasible = true;
    const NodeBound root = bound_node(dp_, cap_, {}, options_.cutoff, options_.max_dp_runs_per_bound, deadline_,
                                      options_.first_price, /*answer=*/true);
    result_.nodes = 1;
    result_.root_lower_bound = root.bound;
    result_.root_price = root.price;
    result_.lower_bound = root.bound;
    if (root.right && root.bound >= options_.cutoff) {  // cannot beat what was found elsewhere
      take(root.left ? *root.left : dp_.least_memory());
      result_.cut_off = true;
      result_.lower_bound = std::min(root.bound, result_.cost);
      result_.gap = relative_gap(result_.cost, result_.lower_bound);
      return finish();
    }
    if (!root.right) {  // the optimum without a cap fits: no search (the same strategy as without a cap)
      take(*root.left);
      result_.cut_off = result_.cost >= options_.cutoff;  // and it is no better than what was found elsewhere
      return finish();
    }
    offer_node(root);
    if (root.timed_out) {  // out of time in the root's walk: its strategies and its bound are the answer
      result_.timed_out = true;
      result_.lower_bound = std::min(root.bound, result_.cost);
      result_.gap = relative_gap(result_.cost, result_.lower_bound);
      return finish();
    }
    offer_mix(root);
    branch_and_bound(root);
    result_.gap = relative_gap(result_.cost, result_.lower_bound);
    return finish();
  }

 private:
  void take(const PricedPoint& point) {
    result_.choice = point.choice;
    result_.cost = point.cost;
    result_.memory = point.memory;
  }

  CappedSolution finish() {
    result_.dp_runs = dp_.runs() - runs_before_;
    return result_;
  }

  // Offers a strategy that fits (and single-vertex moves from it) as the answer.
  void offer(std::vector<int32_t> choice) {
    search_.improve(choice, cap_);
    const double cost = objective_.evaluate(choice);
    if (result_.choice.empty() || cost < result_.cost) {
      result_.cost = cost;
      result_.memory = plan_memory(memory_, choice).total();
      result_.choice = std::move(choice);
    }
  }

  // A strategy of the walk: improved if it fits, else moved down to the cap first.
  void offer_point(const PricedPoint& point) {
    std::vector<int32_t> choice = point.choice;
    if (point.memory <= cap_ || search_.repair(choice, cap_)) offer(std::move(choice));
  }

  void offer_node(const NodeBound& node) {
    if (node.left) offer_point(*node.left);
    if (node.right) offer_point(*node.right);
    for (const PricedPoint& point : node.passed) offer_point(point);
  }

  // The best cap-fitting mix of the answer so far and a node's two hull
  // strategies, then of those and the walk's nearest strategies beyond the
  // two (the last it replaced on each side), each on both grids: the answer
  // is often a few layers of one and the rest of another, which
  // single-vertex moves cannot reach. Steps per mix DP: mix_limit_.
  void offer_mix(const NodeBound& node) {
    if (!node.left || !node.right || mix_limit_ == 0 || result_.choice.empty()) return;
    CapMixOptions mix_options;
    mix_options.max_work = mix_limit_;
    std::vector<const PricedPoint*> nearest;  // the walk's last replaced on each side
    for (const bool fits : {true, false}) {
      const PricedPoint* last = nullptr;
      for (const PricedPoint& point : node.passed)
        if ((point.memory <= cap_) == fits) last = &point;
      if (last) nearest.push_back(last);
    }
    for (const bool wider : {false, true})
      for (const bool relative : {false, true}) {
        if (wider && nearest.empty()) break;
        // Close enough already for a search told to stop at a gap (with
        // none, every mix runs, as the answers always had them).
        if (options_.target_gap > 0 && good_enough(node.bound)) return;
        const std::vector<int32_t> answer = result_.choice;  // the reference: the answer so far
        std::vector<const std::vector<int32_t>*> from = {&answer, &node.left->choice, &node.right->choice};
        if (wider)
          for (const PricedPoint* point : nearest) from.push_back(&point->choice);
        mix_options.relative = relative;
        CapMix mix = best_mix_under_cap(objective_, memory_, dp_.plan().plan, from, cap_, mix_options);
        mix_spent_ += mix.work;
        if (!mix.choice.empty()) offer(std::move(mix.choice));
      }
  }

  // Splits one vertex's allowed configurations by bytes, where the node's two
  // hull strategies differ, so each child shuts out one of them; the
  // children's bounds are at least the parent's.
  bool branch(const ByteRanges& parent, const NodeBound& node) {
    const size_t n = objective_.vertex_count();
    const std::vector<int32_t>& a = node.left->choice;
    const std::vector<int32_t>& b = node.right->choice;
    size_t pick = n;
    uint64_t widest = 0;
    for (size_t v = 0; v < n; ++v) {
      const uint64_t bytes_a = memory_.bytes(v, static_cast<size_t>(a[v])), bytes_b = memory_.bytes(v, static_cast<size_t>(b[v]));
      if (bytes_a < bytes_b && bytes_b - bytes_a > widest) {
        widest = bytes_b - bytes_a;
        pick = v;
      }
    }
    if (pick == n) return false;  // cannot happen: the fitting one holds fewer bytes somewhere
    const uint64_t split = memory_.bytes(pick, static_cast<size_t>(b[pick]));
    ByteRanges low = parent.empty() ? ByteRanges(n) : parent;
    ByteRanges high = low;
    low[pick].hi = std::min(low[pick].hi, split);
    high[pick].lo = std::max(high[pick].lo, split);
    open_.push({node.bound, std::move(low)});
    open_.push({node.bound, std::move(high)});
    return true;
  }

  [[nodiscard]] bool good_enough(double bound) const { return relative_gap(result_.cost, bound) <= options_.target_gap; }

  // Least bound first; nodes whose bound reaches the answer's cost are
  // dropped. Stops when nothing is left (the answer is then proven optimal),
  // or at the node, work or time budget, or the target gap.
  void branch_and_bound(const NodeBound& root) {
    // The budget: the DP steps the runs take (a folded block counts its copy)
    // and the mix DPs' steps, at least 8 runs' worth. A node's mixes take at
    // most half a DP run's steps each, but up to kLeastMixWork where that is
    // at most two runs' (small graphs).
    const uint64_t search_work = std::max(options_.max_search_work, saturating_mul(8, run_work_));
    const uint64_t work_start = dp_.work();
    mix_spent_ = 0;
    mix_limit_ = std::min(options_.mix_work, std::max(run_work_ / 2, std::min(kLeastMixWork, 2 * run_work_)));
    auto spent = [&] { return dp_.work() - work_start + mix_spent_; };
    const double prune_slack = 1.0 - kGapTolerance;
    const bool branched = !good_enough(root.bound) && branch({}, root);
    double bound = root.bound;  // what is proven when the search stops
    while (!open_.empty()) {
      // Every strategy within the cap lies in an open node or was beaten by the
      // answer, so the least open bound (least first) is a bound on them all.
      bound = std::max(root.bound, std::min(result_.cost, open_.top().bound));
      if (open_.top().bound >= result_.cost * prune_slack) {  // nothing left can beat the answer
        open_ = {};
        break;
      }
      if (result_.nodes >= options_.max_nodes + 1 || spent() >= search_work || good_enough(bound)) break;
      if (Clock::now() >= deadline_) {
        result_.timed_out = true;
        break;
      }
      Open next = open_.top();
      open_.pop();
      NodeBound node =
          bound_node(dp_, cap_, next.ranges, result_.cost * prune_slack, options_.max_dp_runs_per_bound, deadline_);
      if (node.timed_out) {  // unfinished: it stays open with what it had
        open_.push({std::max(next.bound, node.bound), std::move(next.ranges)});
        result_.timed_out = true;
        break;
      }
      ++result_.nodes;
      if (node.empty) continue;
      node.bound = std::max(node.bound, next.bound);
      offer_node(node);
      offer_mix(node);
      if (!node.right || node.bound >= result_.cost * prune_slack) continue;  // solved or pruned
      branch(next.ranges, node);
    }
    result_.lower_bound = branched && open_.empty() ? result_.cost : bound;
  }

  MemoryPricedDp& dp_;
  const Objective& objective_;
  const MemoryTables& memory_;
  const uint64_t cap_;
  const CapOptions& options_;
  CapLocalSearch search_;
  const int runs_before_;
  const uint64_t run_work_;
  uint64_t mix_limit_;       // steps per mix DP (the root's: options.mix_work)
  uint64_t mix_spent_ = 0;   // steps the mix DPs took in the branch and bound
  Clock::time_point deadline_;
  std::priority_queue<Open> open_;
  CappedSolution result_;
};

}  // namespace

double relative_gap(double cost, double lower_bound) {
  if (!(lower_bound > 0.0)) return cost > lower_bound ? std::numeric_limits<double>::infinity() : 0.0;
  const double gap = (cost - lower_bound) / lower_bound;
  return gap <= kGapTolerance ? 0.0 : gap;
}

CappedSolution solve_under_cap(MemoryPricedDp& dp, const Objective& objective, const MemoryTables& memory,
                               uint64_t cap, const CapOptions& options) {
  return CappedSearch(dp, objective, memory, cap, options).run();
}

}  // namespace pase
