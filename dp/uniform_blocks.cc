#include "dp/uniform_blocks.h"

#include <map>
#include <memory>
#include <tuple>

#include "base/check.h"
#include "dp/chain_find.h"
#include "dp/solve.h"

namespace pase {
namespace {

// Runs found after this many merges are left free: a graph has a few kinds
// of repeated block (an encoder's, a decoder's), not dozens.
constexpr int kMaxMerges = 16;

// The group's vertex costs added up; an edge inside the group (a vertex's
// edge to its own copy) adds its diagonal.
std::vector<std::vector<double>> merged_vertex_costs(const Objective& objective, const std::vector<int>& merged,
                                                     size_t groups) {
  std::vector<std::vector<double>> cost(groups);
  for (size_t v = 0; v < objective.vertex_count(); ++v) {
    std::vector<double>& into = cost[static_cast<size_t>(merged[v])];
    const SharedArray<double>& own = objective.vertex_cost[v];
    if (into.empty()) into.assign(own.size(), 0.0);
    PASE_ASSERT(into.size() == own.size(), v, into.size(), own.size());
    for (size_t c = 0; c < own.size(); ++c) into[c] += own[c];
  }
  for (const PairCost& pair : objective.pairs)
    if (merged[static_cast<size_t>(pair.u)] == merged[static_cast<size_t>(pair.v)]) {
      std::vector<double>& into = cost[static_cast<size_t>(merged[static_cast<size_t>(pair.u)])];
      for (size_t c = 0; c < into.size(); ++c) into[c] += pair.at(c, c);
    }
  return cost;
}

// Edges between groups: copies of one edge (the same ends, matrix and class
// maps) become one edge whose matrix is the copies' sum.
std::vector<PairCost> merged_pairs(const Objective& objective, const std::vector<int>& merged) {
  using Key = std::tuple<int, int, const void*, const void*, const void*>;
  std::map<Key, std::pair<size_t, int>> copies;  // key -> (first pair, count)
  std::vector<Key> order;
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    const PairCost& pair = objective.pairs[e];
    const int u = merged[static_cast<size_t>(pair.u)], v = merged[static_cast<size_t>(pair.v)];
    if (u == v) continue;
    const Key key{u, v, pair.cost.get(), pair.u_class.storage_id(), pair.v_class.storage_id()};
    auto [it, added] = copies.try_emplace(key, e, 0);
    ++it->second.second;
    if (added) order.push_back(key);
  }
  std::vector<PairCost> pairs;
  for (const Key& key : order) {
    const auto [e, count] = copies.at(key);
    PairCost pair = objective.pairs[e];
    pair.u = std::get<0>(key);
    pair.v = std::get<1>(key);
    if (count > 1) {
      auto scaled = std::make_shared<std::vector<double>>(*pair.cost);
      for (double& c : *scaled) c *= count;
      pair.cost = std::move(scaled);
    }
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

// Gives every vertex of `run` (in `uniform`'s ids) its first block's
// representative, and the alike vertices just outside it too (the parts of
// blocks at its ends); returns the run in the original's ids.
UniformRun merged_run(const UniformBlocks& uniform, const ChainFold& run, const SameConfigurations& same,
                      std::vector<int>& representative) {
  const std::vector<int>& original = uniform.stands_for;
  const size_t n = uniform.objective.vertex_count(), end = run.first + run.blocks * run.period;
  // target[w]: the first block's vertex w joins, or n.
  std::vector<size_t> target(n, n);
  for (size_t w = run.first; w < end; ++w) target[w] = run.first + (w - run.first) % run.period;
  auto alike = [&](size_t w, size_t t) {
    return uniform.objective.vertex_cost[w] == uniform.objective.vertex_cost[t] && same(original[w], original[t]);
  };
  UniformRun out{run.blocks, run.period, original[run.first], 0};
  // A run that starts at position s of the model's blocks leaves the first
  // s positions of a block before it and the other period - s after it: one
  // whole block, alike position by position, or no part of one (an aligned
  // run's neighbours, an embedding's sum or a final norm, may be priced as a
  // block's vertices without being one).
  size_t before = 0, after = 0;
  while (before + 1 < run.period && run.first > before &&
         alike(run.first - before - 1, run.first + run.period - before - 1))
    ++before;
  while (before + after < run.period && end + after < n && alike(end + after, run.first + after)) ++after;
  if (before + after == run.period) {
    for (size_t i = 0; i < before; ++i) target[run.first - i - 1] = run.first + run.period - i - 1;
    for (size_t i = 0; i < after; ++i) target[end + i] = run.first + i;
    out.extended = run.period;
  }
  for (size_t v = 0; v < representative.size(); ++v) {
    const size_t w = static_cast<size_t>(uniform.merged[v]);
    if (target[w] < n) representative[v] = original[target[w]];
  }
  return out;
}

}  // namespace

UniformBlocks merge_vertices(const Objective& objective, const std::vector<std::string>& names,
                             const std::vector<int>& representative) {
  PASE_ASSERT(representative.size() == objective.vertex_count(), representative.size(), objective.vertex_count());
  UniformBlocks out;
  out.merged.assign(objective.vertex_count(), -1);
  std::vector<int> group_of(objective.vertex_count(), -1);
  for (size_t v = 0; v < objective.vertex_count(); ++v) {
    const auto r = static_cast<size_t>(representative[v]);
    PASE_ASSERT(representative[r] == static_cast<int>(r), v, r);
    if (group_of[r] < 0) {
      group_of[r] = static_cast<int>(out.names.size());
      out.names.push_back(names[r]);
      out.stands_for.push_back(static_cast<int>(r));
    }
    out.merged[v] = group_of[r];
  }
  for (std::vector<double>& cost : merged_vertex_costs(objective, out.merged, out.names.size()))
    out.objective.vertex_cost.emplace_back(std::move(cost));
  out.objective.pairs = merged_pairs(objective, out.merged);
  return out;
}

UniformBlocks uniform_blocks(const Objective& objective, const std::vector<std::string>& names,
                             const SameConfigurations& same) {
  std::vector<int> representative(objective.vertex_count());
  for (size_t v = 0; v < representative.size(); ++v) representative[v] = static_cast<int>(v);
  UniformBlocks uniform = merge_vertices(objective, names, representative);
  std::vector<UniformRun> runs;
  for (int merge = 0; merge < kMaxMerges; ++merge) {
    const std::optional<ChainFold> run = find_chain(uniform.objective);
    if (!run) break;
    runs.push_back(merged_run(uniform, *run, same, representative));
    uniform = merge_vertices(objective, names, representative);
  }
  uniform.runs = std::move(runs);
  return uniform;
}

std::vector<int32_t> expand_uniform(const UniformBlocks& uniform, const std::vector<int32_t>& merged_choice) {
  std::vector<int32_t> choice(uniform.merged.size());
  for (size_t v = 0; v < choice.size(); ++v) choice[v] = merged_choice[static_cast<size_t>(uniform.merged[v])];
  return choice;
}

Solution expand_solution(const UniformBlocks& uniform, Solution merged) {
  const size_t n = uniform.merged.size();
  auto to_original = [&](int w) { return uniform.stands_for[static_cast<size_t>(w)]; };
  Solution out = std::move(merged);
  if (!out.choice.empty()) out.choice = expand_uniform(uniform, out.choice);
  EliminationPlan plan;
  plan.position.assign(n, -1);
  plan.dependent.resize(n);
  for (size_t i = 0; i < out.plan.order.size(); ++i) {
    const int w = out.plan.order[i];
    const int v = to_original(w);
    plan.order.push_back(v);
    plan.position[static_cast<size_t>(v)] = static_cast<int>(i);
    for (int d : out.plan.dependent[static_cast<size_t>(w)]) plan.dependent[static_cast<size_t>(v)].push_back(to_original(d));
  }
  out.plan = std::move(plan);
  std::vector<uint64_t> entries(n, 0);
  for (size_t w = 0; w < out.tables.entries.size(); ++w) entries[static_cast<size_t>(to_original(static_cast<int>(w)))] = out.tables.entries[w];
  out.tables.entries = std::move(entries);
  if (out.tables.largest_vertex >= 0) out.tables.largest_vertex = to_original(out.tables.largest_vertex);
  out.chains.clear();  // in the merged objective's ids; the merged runs are the report
  out.folding.reset();
  return out;
}

}  // namespace pase
