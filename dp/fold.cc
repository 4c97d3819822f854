#include "dp/fold.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace pase {
namespace {

// An edge as seen from one end: where the other end sits relative to it, which
// end this is, and what the edge costs (matrices are shared by edges priced
// alike, so equal pointers mean equal prices; class maps by value ids, so
// equal ids mean equal maps, compared once and not at every look).
struct EdgeView {
  int offset = 0;
  bool produces = false;
  const std::vector<double>* cost = nullptr;
  int mine = 0;   // this end's class map (value id)
  int other = 0;  // the other end's
  int32_t other_classes = 0;

  [[nodiscard]] auto key() const { return std::make_tuple(offset, produces, cost, other_classes, mine, other); }
  bool operator==(const EdgeView& o) const { return key() == o.key(); }
};

// Vertex kinds: equal ids mean equal configuration counts and layer costs.
std::vector<int> vertex_ids(const Objective& objective) {
  return value_ids(objective.vertex_cost);
}

std::vector<std::vector<EdgeView>> edge_views(const Objective& objective) {
  std::vector<SharedArray<int32_t>> maps;
  for (const PairCost& pair : objective.pairs) {
    maps.push_back(pair.u_class);
    maps.push_back(pair.v_class);
  }
  const std::vector<int> class_id = value_ids(maps);
  std::vector<std::vector<EdgeView>> views(objective.vertex_count());
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    const PairCost& pair = objective.pairs[e];
    const int u_id = class_id[2 * e], v_id = class_id[2 * e + 1];
    views[static_cast<size_t>(pair.u)].push_back({pair.v - pair.u, true, pair.cost.get(), u_id, v_id, pair.v_classes});
    views[static_cast<size_t>(pair.v)].push_back({pair.u - pair.v, false, pair.cost.get(), v_id, u_id, pair.u_classes});
  }
  for (auto& list : views) std::sort(list.begin(), list.end(), [](const EdgeView& a, const EdgeView& b) { return a.key() < b.key(); });
  return views;
}

// Blocks [first + j·period, first + (j+1)·period) for j in [0, blocks). In
// block j >= 2, a vertex follows its counterpart in block 1 when the plan
// treats them alike and every table it reads comes from a follower of the
// same block whose counterpart sends the same table to its own counterpart.
// (Vertices that carry the running optimum from block to block, such as a
// residual stream, read tables from the block before: they compute theirs.)
// Returns the followers found.
size_t fold_blocks(const EliminationPlan& plan, const std::vector<std::vector<EdgeView>>& views,
                   const std::vector<std::vector<int>>& producers, size_t period, size_t first, size_t blocks,
                   std::vector<int>& same_as, size_t& folded_blocks) {
  folded_blocks = 0;
  const int n = static_cast<int>(views.size());
  auto consumer = [&](int v) { return plan.dependent[v].empty() ? -1 : plan.dependent[v].back(); };
  size_t followers = 0;
  std::vector<char> candidate(period);
  for (size_t j = 2; j < blocks; ++j) {
    const int shift = static_cast<int>((j - 1) * period);
    const int begin = static_cast<int>(first + j * period), end = begin + static_cast<int>(period);
    for (int v = begin; v < end; ++v) {
      const int u = v - shift;
      // Same dependent set, shifted; the template first in the order.
      const std::vector<int>& dv = plan.dependent[v];
      const std::vector<int>& du = plan.dependent[u];
      bool alike = plan.position[u] < plan.position[v] && dv.size() == du.size();
      for (size_t i = 0; alike && i < dv.size(); ++i) alike = dv[i] == du[i] + shift;
      // Edges: the same prices (run detection compared neighbouring blocks)
      // and each to a vertex on the same side in the order.
      alike = alike && views[static_cast<size_t>(v)] == views[static_cast<size_t>(u)];
      for (const EdgeView& edge : views[static_cast<size_t>(v)]) {
        if (!alike) break;
        const int w = v + edge.offset, w_template = u + edge.offset;
        alike = w_template >= 0 && w_template < n &&
                (plan.position[w] > plan.position[v]) == (plan.position[w_template] > plan.position[u]);
      }
      candidate[static_cast<size_t>(v - begin)] = alike;
    }
    // Drop vertices that read a table from outside the followers, until none does.
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (int c = begin; c < end; ++c) {
        if (!candidate[static_cast<size_t>(c - begin)]) continue;
        const std::vector<int>& mine = producers[static_cast<size_t>(c)];
        bool reads_alike = mine.size() == producers[static_cast<size_t>(c - shift)].size();
        for (size_t i = 0; reads_alike && i < mine.size(); ++i)
          reads_alike = mine[i] >= begin && mine[i] < end && candidate[static_cast<size_t>(mine[i] - begin)] &&
                        consumer(mine[i] - shift) == c - shift;
        if (!reads_alike) candidate[static_cast<size_t>(c - begin)] = 0, dropped = true;
      }
    }
    size_t found = 0;
    for (int v = begin; v < end; ++v)
      if (candidate[static_cast<size_t>(v - begin)]) same_as[static_cast<size_t>(v)] = v - shift, ++found;
    if (found == 0) break;
    followers += found;
    ++folded_blocks;
  }
  return followers;
}

}  // namespace

std::optional<Folding> find_folding(const Objective& objective, const EliminationPlan& plan) {
  const size_t n = objective.vertex_count();
  if (n < 6) return std::nullopt;
  const std::vector<int> id = vertex_ids(objective);
  // Candidate periods by vertex kinds alone, most vertices covered first.
  std::vector<std::tuple<size_t, size_t, size_t, size_t>> candidates;  // (covered, period, start, length)
  for (size_t period = 1; period <= n / 3; ++period) {
    auto [start, length] = longest_run(id, period);
    const size_t blocks = (length + period) / period;
    if (blocks >= 3) candidates.emplace_back((blocks - 2) * period, period, start, length);
  }
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  const std::vector<std::vector<EdgeView>> views = edge_views(objective);
  std::vector<std::vector<int>> producers(n);  // the vertices whose tables each vertex reads
  for (size_t w = 0; w < n; ++w)
    if (!plan.dependent[w].empty()) producers[static_cast<size_t>(plan.dependent[w].back())].push_back(static_cast<int>(w));
  std::optional<Folding> best;
  for (size_t c = 0; c < candidates.size() && c < 8; ++c) {
    auto [covered, period, start, length] = candidates[c];
    if (best && covered <= best->followers) break;
    // Blocks may start anywhere in the run's first period: the boundary of
    // a block is where the plan treats consecutive blocks alike.
    for (size_t phase = 0; phase < period && start + phase + 2 * period <= start + length + period; ++phase) {
      const size_t first = start + phase;
      const size_t blocks = (start + length + period - first) / period;
      if (blocks < 3) break;
      std::vector<int> same_as(n, -1);
      size_t folded = 0;
      const size_t followers = fold_blocks(plan, views, producers, period, first, blocks, same_as, folded);
      if (followers == 0 || (best && followers <= best->followers)) continue;
      Folding found;
      found.same_as = std::move(same_as);
      found.period = period;
      found.first = first;
      found.blocks = blocks;
      found.folded_blocks = folded;
      found.followers = followers;
      best = std::move(found);
    }
  }
  return best;
}

// See fold.h.
std::pair<size_t, size_t> longest_run(const std::vector<int>& id, size_t period) {
  size_t best_start = 0, best_length = 0, start = 0, length = 0;
  for (size_t i = 0; i + period < id.size(); ++i) {
    if (id[i] == id[i + period]) {
      if (length == 0) start = i;
      if (++length > best_length) best_length = length, best_start = start;
    } else {
      length = 0;
    }
  }
  return {best_start, best_length};
}

}  // namespace pase
