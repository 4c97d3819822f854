#include "solver/cap_mix_dp.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace pase {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t saturating_mul(uint64_t a, uint64_t b) { return a != 0 && b > kSaturated / a ? kSaturated : a * b; }
uint64_t saturating_add(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }

// A table of an earlier vertex that v consumes: the strides of the members
// of its scope, read from v's digits (`from_scope`: index in D(v)) or v's own.
struct Read {
  int producer = 0;
  uint64_t own_stride = 0;
  std::vector<std::pair<int, uint64_t>> from_scope;  // (index in D(v), stride in the producer's table)
};

// An edge charged at v: its other end is later, at `scope_index` in D(v).
struct EdgeRef {
  const PairCost* pair = nullptr;
  int scope_index = 0;
  bool v_is_u = false;
};

// One vertex of the restricted DP. Its table holds, for every assignment of
// D(v) (restricted configurations, the last member fastest) and every q in
// 0..R, the least cost of v and everything eliminated into it using at most
// q units: (entry * (R + 1) + q).
struct MixVertex {
  std::vector<int32_t> configs;  // allowed configurations, ascending
  std::vector<uint64_t> units;   // rounded-up units above the vertex's least bytes
  std::vector<uint64_t> stride;  // per member of D(v)
  uint64_t entries = 1;
  std::vector<EdgeRef> edges;
  std::vector<Read> reads;
  std::vector<double> table;
};

// Min-plus convolution of two "at most q units" vectors, up to `length` entries.
void convolve(const double* a, const double* b, size_t length, double* out) {
  for (size_t q = 0; q < length; ++q) {
    double best = kInf;
    for (size_t j = 0; j <= q; ++j) best = std::min(best, a[q - j] + b[j]);
    out[q] = best;
  }
}

class MixDp {
 public:
  MixDp(const Objective& objective, const EliminationPlan& plan, std::vector<MixVertex>& vertices, size_t width)
      : objective_(objective), plan_(plan), vertices_(vertices), width_(width) {}

  // v's cost at allowed configuration i given the digits of D(v), without messages.
  double local(int v, const std::vector<uint64_t>& digits, size_t i) const {
    const MixVertex& x = vertices_[static_cast<size_t>(v)];
    const size_t config = static_cast<size_t>(x.configs[i]);
    double cost = objective_.vertex_cost[static_cast<size_t>(v)][config];
    for (const EdgeRef& edge : x.edges) {
      const int w = plan_.dependent[static_cast<size_t>(v)][static_cast<size_t>(edge.scope_index)];
      const size_t other = static_cast<size_t>(vertices_[static_cast<size_t>(w)].configs[digits[static_cast<size_t>(edge.scope_index)]]);
      cost += edge.v_is_u ? edge.pair->at(config, other) : edge.pair->at(other, config);
    }
    return cost;
  }

  // The table of v's j-th read at configuration i.
  const double* read_row(int v, size_t j, const std::vector<uint64_t>& digits, size_t i) const {
    const Read& read = vertices_[static_cast<size_t>(v)].reads[j];
    uint64_t entry = read.own_stride * i;
    for (const auto& [index, stride] : read.from_scope) entry += stride * digits[static_cast<size_t>(index)];
    return vertices_[static_cast<size_t>(read.producer)].table.data() + entry * width_;
  }

  // Prefix convolutions of v's reads at configuration i, `length` entries
  // each: prefix[j] combines reads 0..j (prefix[0] is read 0's row itself).
  void prefixes(int v, const std::vector<uint64_t>& digits, size_t i, size_t length, std::vector<std::vector<double>>& prefix,
                uint64_t& work) const {
    const size_t k = vertices_[static_cast<size_t>(v)].reads.size();
    if (prefix.size() < k) prefix.resize(k);
    for (size_t j = 0; j < k; ++j) {
      prefix[j].resize(width_);
      const double* row = read_row(v, j, digits, i);
      if (j == 0) {
        std::copy(row, row + length, prefix[0].begin());
      } else {
        convolve(prefix[j - 1].data(), row, length, prefix[j].data());
        work += length * (length + 1) / 2;
      }
    }
  }

  uint64_t fill(int v, std::vector<std::vector<double>>& prefix) {
    MixVertex& x = vertices_[static_cast<size_t>(v)];
    const size_t k = plan_.dependent[static_cast<size_t>(v)].size();
    x.table.assign(x.entries * width_, kInf);
    std::vector<uint64_t> digits(k, 0);
    uint64_t work = 0;
    const uint64_t limit = width_ - 1;
    for (uint64_t entry = 0; entry < x.entries; ++entry) {
      double* out = x.table.data() + entry * width_;
      for (size_t i = 0; i < x.configs.size(); ++i) {
        const uint64_t u = x.units[i];
        if (u > limit) continue;
        const double cost = local(v, digits, i);
        if (cost == kInf) continue;
        const size_t length = static_cast<size_t>(limit - u + 1);
        work += length;
        if (x.reads.empty()) {
          for (size_t q = 0; q < length; ++q) out[q + u] = std::min(out[q + u], cost);
          continue;
        }
        prefixes(v, digits, i, length, prefix, work);
        const double* combined = prefix[x.reads.size() - 1].data();
        for (size_t q = 0; q < length; ++q) out[q + u] = std::min(out[q + u], cost + combined[q]);
      }
      for (size_t m = k; m-- > 0;) {  // odometer, the last member fastest
        const int w = plan_.dependent[static_cast<size_t>(v)][m];
        if (++digits[m] < vertices_[static_cast<size_t>(w)].configs.size()) break;
        digits[m] = 0;
      }
    }
    return work;
  }

  // The allowed configuration and the units each read gets, for v at the
  // digits of D(v) and a budget of `budget` units: the choice its table's
  // entry came from.
  size_t trace(int v, const std::vector<uint64_t>& digits, uint64_t budget, std::vector<std::vector<double>>& prefix,
               std::vector<uint64_t>& read_budget) const {
    const MixVertex& x = vertices_[static_cast<size_t>(v)];
    uint64_t unused = 0;
    double best = kInf;
    size_t pick = x.configs.size();
    for (size_t i = 0; i < x.configs.size(); ++i) {
      if (x.units[i] > budget) continue;
      const double cost = local(v, digits, i);
      const size_t length = static_cast<size_t>(budget - x.units[i] + 1);
      double value = cost;
      if (!x.reads.empty()) {
        prefixes(v, digits, i, length, prefix, unused);
        value += prefix[x.reads.size() - 1][length - 1];
      }
      if (value < best) {
        best = value;
        pick = i;
      }
    }
    if (pick == x.configs.size()) throw std::logic_error("the capped mix DP lost its strategy while tracing it back");
    read_budget.assign(x.reads.size(), 0);
    if (x.reads.empty()) return pick;
    const size_t length = static_cast<size_t>(budget - x.units[pick] + 1);
    prefixes(v, digits, pick, length, prefix, unused);
    uint64_t left = budget - x.units[pick];
    for (size_t j = x.reads.size(); j-- > 1;) {
      const double* row = read_row(v, j, digits, pick);
      uint64_t take = 0;
      double best_split = kInf;
      for (uint64_t t = 0; t <= left; ++t) {
        const double value = prefix[j - 1][left - t] + row[t];
        if (value < best_split) {
          best_split = value;
          take = t;
        }
      }
      read_budget[j] = take;
      left -= take;
    }
    read_budget[0] = left;
    return pick;
  }

 private:
  const Objective& objective_;
  const EliminationPlan& plan_;
  std::vector<MixVertex>& vertices_;
  size_t width_;
};

}  // namespace

CapMix best_mix_under_cap(const Objective& objective, const MemoryTables& memory, const EliminationPlan& plan,
                          const std::vector<const std::vector<int32_t>*>& strategies, uint64_t cap,
                          const CapMixOptions& options) {
  CapMix mix;
  const size_t n = objective.vertex_count();
  if (n == 0 || strategies.empty()) return mix;
  std::vector<MixVertex> vertices(n);
  uint64_t least = 0;
  std::vector<uint64_t> base(n);
  for (size_t v = 0; v < n; ++v) {
    MixVertex& x = vertices[v];
    for (const std::vector<int32_t>* strategy : strategies) x.configs.push_back((*strategy)[v]);
    std::sort(x.configs.begin(), x.configs.end());
    x.configs.erase(std::unique(x.configs.begin(), x.configs.end()), x.configs.end());
    base[v] = kSaturated;
    for (int32_t c : x.configs) base[v] = std::min(base[v], memory.bytes(v, static_cast<size_t>(c)));
    least = saturating_add(least, base[v]);
  }
  if (least > cap) return mix;
  const uint64_t slack = cap - least;

  // Scopes, strides, edges charged at each vertex, and which tables each reads.
  std::vector<int> roots;
  for (size_t v = 0; v < n; ++v) {
    MixVertex& x = vertices[v];
    const std::vector<int>& scope = plan.dependent[v];
    x.stride.assign(scope.size(), 1);
    for (size_t m = scope.size(); m-- > 0;) {
      x.stride[m] = x.entries;
      x.entries = saturating_mul(x.entries, vertices[static_cast<size_t>(scope[m])].configs.size());
    }
    if (scope.empty()) roots.push_back(static_cast<int>(v));
  }
  for (const PairCost& pair : objective.pairs) {
    if (pair.u == pair.v) continue;  // no such edges (a layer does not feed itself)
    const bool u_first = plan.position[static_cast<size_t>(pair.u)] < plan.position[static_cast<size_t>(pair.v)];
    const int first = u_first ? pair.u : pair.v, later = u_first ? pair.v : pair.u;
    const std::vector<int>& scope = plan.dependent[static_cast<size_t>(first)];
    const auto it = std::find(scope.begin(), scope.end(), later);
    if (it == scope.end()) throw std::logic_error("an edge's later end is not in its first end's dependent set");
    vertices[static_cast<size_t>(first)].edges.push_back({&pair, static_cast<int>(it - scope.begin()), u_first});
  }
  for (size_t w = 0; w < n; ++w) {
    const std::vector<int>& scope = plan.dependent[w];
    if (scope.empty()) continue;
    const int consumer = scope.back();  // the earliest-processed member of D(w)
    const std::vector<int>& into = plan.dependent[static_cast<size_t>(consumer)];
    Read read;
    read.producer = static_cast<int>(w);
    for (size_t m = 0; m < scope.size(); ++m) {
      if (scope[m] == consumer) {
        read.own_stride = vertices[w].stride[m];
        continue;
      }
      const auto it = std::find(into.begin(), into.end(), scope[m]);
      if (it == into.end()) throw std::logic_error("a dependent set is not within its consumer's");
      read.from_scope.emplace_back(static_cast<int>(it - into.begin()), vertices[w].stride[m]);
    }
    vertices[static_cast<size_t>(consumer)].reads.push_back(std::move(read));
  }

  // The grid: the most units (a power of two, at most max_units) whose tables
  // and steps fit the budget; convolutions cost (units^2) / 2 per extra read.
  uint64_t units = 0;
  for (uint64_t q = static_cast<uint64_t>(std::max(options.max_units, 1)); q >= 4; q /= 2) {
    uint64_t work = 0, bytes = 0;
    const uint64_t width = q + 1;
    for (size_t v = 0; v < n; ++v) {
      const MixVertex& x = vertices[v];
      const uint64_t steps = saturating_mul(x.entries, x.configs.size());
      const uint64_t reads = x.reads.size() > 1 ? x.reads.size() - 1 : 0;
      work = saturating_add(work, saturating_mul(steps, saturating_add(width, saturating_mul(reads, width * (width + 1) / 2))));
      bytes = saturating_add(bytes, saturating_mul(saturating_mul(x.entries, width), sizeof(double)));
    }
    if (work <= options.max_work && bytes <= options.max_bytes) {
      units = q;
      break;
    }
  }
  if (units == 0) return mix;
  // Bytes per unit: the slack over `units` steps, rounded up (at least one byte).
  const uint64_t unit_bytes = std::max<uint64_t>(1, slack / units + (slack % units != 0));
  const uint64_t budget = slack / unit_bytes;  // at most `units`
  for (size_t v = 0; v < n; ++v)
    for (int32_t c : vertices[v].configs) {
      const uint64_t above = memory.bytes(v, static_cast<size_t>(c)) - base[v];
      vertices[v].units.push_back(above / unit_bytes + (above % unit_bytes != 0));  // rounded up: what is kept fits
    }
  const size_t width = static_cast<size_t>(budget) + 1;
  MixDp dp(objective, plan, vertices, width);
  std::vector<std::vector<double>> prefix;
  for (int v : plan.order) mix.work += dp.fill(v, prefix);

  // The roots (empty dependent sets) share the budget: combine their tables.
  std::vector<std::vector<double>> root_prefix(roots.size(), std::vector<double>(width));
  for (size_t j = 0; j < roots.size(); ++j) {
    const double* row = vertices[static_cast<size_t>(roots[j])].table.data();
    if (j == 0)
      std::copy(row, row + width, root_prefix[0].begin());
    else
      convolve(root_prefix[j - 1].data(), row, width, root_prefix[j].data());
  }
  mix.units = static_cast<int>(units);
  mix.unit_bytes = unit_bytes;
  if (roots.empty() || root_prefix.back()[width - 1] == kInf) return mix;  // no mix fits on the grid

  // Back-substitution, latest first: each vertex's budget is given by its
  // consumer (or the roots' split), its configuration by its table's entry.
  std::vector<uint64_t> budget_of(n, 0);
  uint64_t left = budget;
  for (size_t j = roots.size(); j-- > 1;) {
    const double* row = vertices[static_cast<size_t>(roots[j])].table.data();
    uint64_t take = 0;
    double best = kInf;
    for (uint64_t t = 0; t <= left; ++t) {
      const double value = root_prefix[j - 1][left - t] + row[t];
      if (value < best) {
        best = value;
        take = t;
      }
    }
    budget_of[static_cast<size_t>(roots[j])] = take;
    left -= take;
  }
  budget_of[static_cast<size_t>(roots[0])] = left;
  std::vector<size_t> pick(n, 0);
  std::vector<uint64_t> read_budget;
  for (size_t i = plan.order.size(); i-- > 0;) {
    const int v = plan.order[i];
    const std::vector<int>& scope = plan.dependent[static_cast<size_t>(v)];
    std::vector<uint64_t> digits(scope.size());
    for (size_t m = 0; m < scope.size(); ++m) digits[m] = pick[static_cast<size_t>(scope[m])];
    pick[static_cast<size_t>(v)] = dp.trace(v, digits, budget_of[static_cast<size_t>(v)], prefix, read_budget);
    const MixVertex& x = vertices[static_cast<size_t>(v)];
    for (size_t j = 0; j < x.reads.size(); ++j) budget_of[static_cast<size_t>(x.reads[j].producer)] = read_budget[j];
  }
  mix.choice.resize(n);
  for (size_t v = 0; v < n; ++v) mix.choice[v] = vertices[v].configs[pick[v]];
  if (plan_memory(memory, mix.choice).total() > cap)
    throw std::logic_error("the capped mix DP returned a strategy over the cap");
  return mix;
}

}  // namespace pase
