#include "memorycap/memory_priced_dp.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "dp/chain_fold.h"
#include "dp/fold.h"

namespace pase {

MemoryPricedDp::MemoryPricedDp(const Graph& graph, const CostTables& tables, const MemoryTables& memory,
                               const SolveOptions& options)
    : MemoryPricedDp(tables.objective, graph.vertex_names(), memory, options) {}

MemoryPricedDp::MemoryPricedDp(const Objective& objective, std::vector<std::string> names, const MemoryTables& memory,
                               const SolveOptions& options)
    : objective_(objective), memory_(memory), dp_(options.dp), fold_(options.fold), order_(options.order),
      names_(std::move(names)), priced_(objective) {
  init(options);
}

MemoryPricedDp::MemoryPricedDp(const OptionSpace& space, const Objective& configurations, std::vector<std::string> names,
                               const SolveOptions& options)
    : objective_(space.objective), memory_(space.memory), space_(&space), dp_(options.dp), fold_(options.fold),
      order_(options.order), names_(std::move(names)), priced_(configurations) {
  init(options);
}

void MemoryPricedDp::init(const SolveOptions& options) {
  // As plan_only (dp/solve.h) does for a solve without a cap, over the
  // configurations (priced_ has their shape).
  plan_.plan = make_plan(undirected_neighbours(priced_), options.order, priced_.config_counts());
  plan_.tables = measure_tables(priced_, plan_.plan, options.dp.threads);
  for (const auto& set : plan_.plan.dependent)
    plan_.stats.max_dependent_set = std::max(plan_.stats.max_dependent_set, set.size());
  plan_.stats.table_entries = plan_.tables.total_entries;
  const std::optional<Folding> folding = fold_ ? find_folding(priced_, plan_.plan) : std::nullopt;
  run_work_ = folding ? measure_tables(priced_, plan_.plan, options.dp.threads, folding->same_as).total_work
                      : plan_.tables.total_work;
  const size_t n = objective_.vertex_count();
  least_.assign(n, 0);
  for (size_t v = 0; v < n; ++v) {
    uint64_t least = std::numeric_limits<uint64_t>::max();
    for (size_t s = 0; s < objective_.config_count(v); ++s) least = std::min(least, memory_.bytes(v, s));
    least_[v] = least;
    least_bytes_ += least;  // no overflow: each configuration's bytes were checked, and so is a whole plan's
  }
}

std::pair<size_t, size_t> MemoryPricedDp::options_of(size_t v, size_t s) const {
  if (!space_) return {s, s + 1};
  const SharedArray<int32_t>& first = space_->first[v];
  return {static_cast<size_t>(first[s]), static_cast<size_t>(first[s + 1])};
}

const MemoryPricedDp::RunFolding& MemoryPricedDp::folding_of_priced() {
  // Folding reads only which vertices price alike (value ids) and the
  // edges, which never change: equal ids, the same folding.
  std::vector<int> kinds = value_ids(priced_.vertex_cost);
  const auto known = foldings_.find(kinds);
  if (known != foldings_.end()) return known->second;
  constexpr size_t kMaxFoldings = 64;  // a branch and bound's ranges give many; each is a few kilobytes
  if (foldings_.size() >= kMaxFoldings) foldings_.clear();
  RunFolding folding;
  if (fold_)
    if (std::optional<Folding> found = find_folding(priced_, plan_.plan)) folding.same_as = std::move(found->same_as);
  // Sized once per folding: a restriction that breaks a block's likeness folds less.
  folding.sizes = folding.same_as.empty() ? plan_.tables : measure_tables(priced_, plan_.plan, dp_.threads, folding.same_as);
  if (fold_) folding.chain = plan_chain(priced_, names_, order_, dp_.threads);
  return foldings_.emplace(std::move(kinds), std::move(folding)).first->second;
}

PricedPoint MemoryPricedDp::run(double lambda, const ByteRanges& ranges, const OptionPrice& price) {
  // Repeated blocks stay alike under any multiplier (equal layers, equal
  // bytes), so the priced objective folds as the plain one does.
  const RunFolding& folding = folding_of_priced();
  DpOptions dp = dp_;
  dp.same_as = folding.same_as;
  check_limits(plan_.plan, folding.sizes, names_, dp);
  // Runs of repeated blocks chain into one block's transfer table (dp/chain_fold.h)
  // as in a solve without a cap: the same optimum, a deep model's blocks
  // solved once (llama2-70b at p = 64: 1.1 million table entries a run, not
  // 43 million). The work counted stays the table-reusing DP's, so the
  // search's budgets, and with them its answers, are what they were.
  DpResult result;
  if (folding.chain) {
    if (std::optional<LimitError> error = chain_limit_error(*folding.chain, names_, dp_)) throw *error;
    result = run_chain(*folding.chain, priced_, names_, dp_);
  } else {
    result = run_dp(priced_, plan_.plan, folding.sizes, dp);
  }
  ++runs_;
  work_ += folding.sizes.total_work;
  last_stats_ = result.stats;
  PricedPoint point;
  point.lambda = lambda;
  point.value = result.cost;
  point.choice = std::move(result.choice);
  if (space_)  // each configuration's option: the one its price came from (the first on a tie)
    for (size_t v = 0; v < point.choice.size(); ++v) {
      const ByteRange* range = ranges.empty() ? nullptr : &ranges[v];
      const auto [begin, end] = options_of(v, static_cast<size_t>(point.choice[v]));
      size_t best = begin;
      for (size_t o = begin + 1; o < end; ++o)
        if (price(v, range, o) < price(v, range, best)) best = o;
      point.choice[v] = static_cast<int32_t>(best);
    }
  point.cost = cost_of(point.choice);
  point.memory = memory_of(point.choice);
  // The strategy read back must reach the optimum found (as in solve()).
  const double achieved = point.cost + (std::isinf(lambda) ? 0.0 : lambda * static_cast<double>(point.memory));
  const double scale = std::max(std::abs(achieved), std::abs(point.value));
  if (!(std::abs(achieved - point.value) <= 1e-9 * scale))
    throw std::logic_error("the memory-priced strategy read back from the DP costs " + std::to_string(achieved) +
                           ", not the optimum " + std::to_string(point.value) + " it found");
  return point;
}

uint64_t MemoryPricedDp::least_of(size_t v, const ByteRanges& ranges) const {
  if (ranges.empty()) return least_[v];
  uint64_t least = std::numeric_limits<uint64_t>::max();
  for (size_t s = 0; s < objective_.config_count(v); ++s)
    if (ranges[v].contains(memory_.bytes(v, s))) least = std::min(least, memory_.bytes(v, s));
  return least;
}

uint64_t MemoryPricedDp::least_bytes(const ByteRanges& ranges) const {
  if (ranges.empty()) return least_bytes_;
  uint64_t total = 0;
  for (size_t v = 0; v < least_.size(); ++v) {
    const uint64_t least = least_of(v, ranges);
    if (least == std::numeric_limits<uint64_t>::max()) return least;
    total += least;  // at most the sum of each vertex's largest bytes, which fits (checked when built)
  }
  return total;
}

PricedPoint MemoryPricedDp::solve(double lambda, const ByteRanges& ranges) {
  // A configuration outside `ranges` is shut out with an infinite cost; every
  // vertex keeps a finite one (the caller checks least_bytes(ranges) first).
  constexpr double kShut = std::numeric_limits<double>::infinity();
  const OptionPrice price = [&](size_t v, const ByteRange* range, size_t o) {
    const uint64_t bytes = memory_.bytes(v, o);
    return !range || range->contains(bytes) ? objective_.vertex_cost[v][o] + lambda * static_cast<double>(bytes) : kShut;
  };
  reprice(ranges, price);
  return run(lambda, ranges, price);
}

PricedPoint MemoryPricedDp::least_memory(const ByteRanges& ranges) {
  // Memory has no pair terms, so the least-memory strategies are exactly the
  // combinations of each vertex's least-memory configurations: the others are
  // shut out (infinite cost; the DP keeps the first configuration of an
  // all-infinite row, which never wins here since every vertex has a finite one).
  constexpr double kShut = std::numeric_limits<double>::infinity();
  std::vector<uint64_t> least(objective_.vertex_count());
  for (size_t v = 0; v < least.size(); ++v) least[v] = least_of(v, ranges);
  const OptionPrice price = [&](size_t v, const ByteRange*, size_t o) {
    return memory_.bytes(v, o) == least[v] ? objective_.vertex_cost[v][o] : kShut;
  };
  reprice(ranges, price);
  PricedPoint point = run(std::numeric_limits<double>::infinity(), ranges, price);
  if (point.memory != least_bytes(ranges))
    throw std::logic_error("the least-memory strategy needs " + std::to_string(point.memory) + " bytes, not " +
                           std::to_string(least_bytes(ranges)));
  return point;
}

void MemoryPricedDp::reprice(const ByteRanges& ranges, const OptionPrice& price) {
  // Vertices with the same costs (shared storage), the same bytes (shared
  // entries) and the same range are priced alike: priced once, shared, so the
  // priced copy of a deep model stays one block's size too.
  std::map<std::tuple<const void*, size_t, uint64_t, uint64_t>, size_t> first_of_kind;
  for (size_t v = 0; v < priced_.vertex_count(); ++v) {
    const ByteRange* range = ranges.empty() ? nullptr : &ranges[v];
    const auto key = std::make_tuple(objective_.vertex_cost[v].storage_id(), memory_.offset[v],
                                     range ? range->lo : 0, range ? range->hi : ~uint64_t{0});
    auto [it, inserted] = first_of_kind.try_emplace(key, v);
    if (!inserted) {
      priced_.vertex_cost[v] = priced_.vertex_cost[it->second];
      continue;
    }
    std::vector<double> priced(priced_.config_count(v));
    for (size_t s = 0; s < priced.size(); ++s) {
      const auto [begin, end] = options_of(v, s);
      double best = price(v, range, begin);
      for (size_t o = begin + 1; o < end; ++o) best = std::min(best, price(v, range, o));
      priced[s] = best;
    }
    priced_.vertex_cost[v] = std::move(priced);
  }
}

}  // namespace pase
