#include "dp/chain_reduction.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "base/check.h"

namespace pase {
namespace {

// An end of a pair in the new objective: the vertex, and its class map when
// it is a product (null: the original end's).
struct End {
  int vertex = -1;
  const Product* product = nullptr;
  int member = -1;
};

void add_pair(Builder& out, const PairCost& pair, End u, End v) {
  PairCost copy;
  copy.u = u.vertex;
  copy.v = v.vertex;
  copy.u_class = u.product ? SharedArray<int32_t>(u.product->classes(static_cast<size_t>(u.member), pair.u_class)) : pair.u_class;
  copy.v_class = v.product ? SharedArray<int32_t>(v.product->classes(static_cast<size_t>(v.member), pair.v_class)) : pair.v_class;
  copy.u_classes = pair.u_classes;
  copy.v_classes = pair.v_classes;
  copy.cost = pair.cost;
  out.objective.pairs.push_back(std::move(copy));
}

}  // namespace

Product::Product(const Objective& objective, std::vector<int> vertices) : members(std::move(vertices)) {
  for (int m : members) radix.push_back(objective.config_count(static_cast<size_t>(m)));
  stride.assign(members.size(), 1);
  for (size_t i = members.size(); i-- > 0;) {
    stride[i] = configs;
    configs *= radix[i];
  }
}

int Product::index_of(int v) const {
  auto it = std::find(members.begin(), members.end(), v);
  return it == members.end() ? -1 : static_cast<int>(it - members.begin());
}

std::vector<int32_t> Product::classes(size_t i, const SharedArray<int32_t>& member_classes) const {
  std::vector<int32_t> out(configs);
  for (size_t z = 0; z < configs; ++z) out[z] = member_classes[static_cast<size_t>(digit(z, i))];
  return out;
}

std::vector<double> Product::cost(const Objective& objective, bool with_members) const {
  std::vector<double> out(configs, 0.0);
  if (!with_members) return out;
  struct Inner {  // a pair among the members: its ends' indices
    const PairCost* pair;
    size_t u, v;
  };
  std::vector<Inner> inner;
  for (const PairCost& pair : objective.pairs) {
    const int iu = index_of(pair.u), iv = index_of(pair.v);
    if (iu >= 0 && iv >= 0) inner.push_back({&pair, static_cast<size_t>(iu), static_cast<size_t>(iv)});
  }
  for (size_t z = 0; z < configs; ++z) {
    for (size_t i = 0; i < members.size(); ++i) out[z] += objective.vertex_cost[static_cast<size_t>(members[i])][static_cast<size_t>(digit(z, i))];
    for (const Inner& e : inner) out[z] += e.pair->at(static_cast<size_t>(digit(z, e.u)), static_cast<size_t>(digit(z, e.v)));
  }
  return out;
}

std::string Product::name(const std::vector<std::string>& names) const {
  std::string text;
  for (int m : members) text += (text.empty() ? "" : " + ") + names[static_cast<size_t>(m)];
  return text;
}

namespace {

// The separator-before and this block's separator as indices: per offset in a
// block, its index in the separator (-1: an inner vertex).
std::vector<int32_t> separator_indices(const ChainFold& fold) {
  std::vector<int32_t> separator_index(fold.period, -1);
  for (size_t i = 0; i < fold.separator.size(); ++i)
    separator_index[static_cast<size_t>(fold.separator[i])] = static_cast<int32_t>(i);
  return separator_index;
}

// The run's first block as an objective of its own: the separator before
// (cost 0), the block's other vertices, its own separator (its members'
// costs), and the edges among them.
void build_block(Reduction& r, const Objective& objective, const std::vector<std::string>& names) {
  const ChainFold& fold = r.fold;
  const size_t P = fold.period, first = fold.first;
  const std::vector<int32_t> separator_index = separator_indices(fold);
  std::vector<int> offset_role(P, -1);  // per offset: its vertex in the block objective
  const Product block_out(objective, [&] {
    std::vector<int> members;
    for (int o : fold.separator) members.push_back(static_cast<int>(first) + o);
    return members;
  }());
  r.z_in = r.block.add_vertex(std::vector<double>(r.before.configs, 0.0), r.before.name(names));
  r.block_vertex.push_back(-1);
  for (size_t o = 0; o < P; ++o) {
    if (separator_index[o] >= 0) continue;
    offset_role[o] = r.block.add_vertex(objective.vertex_cost[first + o], names[first + o]);
    r.block_vertex.push_back(static_cast<int>(o));
  }
  r.z_out = r.block.add_vertex(block_out.cost(objective, true), block_out.name(names));
  r.block_vertex.push_back(-1);
  auto block_end = [&](int v) -> End {
    if (static_cast<size_t>(v) >= first && static_cast<size_t>(v) < first + P) {
      const size_t o = static_cast<size_t>(v) - first;
      if (separator_index[o] >= 0) return {r.z_out, &block_out, separator_index[o]};
      return {offset_role[o], nullptr, -1};
    }
    const int i = r.before.index_of(v);
    PASE_ASSERT(i >= 0, v, first, P);  // validated: a block's edges reach only the separator before it
    return {r.z_in, &r.before, i};
  };
  for (const PairCost& pair : objective.pairs) {
    const bool u_in = static_cast<size_t>(pair.u) >= first && static_cast<size_t>(pair.u) < first + P;
    const bool v_in = static_cast<size_t>(pair.v) >= first && static_cast<size_t>(pair.v) < first + P;
    if (!u_in && !v_in) continue;
    // An edge to outside the block that is not from the separator before
    // leaves the block's separator for the next block: in the next block's T.
    if ((!u_in && r.before.index_of(pair.u) < 0) || (!v_in && r.before.index_of(pair.v) < 0)) continue;
    const End u = block_end(pair.u), v = block_end(pair.v);
    if (u.vertex == r.z_out && v.vertex == r.z_out) continue;  // in the separator's own cost
    add_pair(r.block, pair, u, v);
  }

}

// The objective left when the run is one edge: every vertex outside the run,
// each separator at the run's two ends as one vertex, and that edge (its cost
// filled in later: T^blocks).
void build_reduced(Reduction& r, const Objective& objective, const std::vector<std::string>& names) {
  const ChainFold& fold = r.fold;
  const size_t P = fold.period, first = fold.first, end = first + fold.blocks * P;
  PASE_ASSERT(first + static_cast<size_t>(fold.separator.front()) >= P, first, P);  // the separator before is in the graph
  std::vector<int> reduced_of(objective.vertex_count(), -1);
  for (size_t v = 0; v < objective.vertex_count(); ++v) {
    const int iv = static_cast<int>(v);
    if (r.before.index_of(iv) >= 0) {
      if (r.z0 < 0) {
        r.z0 = r.reduced.add_vertex(r.before.cost(objective, true), r.before.name(names));
        r.reduced_vertex.push_back(-1);
      }
      continue;
    }
    if (r.last.index_of(iv) >= 0) {
      if (r.zk < 0) {
        r.zk = r.reduced.add_vertex(r.last.cost(objective, false), r.last.name(names));  // its costs are in T
        r.reduced_vertex.push_back(-1);
      }
      continue;
    }
    if (v >= first && v < end) continue;
    reduced_of[v] = r.reduced.add_vertex(objective.vertex_cost[v], names[v]);
    r.reduced_vertex.push_back(iv);
  }
  auto reduced_end = [&](int v) -> End {
    if (int i = r.before.index_of(v); i >= 0) return {r.z0, &r.before, i};
    if (int i = r.last.index_of(v); i >= 0) return {r.zk, &r.last, i};
    return {reduced_of[static_cast<size_t>(v)], nullptr, -1};
  };
  const long lo = static_cast<long>(first) - static_cast<long>(P);
  for (const PairCost& pair : objective.pairs) {
    const long u = pair.u, v = pair.v;
    // In T: an edge inside a block of the run or from the separator before it.
    if (std::max(u, v) >= static_cast<long>(first) && std::min(u, v) >= lo && std::max(u, v) < static_cast<long>(end)) {
      const bool from_before = std::min(u, v) < static_cast<long>(first);
      if (!from_before || r.before.index_of(static_cast<int>(std::min(u, v))) >= 0) continue;
    }
    const End a = reduced_end(pair.u), b = reduced_end(pair.v);
    PASE_ASSERT(a.vertex >= 0 && b.vertex >= 0, pair.u, pair.v, first, end);  // validated: only the last separator leaves the run
    if (a.vertex == b.vertex) continue;  // among the separator before's members: in its own cost
    add_pair(r.reduced, pair, a, b);
  }
  PairCost run;
  run.u = r.z0;
  run.v = r.zk;
  std::vector<int32_t> u_class(r.before.configs), v_class(r.last.configs);
  std::iota(u_class.begin(), u_class.end(), 0);
  std::iota(v_class.begin(), v_class.end(), 0);
  run.u_class = std::move(u_class);
  run.v_class = std::move(v_class);
  run.u_classes = static_cast<int32_t>(r.before.configs);
  run.v_classes = static_cast<int32_t>(r.last.configs);
  run.cost = std::make_shared<std::vector<double>>(r.before.configs * r.last.configs, 0.0);
  r.run_edge = r.reduced.objective.pairs.size();
  r.reduced.objective.pairs.push_back(std::move(run));
}

}  // namespace

Reduction reduce(const Objective& objective, const std::vector<std::string>& names, const ChainFold& fold) {
  const size_t P = fold.period, first = fold.first, end = first + fold.blocks * P;
  std::vector<int> before, last;
  for (int o : fold.separator) {
    before.push_back(static_cast<int>(first - P) + o);
    last.push_back(static_cast<int>(end - P) + o);
  }
  Reduction r{fold, Product(objective, before), Product(objective, last), {}, {}, 0, 0, {}, {}, -1, -1, 0};
  build_block(r, objective, names);
  build_reduced(r, objective, names);
  return r;
}

}  // namespace pase
