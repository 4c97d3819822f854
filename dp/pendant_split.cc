#include "dp/pendant_split.h"

#include <algorithm>

#include "base/check.h"

namespace pase {
namespace {

// Per vertex: its index in `vertices`, or -1.
std::vector<int> index_in(size_t n, const std::vector<int>& vertices) {
  std::vector<int> index(n, -1);
  for (size_t i = 0; i < vertices.size(); ++i) index[static_cast<size_t>(vertices[i])] = static_cast<int>(i);
  return index;
}

// The pairs with both ends indexed (index_in), their ends renumbered.
void copy_pairs(const Objective& from, const std::vector<int>& index, Objective& into) {
  for (const PairCost& pair : from.pairs) {
    const int u = index[static_cast<size_t>(pair.u)], v = index[static_cast<size_t>(pair.v)];
    if (u < 0 || v < 0) continue;
    PairCost copy = pair;
    copy.u = u;
    copy.v = v;
    into.pairs.push_back(std::move(copy));
  }
}

}  // namespace

std::optional<PendantSplit> split_pendant(const Objective& objective, int root, int apart, OrderKind order) {
  const size_t n = objective.vertex_count();
  const std::vector<std::vector<int>> neighbours = undirected_neighbours(objective);
  // What `apart` reaches without passing the root stays; the rest hangs off it.
  std::vector<char> reached(n, 0);
  std::vector<int> stack{apart};
  reached[static_cast<size_t>(apart)] = 1;
  reached[static_cast<size_t>(root)] = 1;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (int w : neighbours[static_cast<size_t>(v)])
      if (!reached[static_cast<size_t>(w)]) reached[static_cast<size_t>(w)] = 1, stack.push_back(w);
  }
  PendantSplit split;
  split.root = root;
  for (size_t v = 0; v < n; ++v) (reached[v] ? split.rest : split.pendant).push_back(static_cast<int>(v));
  if (split.pendant.empty()) return std::nullopt;
  split.rest_root = index_in(n, split.rest)[static_cast<size_t>(root)];
  const Objective pendant = pendant_objective(objective, split);
  split.pendant_plan = min_degree_keeping_last(undirected_neighbours(pendant), pendant.config_counts(),
                                               {static_cast<int>(split.pendant.size())});
  const Objective rest = rest_objective(objective, split, std::vector<double>(objective.config_count(static_cast<size_t>(root)), 0.0));
  split.rest_plan = make_plan(undirected_neighbours(rest), order, rest.config_counts());
  return split;
}

Objective pendant_objective(const Objective& objective, const PendantSplit& split) {
  std::vector<int> vertices = split.pendant;
  vertices.push_back(split.root);
  const std::vector<int> index = index_in(objective.vertex_count(), vertices);
  Objective out;
  for (int v : split.pendant) out.vertex_cost.push_back(objective.vertex_cost[static_cast<size_t>(v)]);
  out.vertex_cost.push_back(std::vector<double>(objective.config_count(static_cast<size_t>(split.root)), 0.0));
  copy_pairs(objective, index, out);
  return out;
}

Objective rest_objective(const Objective& objective, const PendantSplit& split, const std::vector<double>& root_extra) {
  const SharedArray<double>& root_cost = objective.vertex_cost[static_cast<size_t>(split.root)];
  PASE_ASSERT(root_extra.size() == root_cost.size(), root_extra.size(), root_cost.size());
  Objective out;
  for (int v : split.rest) {
    if (v != split.root) {
      out.vertex_cost.push_back(objective.vertex_cost[static_cast<size_t>(v)]);
      continue;
    }
    std::vector<double> cost(root_extra);
    for (size_t c = 0; c < cost.size(); ++c) cost[c] += root_cost[c];
    out.vertex_cost.push_back(std::move(cost));
  }
  copy_pairs(objective, index_in(objective.vertex_count(), split.rest), out);
  return out;
}

}  // namespace pase
