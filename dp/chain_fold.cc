#include "dp/chain_fold.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "base/check.h"
#include "base/checked_math.h"
#include "base/error.h"
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
    template_ = signatures(1);
    std::vector<Verdict> verdict(count_);
    for (size_t j = 0; j < count_; ++j) verdict[j] = judge(j);
    size_t a = 1, b = 1;
    while (a > 0 && verdict[a - 1].alike && verdict[a - 1].leaves_forward) --a;
    while (b + 1 < count_ && verdict[b].leaves_forward && verdict[b + 1].alike) ++b;
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

  [[nodiscard]] std::vector<Signature> signatures(size_t j) const {
    std::vector<Signature> out(period_);
    const size_t base = first_ + j * period_;
    for (size_t o = 0; o < period_; ++o) {
      const int v = static_cast<int>(base + o);
      for (const Incidence& edge : edges_[base + o])
        if (block_of(edge.other) == static_cast<long>(j) || in_separator_before(j, edge.other))
          out[o].emplace_back(edge.other - v, edge.produces, pkinds_[static_cast<size_t>(edge.pair)]);
      std::sort(out[o].begin(), out[o].end());
    }
    return out;
  }

  [[nodiscard]] Verdict judge(size_t j) const {
    Verdict verdict;
    const size_t base = first_ + j * period_, tbase = first_ + period_;
    verdict.alike = true;
    for (size_t o = 0; o < period_ && verdict.alike; ++o) verdict.alike = kinds_[base + o] == kinds_[tbase + o];
    if (verdict.alike) verdict.alike = signatures(j) == template_;
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
};

// A separator taken as one vertex: its configurations are the members'
// combinations, the first member slowest.
struct Product {
  std::vector<int> members;  // vertex ids
  std::vector<size_t> radix, stride;
  size_t configs = 1;

  Product(const Objective& objective, std::vector<int> vertices) : members(std::move(vertices)) {
    for (int m : members) radix.push_back(objective.config_count(static_cast<size_t>(m)));
    stride.assign(members.size(), 1);
    for (size_t i = members.size(); i-- > 0;) {
      stride[i] = configs;
      configs *= radix[i];
    }
  }
  [[nodiscard]] int index_of(int v) const {
    auto it = std::find(members.begin(), members.end(), v);
    return it == members.end() ? -1 : static_cast<int>(it - members.begin());
  }
  [[nodiscard]] int32_t digit(size_t z, size_t i) const { return static_cast<int32_t>(z / stride[i] % radix[i]); }
  // A member's class map over the product's configurations.
  [[nodiscard]] std::vector<int32_t> classes(size_t i, const SharedArray<int32_t>& member_classes) const {
    std::vector<int32_t> out(configs);
    for (size_t z = 0; z < configs; ++z) out[z] = member_classes[static_cast<size_t>(digit(z, i))];
    return out;
  }
  // Own costs of the members, plus the pairs among them.
  [[nodiscard]] std::vector<double> cost(const Objective& objective, bool with_members) const {
    std::vector<double> out(configs, 0.0);
    if (!with_members) return out;
    std::vector<int32_t> choice(members.size());
    for (size_t z = 0; z < configs; ++z) {
      for (size_t i = 0; i < members.size(); ++i) out[z] += objective.vertex_cost[static_cast<size_t>(members[i])][static_cast<size_t>(digit(z, i))];
      for (const PairCost& pair : objective.pairs) {
        const int iu = index_of(pair.u), iv = index_of(pair.v);
        if (iu >= 0 && iv >= 0) out[z] += pair.at(static_cast<size_t>(digit(z, static_cast<size_t>(iu))), static_cast<size_t>(digit(z, static_cast<size_t>(iv))));
      }
    }
    return out;
  }
  [[nodiscard]] std::string name(const std::vector<std::string>& names) const {
    std::string text;
    for (int m : members) text += (text.empty() ? "" : " + ") + names[static_cast<size_t>(m)];
    return text;
  }
};

// A new objective built from parts of another: vertices, and pairs whose ends
// are vertices or members of a product.
struct Builder {
  Objective objective;
  std::vector<std::string> names;

  int add_vertex(SharedArray<double> cost, std::string name) {
    objective.vertex_cost.push_back(std::move(cost));
    names.push_back(std::move(name));
    return static_cast<int>(objective.vertex_cost.size()) - 1;
  }
};

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

// The one block's objective and the objective left when the run is an edge.
struct Reduction {
  ChainFold fold;
  Product before, last;  // the separator before the run, and the run's last block's
  // One block (the run's first): the separator before (cost 0, kept), the
  // block's other vertices, its own separator (its members' costs, kept).
  Builder block;
  std::vector<int> block_vertex;  // per block objective vertex: its offset in the block, -1 for the two separators
  EliminationPlan block_plan;
  int z_in = 0, z_out = 0;
  // The rest, the run replaced by an edge from `before` to `last` (costs T^blocks).
  Builder reduced;
  std::vector<int> reduced_vertex;  // per reduced vertex: the objective's vertex, -1 for the two separators
  int z0 = -1, zk = -1;
  size_t run_edge = 0;  // index of that edge in reduced.objective.pairs
};

Reduction reduce(const Objective& objective, const std::vector<std::string>& names, const ChainFold& fold) {
  const size_t P = fold.period, first = fold.first, end = first + fold.blocks * P;
  std::vector<int> before, last;
  for (int o : fold.separator) {
    before.push_back(static_cast<int>(first - P) + o);
    last.push_back(static_cast<int>(end - P) + o);
  }
  Reduction r{fold, Product(objective, before), Product(objective, last), {}, {}, {}, 0, 0, {}, {}, -1, -1, 0};
  std::vector<int> offset_role(P, -1);  // per offset: its vertex in the block objective
  std::vector<int32_t> separator_index(P, -1);
  for (size_t i = 0; i < fold.separator.size(); ++i) separator_index[static_cast<size_t>(fold.separator[i])] = static_cast<int32_t>(i);

  // The block objective.
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
  r.block_plan = min_degree_keeping_last(undirected_neighbours(r.block.objective), r.block.objective.config_counts(),
                                         {r.z_in, r.z_out});

  // The reduced objective: every vertex outside the run, each separator as one vertex.
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
  return r;
}

// R = A ⊗ B in the min-plus sense over C × C matrices: R[i][j] = min over l of
// A[i][l] + B[l][j]. Each entry is the exact minimum of the same sums whatever
// the order or the thread count (min does not round).
std::vector<double> min_plus(const std::vector<double>& a, const std::vector<double>& b, size_t c, int threads) {
  std::vector<double> r(c * c, std::numeric_limits<double>::infinity());
  auto rows = [&](const tbb::blocked_range<size_t>& range) {
    for (size_t i = range.begin(); i != range.end(); ++i) {
      double* out = r.data() + i * c;
      for (size_t l = 0; l < c; ++l) {
        const double x = a[i * c + l];
        const double* row = b.data() + l * c;
        for (size_t j = 0; j < c; ++j) out[j] = std::min(out[j], x + row[j]);
      }
    }
  };
  if (threads == 1 || c < 64) {
    rows(tbb::blocked_range<size_t>(0, c));
  } else {
    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    arena.execute([&] { tbb::parallel_for(tbb::blocked_range<size_t>(0, c, 8), rows); });
  }
  return r;
}

// T^k by squaring (products_for(k) products, `done` called after each).
std::vector<double> min_plus_power(const std::vector<double>& t, size_t c, size_t k, int threads,
                                   const std::function<void()>& done) {
  std::vector<double> result, square = t;
  bool have = false;
  for (size_t e = k; e > 0; e >>= 1) {
    if (e & 1) {
      if (have) {
        result = min_plus(result, square, c, threads);
        done();
      } else {
        result = square;
      }
      have = true;
    }
    if (e > 1) {
      square = min_plus(square, square, c, threads);
      done();
    }
  }
  return result;
}

// The min-plus products T^k takes by squaring.
size_t products_for(size_t k) {
  size_t count = 0;
  for (size_t e = k; e > 1; e >>= 1) count += 1 + (e & 1);
  return count;
}

// The progress of a chained solve as one DP's: its parts (the block's DP,
// the min-plus products, the rest's DP, back-substitution) run one after
// another, each counted from where the ones before left off, against the
// totals the sizing pass planned.
class ChainProgress {
 public:
  ChainProgress(std::function<void(const DpProgress&)> report, uint64_t tables, uint64_t work)
      : report_(std::move(report)) {
    done_.tables = tables;
    done_.work = work;
  }

  // The callback for a DP part: its own counts, on top of the parts before
  // (a part's counts are capped at its plan: a folded DP's copied tables
  // report more steps than it planned).
  [[nodiscard]] std::function<void(const DpProgress&)> part() {
    if (!report_) return {};
    return [this](const DpProgress& local) {
      DpProgress now = done_;
      now.tables_done += std::min(local.tables_done, local.tables);
      now.work_done += std::min(local.work_done, local.work);
      send(now);
    };
  }
  // A part finished: `tables` tables and `work` steps of the plan.
  void finish(uint64_t tables, uint64_t work) {
    done_.tables_done += tables;
    done_.work_done = saturating_add(done_.work_done, work);
    if (report_) send(done_);
  }

 private:
  void send(DpProgress now) const {
    now.tables_done = std::min(now.tables_done, now.tables);
    now.work_done = std::min(now.work_done, now.work);
    report_(now);
  }

  std::function<void(const DpProgress&)> report_;
  DpProgress done_;
};

// Sizes of one DP, moved onto the objective's vertices (`to_objective`: per
// vertex of the DP's objective, the objective's vertex or -1).
void add_tables(TablePlan& into, const TablePlan& part, const std::vector<int>& to_objective) {
  for (size_t v = 0; v < part.entries.size(); ++v)
    if (to_objective[v] >= 0) into.entries[static_cast<size_t>(to_objective[v])] = part.entries[v];
  into.total_entries = saturating_add(into.total_entries, part.total_entries);
  into.table_bytes = saturating_add(into.table_bytes, part.table_bytes);
  into.working_bytes = std::max(into.working_bytes, part.working_bytes);
  into.total_work = saturating_add(into.total_work, part.total_work);
  into.threads = std::max(into.threads, part.threads);
  if (part.largest_vertex >= 0 && to_objective[static_cast<size_t>(part.largest_vertex)] >= 0 &&
      (into.largest_vertex < 0 || part.entries[static_cast<size_t>(part.largest_vertex)] > into.entries[static_cast<size_t>(into.largest_vertex)]))
    into.largest_vertex = to_objective[static_cast<size_t>(part.largest_vertex)];
}

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

namespace {

// solve_chained, sizing only (`progress` null) or solving.
std::optional<ChainSolution> chain(const Objective& objective, const std::vector<std::string>& names,
                                   const DpOptions& options, OrderKind order, ChainProgress* progress) {
  const bool run = progress != nullptr;
  const std::optional<ChainFold> fold = find_chain(objective);
  if (!fold) return std::nullopt;
  Reduction r = reduce(objective, names, *fold);
  const size_t c_in = r.before.configs, c = r.last.configs, k = fold->blocks;
  PASE_ASSERT(c_in == c, c_in, c);  // validated: the same edges, so the same configurations

  ChainSolution out;
  const size_t n = objective.vertex_count();
  out.tables.entries.assign(n, 0);
  ChainReport report;
  report.fold = *fold;
  report.separator_vertices = r.last.members;
  for (int& v : report.separator_vertices) v -= static_cast<int>((k - 1) * fold->period);

  // One block's tables, T, then M = T^k on the run's edge.
  DpOptions block_options = options;
  block_options.same_as.clear();
  PartialDp block;
  const uint64_t block_tables = r.block.objective.vertex_count() - 2;  // all but the two separators
  if (run) {
    block_options.progress = progress->part();
    block = eliminate_dp(r.block.objective, r.block_plan, r.block.names, block_options, 2);
    progress->finish(block_tables, block.sizes.total_work);
    block.sizes.entries[static_cast<size_t>(r.z_in)] = block.sizes.entries[static_cast<size_t>(r.z_out)] = 0;
  } else {
    block.sizes = measure_tables(r.block.objective, r.block_plan, options.threads);
  }
  std::vector<int> block_to_objective(r.block_vertex.size(), -1);
  for (size_t v = 0; v < r.block_vertex.size(); ++v)
    if (r.block_vertex[v] >= 0) block_to_objective[v] = static_cast<int>(fold->first) + r.block_vertex[v];
  add_tables(out.tables, block.sizes, block_to_objective);
  report.block_entries = block.sizes.total_entries;
  // T, M and the squares (four C × C), and at back-substitution an argmin per
  // block and separator configuration.
  const uint64_t chain_bytes = 4 * c * c * sizeof(double) + k * c * sizeof(int32_t) + 2 * c * sizeof(double);
  out.tables.table_bytes = saturating_add(out.tables.table_bytes, chain_bytes);
  out.tables.total_entries = saturating_add(out.tables.total_entries, c * c);
  // Each product C^3 steps, back-substitution C^2 per block; each product
  // and back-substitution count as a table in the progress.
  const uint64_t product_work = c * c * c, back_work = k * c * c;
  out.tables.total_work = saturating_add(out.tables.total_work, products_for(k) * product_work + back_work);
  out.progress_tables = block_tables + products_for(k) + 1;

  if (run)
    r.reduced.objective.pairs[r.run_edge].cost = std::make_shared<const std::vector<double>>(
        min_plus_power(block.table, c, k, options.threads, [&] { progress->finish(1, product_work); }));
  std::vector<int> reduced_to_objective = r.reduced_vertex;
  reduced_to_objective[static_cast<size_t>(r.z0)] = r.before.members.front();
  reduced_to_objective[static_cast<size_t>(r.zk)] = r.last.members.front();

  // The rest: folded again if it repeats blocks, else the DP.
  DpResult rest;
  std::optional<ChainSolution> inner = chain(r.reduced.objective, r.reduced.names, options, order, progress);
  if (inner) {
    rest = std::move(inner->result);
    add_tables(out.tables, inner->tables, reduced_to_objective);
    out.progress_tables += inner->progress_tables;
    for (ChainReport& nested : inner->folds) {
      nested.fold.first = static_cast<size_t>(reduced_to_objective[nested.fold.first]);
      for (int& v : nested.separator_vertices) v = reduced_to_objective[static_cast<size_t>(v)];
    }
    out.folds.push_back(report);
    out.folds.insert(out.folds.end(), inner->folds.begin(), inner->folds.end());
  } else {
    const Objective& small = r.reduced.objective;
    const EliminationPlan plan = make_plan(undirected_neighbours(small), order, small.config_counts());
    DpOptions dp = options;
    if (std::optional<Folding> folding = find_folding(small, plan)) dp.same_as = std::move(folding->same_as);
    const TablePlan rest_sizes = measure_tables(small, plan, options.threads, dp.same_as);
    add_tables(out.tables, rest_sizes, reduced_to_objective);
    out.progress_tables += small.vertex_count();
    if (run) {
      dp.progress = progress->part();
      rest = solve_dp(small, plan, r.reduced.names, dp);
      progress->finish(small.vertex_count(), rest_sizes.total_work);
    }
    out.folds.push_back(report);
  }
  out.tables.total_bytes = saturating_add(out.tables.table_bytes, out.tables.working_bytes);
  // Reports name the largest table's vertex: one of the objective's, even
  // when the largest is a separator's (kept, so never built).
  if (out.tables.largest_vertex < 0)
    out.tables.largest_vertex = static_cast<int>(std::max_element(out.tables.entries.begin(), out.tables.entries.end()) -
                                                 out.tables.entries.begin());
  if (!run) return out;

  // Back-substitution: the separators along the run from the two ends'
  // configurations, then each block's inner strategy.
  DpResult& result = out.result;
  result.cost = rest.cost;
  result.choice.assign(n, 0);
  for (size_t v = 0; v < r.reduced_vertex.size(); ++v)
    if (r.reduced_vertex[v] >= 0) result.choice[static_cast<size_t>(r.reduced_vertex[v])] = rest.choice[v];
  const size_t s0 = static_cast<size_t>(rest.choice[static_cast<size_t>(r.z0)]);
  for (size_t i = 0; i < r.before.members.size(); ++i) result.choice[static_cast<size_t>(r.before.members[i])] = r.before.digit(s0, i);
  std::vector<int32_t> separator(k + 1);  // separator[j]: configuration of the separator before block j (j = k: the last's)
  separator[0] = static_cast<int32_t>(s0);
  {
    const std::vector<double>& t = block.table;
    std::vector<double> f(t.begin() + static_cast<std::ptrdiff_t>(s0 * c), t.begin() + static_cast<std::ptrdiff_t>(s0 * c + c)), next(c);
    std::vector<int32_t> argmin(k * c, static_cast<int32_t>(s0));  // per block j >= 1: the best separator before it
    for (size_t j = 1; j < k; ++j) {
      std::fill(next.begin(), next.end(), std::numeric_limits<double>::infinity());
      int32_t* arg = argmin.data() + j * c;
      for (size_t from = 0; from < c; ++from) {
        const double x = f[from];
        const double* row = t.data() + from * c;
        for (size_t to = 0; to < c; ++to)
          if (x + row[to] < next[to]) next[to] = x + row[to], arg[to] = static_cast<int32_t>(from);
      }
      f.swap(next);
    }
    separator[k] = rest.choice[static_cast<size_t>(r.zk)];
    for (size_t j = k; j-- > 1;) separator[j] = argmin[j * c + static_cast<size_t>(separator[j + 1])];
  }
  progress->finish(1, back_work);
  std::vector<int32_t> inner_choice(r.block.objective.vertex_count(), 0);
  for (size_t j = 0; j < k; ++j) {
    inner_choice[static_cast<size_t>(r.z_in)] = separator[j];
    inner_choice[static_cast<size_t>(r.z_out)] = separator[j + 1];
    read_back(block, r.block.objective, r.block_plan, inner_choice);
    const size_t base = fold->first + j * fold->period;
    for (size_t v = 0; v < r.block_vertex.size(); ++v)
      if (r.block_vertex[v] >= 0) result.choice[base + static_cast<size_t>(r.block_vertex[v])] = inner_choice[v];
    for (size_t i = 0; i < fold->separator.size(); ++i)
      result.choice[base + static_cast<size_t>(fold->separator[i])] = r.last.digit(static_cast<size_t>(separator[j + 1]), i);
  }
  result.stats = rest.stats;
  result.stats.table_entries = out.tables.total_entries;
  result.stats.max_dependent_set = std::max(rest.stats.max_dependent_set, block.stats.max_dependent_set);
  // The block's argmins stay while the rest is solved.
  result.stats.peak_table_bytes =
      std::max(block.stats.peak_table_bytes, block.argmin_bytes + chain_bytes + rest.stats.peak_table_bytes);
  return out;
}

// Refuses a chained solve past the limits, as check_limits does a DP: the
// sum of its parts, the min-plus products and T, T^k and their squares included.
void check_chain_limits(const TablePlan& sizes, const std::vector<std::string>& names, const DpOptions& options) {
  auto text = [](uint64_t x) { return x == kSaturated ? std::string("more than 2^64") : std::to_string(x); };
  const size_t v = static_cast<size_t>(sizes.largest_vertex);
  const std::string largest = "'" + names[v] + "' with " + text(sizes.entries[v]) + " entries";
  if (sizes.total_bytes > options.max_table_bytes)
    throw LimitError({"max_table_bytes", "the table byte limit",
                      "the DP tables would need " + text(sizes.total_bytes) + " bytes (" + text(sizes.working_bytes) +
                          " of them working buffers; folded: a block's, its transfer tables and the rest's), above the limit of " +
                          std::to_string(options.max_table_bytes) + " (",
                      "); the largest is vertex " + largest});
  if (sizes.total_work > options.max_work)
    throw LimitError({"max_work", "the work limit",
                      "the DP would take " + text(sizes.total_work) +
                          " steps (table entries x configurations; folded: C^3 per min-plus product of transfer tables), "
                          "above the limit of " + std::to_string(options.max_work) + " (",
                      "; about 10^9 steps per second per core); the largest table is vertex " + largest});
}

}  // namespace

std::optional<ChainSolution> solve_chained(const Objective& objective, const std::vector<std::string>& names,
                                           const DpOptions& options, OrderKind order, bool run) {
  // Sized first, whole: the limits and the progress line are over every
  // part, and nothing is computed for a solve that would be refused.
  std::optional<ChainSolution> sized = chain(objective, names, options, order, nullptr);
  if (!sized || !run) return sized;
  check_chain_limits(sized->tables, names, options);
  ChainProgress progress(options.progress, sized->progress_tables, sized->tables.total_work);
  std::optional<ChainSolution> solved = chain(objective, names, options, order, &progress);
  PASE_ASSERT(solved && solved->tables.total_work == sized->tables.total_work, sized->tables.total_work);
  return solved;
}

}  // namespace pase
