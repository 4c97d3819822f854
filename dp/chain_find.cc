#include "dp/chain_find.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "dp/fold.h"

namespace pase {
namespace {

// Equal ids: equal configuration counts and layer costs.
std::vector<int> vertex_kinds(const Objective& objective) { return value_ids(objective.vertex_cost); }

// Equal ids: the same matrix and the same classes at both ends, so the same
// price for every pair of configurations.
std::vector<int> pair_kinds(const Objective& objective) {
  std::vector<SharedArray<int32_t>> maps;
  for (const PairCost& pair : objective.pairs) {
    maps.push_back(pair.u_class);
    maps.push_back(pair.v_class);
  }
  const std::vector<int> class_id = value_ids(maps);
  std::map<std::tuple<const void*, int, int>, int> kinds;
  std::vector<int> kind(objective.pairs.size());
  for (size_t e = 0; e < kind.size(); ++e)
    kind[e] = kinds.try_emplace({objective.pairs[e].cost.get(), class_id[2 * e], class_id[2 * e + 1]},
                                static_cast<int>(kinds.size()))
                  .first->second;
  return kind;
}

struct Incidence {
  int pair = 0, other = 0;
  bool produces = false;  // this end is the pair's u
};

std::vector<std::vector<Incidence>> incidence(const Objective& objective) {
  std::vector<std::vector<Incidence>> list(objective.vertex_count());
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    const PairCost& pair = objective.pairs[e];
    list[static_cast<size_t>(pair.u)].push_back({static_cast<int>(e), pair.v, true});
    list[static_cast<size_t>(pair.v)].push_back({static_cast<int>(e), pair.u, false});
  }
  return list;
}

// Checks blocks [first + j·period, ...) for j < count against block 1 (the
// template): which are alike, and the run of alike blocks around it whose
// edges leave only from the separator (to the next block, or anywhere from
// the run's last block).
class BlockCheck {
 public:
  BlockCheck(const Objective& objective, const std::vector<int>& kinds, const std::vector<int>& pkinds,
             const std::vector<std::vector<Incidence>>& edges, size_t period, size_t first, size_t count)
      : objective_(objective), kinds_(kinds), pkinds_(pkinds), edges_(edges), period_(period), first_(first),
        count_(count), in_separator_(period, 0) {}

  std::optional<ChainFold> run() {
    // The separator: block 1's vertices with edges into block 2.
    const size_t base = first_ + period_;
    for (size_t o = 0; o < period_; ++o)
      for (const Incidence& edge : edges_[base + o])
        if (block_of(edge.other) == 2) in_separator_[o] = 1;
    ChainFold fold;
    fold.period = period_;
    fold.separator_configs = 1;
    for (size_t o = 0; o < period_; ++o)
      if (in_separator_[o]) {
        fold.separator.push_back(static_cast<int>(o));
        fold.separator_configs *= objective_.config_count(base + o);
        if (fold.separator_configs > kMaxSeparatorConfigs) return std::nullopt;
      }
    if (fold.separator.empty()) return std::nullopt;
    signatures(1, template_);
    std::vector<Verdict> verdict(count_);
    for (size_t j = 0; j < count_; ++j) verdict[j] = judge(j);
    size_t a = 1, b = 1;
    while (a > 0 && verdict[a - 1].alike && verdict[a - 1].leaves_forward) --a;
    while (b + 1 < count_ && verdict[b].leaves_forward && verdict[b + 1].alike) ++b;
    // The separator before the first folded block must be vertices of the
    // graph: a run that starts too near vertex 0 for it starts a block later.
    if (first_ + a * period_ + static_cast<size_t>(fold.separator.front()) < period_) ++a;
    while (b > a && !verdict[b].leaves_from_separator) --b;
    if (!verdict[b].leaves_from_separator || b - a + 1 < 2) return std::nullopt;
    fold.first = first_ + a * period_;
    fold.blocks = b - a + 1;
    return fold;
  }

 private:
  struct Verdict {
    bool alike = false;                  // same prices, inner edges and edges from the separator before
    bool leaves_forward = false;         // other edges: from the separator into the next block only
    bool leaves_from_separator = false;  // other edges: from the separator only
  };
  using Signature = std::vector<std::tuple<long, bool, int>>;  // (other - v, produces, pair kind)

  // Which block (j < count) a vertex is in, or -1.
  [[nodiscard]] long block_of(int v) const {
    if (static_cast<size_t>(v) < first_) return -1;
    const size_t j = (static_cast<size_t>(v) - first_) / period_;
    return j < count_ ? static_cast<long>(j) : -3;
  }

  // Whether w is a separator vertex of the block before block j.
  [[nodiscard]] bool in_separator_before(size_t j, int w) const {
    const long base = static_cast<long>(first_ + j * period_) - static_cast<long>(period_);
    const long o = w - base;
    return o >= 0 && o < static_cast<long>(period_) && in_separator_[static_cast<size_t>(o)];
  }

  // Block j's signatures into `out` (its buffers reused from block to block:
  // a deep model's search judges every block of every candidate phase).
  void signatures(size_t j, std::vector<Signature>& out) const {
    out.resize(period_);
    const size_t base = first_ + j * period_;
    for (size_t o = 0; o < period_; ++o) {
      const int v = static_cast<int>(base + o);
      out[o].clear();
      for (const Incidence& edge : edges_[base + o])
        if (block_of(edge.other) == static_cast<long>(j) || in_separator_before(j, edge.other))
          out[o].emplace_back(edge.other - v, edge.produces, pkinds_[static_cast<size_t>(edge.pair)]);
      std::sort(out[o].begin(), out[o].end());
    }
  }

  [[nodiscard]] Verdict judge(size_t j) const {
    Verdict verdict;
    const size_t base = first_ + j * period_, tbase = first_ + period_;
    verdict.alike = true;
    for (size_t o = 0; o < period_ && verdict.alike; ++o) verdict.alike = kinds_[base + o] == kinds_[tbase + o];
    if (verdict.alike) {
      signatures(j, scratch_);
      verdict.alike = scratch_ == template_;
    }
    verdict.leaves_forward = verdict.leaves_from_separator = true;
    for (size_t o = 0; o < period_; ++o)
      for (const Incidence& edge : edges_[base + o]) {
        if (block_of(edge.other) == static_cast<long>(j) || in_separator_before(j, edge.other)) continue;
        if (!in_separator_[o]) verdict.leaves_forward = verdict.leaves_from_separator = false;
        if (block_of(edge.other) != static_cast<long>(j) + 1) verdict.leaves_forward = false;
      }
    return verdict;
  }

  const Objective& objective_;
  const std::vector<int>& kinds_;
  const std::vector<int>& pkinds_;
  const std::vector<std::vector<Incidence>>& edges_;
  size_t period_, first_, count_;
  std::vector<char> in_separator_;
  std::vector<Signature> template_;
  mutable std::vector<Signature> scratch_;  // judge's, reused
};

}  // namespace

std::optional<ChainFold> find_chain(const Objective& objective) {
  const size_t n = objective.vertex_count();
  if (n < 6) return std::nullopt;
  const std::vector<int> kinds = vertex_kinds(objective);
  std::vector<std::tuple<size_t, size_t, size_t, size_t>> candidates;  // (covered, period, start, length)
  for (size_t period = 1; period <= n / 3; ++period) {
    auto [start, length] = longest_run(kinds, period);
    if ((length + period) / period >= 3) candidates.emplace_back(length + period, period, start, length);
  }
  // Most vertices first, then the shortest period (multiples of a period cover as much).
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(std::get<0>(b), std::get<1>(a)) < std::make_tuple(std::get<0>(a), std::get<1>(b));
  });
  const std::vector<int> pkinds = pair_kinds(objective);
  const std::vector<std::vector<Incidence>> edges = incidence(objective);
  std::optional<ChainFold> best;
  auto better = [](const ChainFold& a, const ChainFold& b) {
    // Most vertices covered; then the smallest block (its DP is the work),
    // the smallest separator, the first in vertex order.
    return std::make_tuple(a.blocks * a.period, b.period, b.separator_configs, b.first) >
           std::make_tuple(b.blocks * b.period, a.period, a.separator_configs, a.first);
  };
  for (size_t c = 0; c < candidates.size() && c < 8; ++c) {
    auto [covered, period, start, length] = candidates[c];
    if (best && covered < best->blocks * best->period) break;
    for (size_t phase = 0; phase < period; ++phase) {
      const size_t first = start + phase, count = (start + length + period - first) / period;
      if (count < 3) break;
      std::optional<ChainFold> found = BlockCheck(objective, kinds, pkinds, edges, period, first, count).run();
      if (found && (!best || better(*found, *best))) best = std::move(found);
    }
  }
  return best;
}

}  // namespace pase
