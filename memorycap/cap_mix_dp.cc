#include "memorycap/cap_mix_dp.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "base/checked_math.h"

namespace pase {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

// The unit grid: a vertex's bytes relative to the reference strategy's
// configuration, in units of `unit_bytes`, rounded up (a saving counts at
// most what it saves); sums run over [-low, high] with index q + low, a
// sum below -low counted as -low (it saves at least that much).
struct Grid {
  int64_t low = 0, high = 0;
  size_t width() const { return static_cast<size_t>(low + high + 1); }
};

// One vertex of the restricted DP. Its table holds, for every assignment of
// D(v) (restricted configurations, the last member fastest) and every q in
// [-low, high], the least cost of v and everything eliminated into it whose
// counted units are at most q: (entry * width + q + low).
struct MixVertex {
  std::vector<int32_t> configs;  // allowed configurations, ascending
  std::vector<int64_t> units;    // counted units against the reference's configuration
  std::vector<uint64_t> stride;  // per member of D(v)
  uint64_t entries = 1;
  std::vector<EdgeRef> edges;
  std::vector<Read> reads;
  std::vector<double> table;
};

class MixDp {
 public:
  MixDp(const Objective& objective, const EliminationPlan& plan, std::vector<MixVertex>& vertices, Grid grid)
      : objective_(objective), plan_(plan), vertices_(vertices), grid_(grid), width_(grid.width()), empty_(width_, kInf) {
    // Nothing eliminated into a vertex: exactly 0 units.
    for (size_t i = static_cast<size_t>(grid.low); i < width_; ++i) empty_[i] = 0.0;
  }

  // Min-plus convolution of two "at most q" vectors; a sum below -low counts as -low.
  uint64_t convolve(const double* a, const double* b, double* out) const {
    for (int64_t q = -grid_.low; q <= grid_.high; ++q) {
      double best = kInf;
      for (int64_t x = -grid_.low; x <= std::min(grid_.high, q + grid_.low); ++x)
        best = std::min(best, a[x + grid_.low] + b[std::min(grid_.high, q - x) + grid_.low]);
      out[q + grid_.low] = best;
    }
    return width_ * width_;
  }

  // The read vectors combined (or the empty vector), for v at configuration i.
  const double* combined(int v, const std::vector<uint64_t>& digits, size_t i, std::vector<std::vector<double>>& prefix,
                         uint64_t& work) const {
    const size_t k = vertices_[static_cast<size_t>(v)].reads.size();
    if (k == 0) return empty_.data();
    if (prefix.size() < k) prefix.resize(k);
    for (size_t j = 1; j < k; ++j) {
      prefix[j].resize(width_);
      work += convolve(j == 1 ? read_row(v, 0, digits, i) : prefix[j - 1].data(), read_row(v, j, digits, i), prefix[j].data());
    }
    return k == 1 ? read_row(v, 0, digits, i) : prefix[k - 1].data();
  }

  // v's cost at allowed configuration i given the digits of D(v), without reads.
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

  uint64_t fill(int v, std::vector<std::vector<double>>& prefix) {
    MixVertex& x = vertices_[static_cast<size_t>(v)];
    const size_t k = plan_.dependent[static_cast<size_t>(v)].size();
    x.table.assign(x.entries * width_, kInf);
    std::vector<uint64_t> digits(k, 0);
    uint64_t work = 0;
    for (uint64_t entry = 0; entry < x.entries; ++entry) {
      double* out = x.table.data() + entry * width_;
      for (size_t i = 0; i < x.configs.size(); ++i) {
        const int64_t u = x.units[i];
        if (u > grid_.high) continue;
        const double cost = local(v, digits, i);
        if (cost == kInf) continue;
        const double* rest = combined(v, digits, i, prefix, work);
        // At most q in all: the rest at most q - u (all of it past `high`).
        for (int64_t q = std::max(-grid_.low, u - grid_.low); q <= grid_.high; ++q) {
          double& slot = out[q + grid_.low];
          slot = std::min(slot, cost + rest[std::min(grid_.high, q - u) + grid_.low]);
        }
        work += width_;
      }
      for (size_t m = k; m-- > 0;) {  // odometer, the last member fastest
        const int w = plan_.dependent[static_cast<size_t>(v)][m];
        if (++digits[m] < vertices_[static_cast<size_t>(w)].configs.size()) break;
        digits[m] = 0;
      }
    }
    return work;
  }

  // Splits `budget` between a prefix and the next row: the row's share.
  int64_t split(const double* prefix, const double* row, int64_t budget) const {
    int64_t take = -grid_.low;
    double best = kInf;
    for (int64_t t = -grid_.low; t <= std::min(grid_.high, budget + grid_.low); ++t) {
      const double value = prefix[std::min(grid_.high, budget - t) + grid_.low] + row[t + grid_.low];
      if (value < best) {
        best = value;
        take = t;
      }
    }
    return take;
  }

  // The allowed configuration and each read's budget for v at the digits of
  // D(v) within `budget` units: the choice its table's entry came from.
  size_t trace(int v, const std::vector<uint64_t>& digits, int64_t budget, std::vector<std::vector<double>>& prefix,
               std::vector<int64_t>& read_budget) const {
    const MixVertex& x = vertices_[static_cast<size_t>(v)];
    uint64_t unused = 0;
    double best = kInf;
    size_t pick = x.configs.size();
    for (size_t i = 0; i < x.configs.size(); ++i) {
      const int64_t u = x.units[i];
      if (u > grid_.high || budget - u < -grid_.low) continue;
      const double value = local(v, digits, i) + combined(v, digits, i, prefix, unused)[std::min(grid_.high, budget - u) + grid_.low];
      if (value < best) {
        best = value;
        pick = i;
      }
    }
    if (pick == x.configs.size() || best == kInf) throw std::logic_error("the capped mix DP lost its strategy while tracing it back");
    const size_t k = x.reads.size();
    read_budget.assign(k, 0);
    if (k == 0) return pick;
    combined(v, digits, pick, prefix, unused);
    int64_t left = std::min(grid_.high, budget - x.units[pick]);
    for (size_t j = k; j-- > 1;) {
      const double* before = j == 1 ? read_row(v, 0, digits, pick) : prefix[j - 1].data();
      read_budget[j] = split(before, read_row(v, j, digits, pick), left);
      left = std::min(grid_.high, left - read_budget[j]);
    }
    read_budget[0] = left;
    return pick;
  }

 private:
  const Objective& objective_;
  const EliminationPlan& plan_;
  std::vector<MixVertex>& vertices_;
  Grid grid_;
  size_t width_;
  std::vector<double> empty_;
};

// Floor and ceiling of a / b for b > 0.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Per vertex, the configurations the strategies give it, and their bytes
// against the vertex's zero: the reference's configuration, or (not
// relative) the least of them. `spread` bounds every partial sum's size.
struct MixChoices {
  std::vector<std::vector<int64_t>> delta;  // per vertex, per configuration: bytes over its zero
  uint64_t spread = 0, zero_bytes = 0;
};

MixChoices collect_choices(const MemoryTables& memory, const std::vector<const std::vector<int32_t>*>& strategies,
                           bool relative, std::vector<MixVertex>& vertices) {
  const std::vector<int32_t>& reference = *strategies[0];
  MixChoices choices;
  choices.delta.resize(vertices.size());
  for (size_t v = 0; v < vertices.size(); ++v) {
    MixVertex& x = vertices[v];
    for (const std::vector<int32_t>* strategy : strategies) x.configs.push_back((*strategy)[v]);
    std::sort(x.configs.begin(), x.configs.end());
    x.configs.erase(std::unique(x.configs.begin(), x.configs.end()), x.configs.end());
    uint64_t zero = memory.bytes(v, static_cast<size_t>(reference[v]));
    if (!relative)
      for (int32_t c : x.configs) zero = std::min(zero, memory.bytes(v, static_cast<size_t>(c)));
    choices.zero_bytes = saturating_add(choices.zero_bytes, zero);
    uint64_t widest = 0;
    for (int32_t c : x.configs) {
      const uint64_t bytes = memory.bytes(v, static_cast<size_t>(c));
      // Plans' bytes were checked to fit 64 bits; a vertex's differ by less than 2^63.
      choices.delta[v].push_back(bytes >= zero ? static_cast<int64_t>(bytes - zero) : -static_cast<int64_t>(zero - bytes));
      widest = std::max(widest, bytes >= zero ? bytes - zero : zero - bytes);
    }
    choices.spread = saturating_add(choices.spread, widest);
  }
  return choices;
}

// Scopes, strides, edges charged at each vertex, and which tables each reads;
// returns the roots (empty dependent sets).
std::vector<int> wire_plan(const Objective& objective, const EliminationPlan& plan, std::vector<MixVertex>& vertices) {
  const size_t n = vertices.size();
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
  return roots;
}

// The grid: the most units (a power of two, at most max_units) whose tables
// and steps fit the budget; a convolution costs width^2 per extra read. 0: none fits.
uint64_t grid_units(const std::vector<MixVertex>& vertices, const CapMixOptions& options) {
  for (uint64_t q = static_cast<uint64_t>(std::max(options.max_units, 1)); q >= 4; q /= 2) {
    uint64_t work = 0, bytes = 0;
    const uint64_t width = q + 1;
    for (const MixVertex& x : vertices) {
      const uint64_t steps = saturating_mul(x.entries, x.configs.size());
      const uint64_t reads = x.reads.size() > 1 ? x.reads.size() - 1 : 0;
      work = saturating_add(work, saturating_mul(steps, saturating_add(width, saturating_mul(reads, width * width))));
      bytes = saturating_add(bytes, saturating_mul(saturating_mul(x.entries, width), sizeof(double)));
    }
    if (work <= options.max_work && bytes <= options.max_bytes) return q;
  }
  return 0;
}

// Back-substitution, latest first: each vertex's budget is given by its
// consumer (or the roots' split), its configuration by its table's entry.
std::vector<int32_t> trace_mix(MixDp& dp, const EliminationPlan& plan, const std::vector<MixVertex>& vertices,
                               const std::vector<int>& roots, const std::vector<std::vector<double>>& root_prefix,
                               std::vector<std::vector<double>>& prefix, const Grid& grid, int64_t budget) {
  const size_t n = vertices.size();
  std::vector<int64_t> budget_of(n, 0);
  int64_t left = budget;
  for (size_t j = roots.size(); j-- > 1;) {
    const int64_t take = dp.split(root_prefix[j - 1].data(), vertices[static_cast<size_t>(roots[j])].table.data(), left);
    budget_of[static_cast<size_t>(roots[j])] = take;
    left = std::min(grid.high, left - take);
  }
  budget_of[static_cast<size_t>(roots[0])] = left;
  std::vector<size_t> pick(n, 0);
  std::vector<int64_t> read_budget;
  for (size_t i = plan.order.size(); i-- > 0;) {
    const int v = plan.order[i];
    const std::vector<int>& scope = plan.dependent[static_cast<size_t>(v)];
    std::vector<uint64_t> digits(scope.size());
    for (size_t m = 0; m < scope.size(); ++m) digits[m] = pick[static_cast<size_t>(scope[m])];
    pick[static_cast<size_t>(v)] = dp.trace(v, digits, budget_of[static_cast<size_t>(v)], prefix, read_budget);
    const MixVertex& x = vertices[static_cast<size_t>(v)];
    for (size_t j = 0; j < x.reads.size(); ++j) budget_of[static_cast<size_t>(x.reads[j].producer)] = read_budget[j];
  }
  std::vector<int32_t> choice(n);
  for (size_t v = 0; v < n; ++v) choice[v] = vertices[v].configs[pick[v]];
  return choice;
}

}  // namespace

CapMix best_mix_under_cap(const Objective& objective, const MemoryTables& memory, const EliminationPlan& plan,
                          const std::vector<const std::vector<int32_t>*>& strategies, uint64_t cap,
                          const CapMixOptions& options) {
  CapMix mix;
  const size_t n = objective.vertex_count();
  if (n == 0 || strategies.empty()) return mix;
  std::vector<MixVertex> vertices(n);
  const MixChoices choices = collect_choices(memory, strategies, options.relative, vertices);
  const std::vector<int> roots = wire_plan(objective, plan, vertices);
  const uint64_t units = grid_units(vertices, options);
  if (units == 0) return mix;
  // Relative: half the units for savings, half for additions; a unit is the
  // spread over half the units, so no sum of true units ever leaves the
  // range. Otherwise all the units for additions over the slack.
  Grid grid;
  uint64_t scale = 0;  // bytes the units cover
  const uint64_t zero_bytes = choices.zero_bytes;
  if (options.relative) {
    grid.low = static_cast<int64_t>(units / 2);
    grid.high = static_cast<int64_t>(units) - grid.low;
    scale = choices.spread;
  } else {
    if (zero_bytes > cap) return mix;
    grid.high = static_cast<int64_t>(units);
    scale = cap - zero_bytes;
  }
  const uint64_t span = static_cast<uint64_t>(options.relative ? grid.low : grid.high);
  const uint64_t unit_bytes = std::max<uint64_t>(1, scale / span + (scale % span != 0));
  mix.units = static_cast<int>(units);
  mix.unit_bytes = unit_bytes;
  if (unit_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return mix;
  const int64_t step = static_cast<int64_t>(unit_bytes);
  for (size_t v = 0; v < n; ++v)
    for (int64_t d : choices.delta[v])  // rounded up: an addition counts at least its bytes, a saving at most
      vertices[v].units.push_back(std::max(-grid.low, ceil_div(d, step)));
  // The room the cap leaves over the zeros, rounded down.
  const int64_t room = cap >= zero_bytes
                           ? static_cast<int64_t>(std::min<uint64_t>(cap - zero_bytes, static_cast<uint64_t>(grid.high) * unit_bytes))
                           : -static_cast<int64_t>(std::min<uint64_t>(zero_bytes - cap, static_cast<uint64_t>(grid.low + 1) * unit_bytes));
  const int64_t budget = std::min(grid.high, floor_div(room, step));
  if (budget < -grid.low) return mix;  // nothing on the grid can fit

  const size_t width = grid.width();
  MixDp dp(objective, plan, vertices, grid);
  std::vector<std::vector<double>> prefix;
  for (int v : plan.order) mix.work += dp.fill(v, prefix);
  // The roots (empty dependent sets) share the budget: combine their tables.
  std::vector<std::vector<double>> root_prefix(roots.size(), std::vector<double>(width));
  for (size_t j = 0; j < roots.size(); ++j) {
    const double* row = vertices[static_cast<size_t>(roots[j])].table.data();
    if (j == 0)
      std::copy(row, row + width, root_prefix[0].begin());
    else
      mix.work += dp.convolve(root_prefix[j - 1].data(), row, root_prefix[j].data());
  }
  if (roots.empty() || root_prefix.back()[static_cast<size_t>(budget + grid.low)] == kInf) return mix;  // no mix fits
  mix.choice = trace_mix(dp, plan, vertices, roots, root_prefix, prefix, grid, budget);
  if (plan_memory(memory, mix.choice).total() > cap)
    throw std::logic_error("the capped mix DP returned a strategy over the cap");
  return mix;
}

}  // namespace pase
