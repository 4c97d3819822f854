#include "dp/dp.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <unordered_map>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "base/check.h"
#include "base/error.h"

namespace pase {
namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return a * b;
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }

// A buffer left uninitialised: every DP table entry is written before it is
// read, and zero-filling fresh tables first cost a pass over memory and page
// faults (visible on small solves).
template <typename T>
class RawBuffer {
 public:
  RawBuffer() = default;
  explicit RawBuffer(size_t size) : data_(size ? new T[size] : nullptr), size_(size) {}
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  [[nodiscard]] size_t size() const { return size_; }

 private:
  std::unique_ptr<T[]> data_;
  size_t size_ = 0;
};

// Argmins in the narrowest unsigned type that holds the vertex's configuration count.
class ArgminTable {
 public:
  static int width_for(size_t configs) { return configs <= 256 ? 1 : configs <= 65536 ? 2 : 4; }

  ArgminTable() = default;
  ArgminTable(size_t entries, size_t configs) : width_(width_for(configs)), bytes_(entries * static_cast<size_t>(width_)) {}

  void set(size_t i, uint32_t value) {
    uint8_t* p = bytes_.data() + i * static_cast<size_t>(width_);
    for (int b = 0; b < width_; ++b) p[b] = static_cast<uint8_t>(value >> (8 * b));
  }
  [[nodiscard]] uint32_t get(size_t i) const {
    const uint8_t* p = bytes_.data() + i * static_cast<size_t>(width_);
    uint32_t value = 0;
    for (int b = 0; b < width_; ++b) value |= static_cast<uint32_t>(p[b]) << (8 * b);
    return value;
  }
  [[nodiscard]] size_t bytes() const { return bytes_.size(); }

 private:
  int width_ = 1;
  RawBuffer<uint8_t> bytes_;
};

// A finished table waiting for the vertex that consumes it.
struct Message {
  RawBuffer<double> cost;
  int producer_position = 0;     // where the producing vertex sits in the order
  std::vector<int> scope;        // D(w), latest first; the consumer is last (stride 1)
  std::vector<uint64_t> stride;  // mixed-radix strides of `scope`
};

// A factor of v's table that depends on one member w of D(v) through the
// class of w's configuration: rows[class * Cv + s] over v's configurations.
struct EdgeRows {
  int scope_index = 0;
  const SharedArray<int32_t>* w_class = nullptr;
  std::vector<double> rows;
};

// A table of an earlier vertex that v consumes: its offset for an assignment
// of D(v), then Cv contiguous entries (v is its fastest digit).
struct MessageRead {
  const double* cost = nullptr;
  std::vector<std::pair<int, uint64_t>> terms;  // (index in D(v), stride in the message)
};

// How one vertex's table is computed. A member of D(v) that no message reads
// enters only through edge costs, so the table depends on it only through the
// classes of its configuration: those members get a "virtual" digit per
// distinct class combination, the table is computed over that smaller space,
// then expanded.
struct TableJob {
  size_t configs = 0;
  const double* own = nullptr;
  std::vector<uint64_t> radix;                 // virtual radix per member of D(v)
  std::vector<uint64_t> stride;                // virtual strides, last member fastest
  uint64_t entries = 1;                        // virtual entries
  std::vector<std::vector<int32_t>> virtual_of;  // per member: config -> virtual digit (empty: identity)
  struct Edge {
    int scope_index;
    std::vector<const double*> row;            // virtual digit -> row over v's configurations
  };
  std::vector<Edge> edges;
  std::vector<const MessageRead*> reads;
};

// Numbers the distinct combinations of classes that w's configurations take
// on v's edges to w (`mine`), in order of first appearance: map[c] is the
// number of configuration c's combination. Returns a configuration of each
// combination. A combination is packed into one integer (mixed radix over the
// edges' class counts); a dense lookup serves when that space is small.
std::vector<size_t> number_class_combinations(const std::vector<const EdgeRows*>& mine, size_t configs,
                                              size_t w_configs, std::vector<int32_t>& map) {
  uint64_t key_space = 1;
  for (const EdgeRows* edge : mine) key_space = saturating_mul(key_space, edge->rows.size() / configs);
  map.resize(w_configs);
  std::vector<size_t> representative;
  std::vector<int32_t> dense(key_space <= 4 * w_configs ? key_space : 0, -1);
  std::unordered_map<uint64_t, int32_t> sparse;
  std::map<std::vector<int32_t>, int32_t> by_tuple;  // only if packed keys would overflow
  std::vector<int32_t> tuple(mine.size());
  for (size_t c = 0; c < w_configs; ++c) {
    uint64_t key = 0;
    for (size_t j = 0; j < mine.size(); ++j) {
      tuple[j] = (*mine[j]->w_class)[c];
      key = key * (mine[j]->rows.size() / configs) + static_cast<uint64_t>(tuple[j]);
    }
    int32_t next = static_cast<int32_t>(representative.size());
    int32_t& slot = key_space == kSaturated ? by_tuple.try_emplace(tuple, -1).first->second
                    : dense.empty()         ? sparse.try_emplace(key, -1).first->second
                                            : dense[key];
    if (slot < 0) {
      slot = next;
      representative.push_back(c);
    }
    map[c] = slot;
  }
  return representative;
}

// Plans v's table: which members of D(v) get a class digit, the virtual
// radices and strides, and each edge's row per virtual digit.
TableJob plan_job(const Objective& objective, const std::vector<int>& scope, size_t configs, const double* own,
                  const std::vector<EdgeRows>& edges, const std::vector<MessageRead>& reads) {
  TableJob job;
  job.configs = configs;
  job.own = own;
  const size_t k = scope.size();
  std::vector<char> read_by_message(k, 0);
  for (const MessageRead& read : reads) {
    job.reads.push_back(&read);
    for (const auto& term : read.terms) read_by_message[term.first] = 1;
  }
  job.radix.resize(k);
  job.virtual_of.resize(k);
  std::vector<std::vector<size_t>> representative(k);  // virtual digit -> a configuration of w
  for (size_t i = 0; i < k; ++i) {
    size_t w_configs = objective.config_count(scope[i]);
    if (read_by_message[i]) {
      job.radix[i] = w_configs;
      continue;
    }
    std::vector<const EdgeRows*> mine;
    for (const EdgeRows& edge : edges)
      if (static_cast<size_t>(edge.scope_index) == i) mine.push_back(&edge);
    representative[i] = number_class_combinations(mine, configs, w_configs, job.virtual_of[i]);
    job.radix[i] = representative[i].size();
  }
  job.stride.assign(k, 1);
  for (size_t i = k; i-- > 0;) {
    job.stride[i] = job.entries;
    job.entries *= job.radix[i];
  }
  for (const EdgeRows& edge : edges) {
    TableJob::Edge e;
    e.scope_index = edge.scope_index;
    size_t i = static_cast<size_t>(edge.scope_index);
    for (uint64_t digit = 0; digit < job.radix[i]; ++digit) {
      size_t config = job.virtual_of[i].empty() ? digit : representative[i][digit];
      e.row.push_back(edge.rows.data() + static_cast<size_t>((*edge.w_class)[config]) * configs);
    }
    job.edges.push_back(std::move(e));
  }
  return job;
}

template <typename Value>
inline std::pair<double, size_t> first_minimum_scan(size_t n, Value value) {
  double best = std::numeric_limits<double>::infinity();
  size_t at = 0;
  for (size_t s = 0; s < n; ++s) {
    const double v = value(s);
    if (v < best) {
      best = v;
      at = s;
    }
  }
  return {best, at};
}

// Below this many configurations the plain scan wins (measured on the zoo).
constexpr size_t kShortRow = 64;

// The first s < n minimising value(s), and the minimum. Four independent
// running minima (with their positions) break the compare-and-branch chain of
// a plain scan, about twice as fast on the DP's rows; merging them by value,
// then by position, keeps "ties go to the first configuration" exact.
template <typename Value>
inline std::pair<double, size_t> first_minimum(size_t n, Value value) {
  constexpr size_t kLanes = 4;
  if (n < kShortRow) return first_minimum_scan(n, value);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double lane_best[kLanes] = {kInf, kInf, kInf, kInf};
  size_t lane_at[kLanes] = {0, 0, 0, 0};
  size_t s = 0;
  for (; s + kLanes <= n; s += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const double v = value(s + l);
      const bool better = v < lane_best[l];
      lane_best[l] = better ? v : lane_best[l];
      lane_at[l] = better ? s + l : lane_at[l];
    }
  }
  double best = kInf;
  size_t at = n;
  for (size_t l = 0; l < kLanes; ++l) {
    if (lane_best[l] < best || (lane_best[l] == best && lane_at[l] < at)) {
      best = lane_best[l];
      at = lane_at[l];
    }
  }
  for (; s < n; ++s) {
    const double v = value(s);
    if (v < best) {
      best = v;
      at = s;
    }
  }
  if (at >= n) at = 0;  // nothing finite: keep the first
  return {best, at};
}

// min over s of base[s] + sum of rows[j][s], and the first s reaching it.
// Up to two rows are added on the fly; more are summed into `scratch` first,
// in the same order, so every sum is the same double either way.
std::pair<double, size_t> min_of_sum(const double* base, const double* const* rows, size_t row_count, double* scratch,
                                     size_t n) {
  if (row_count == 0) return first_minimum(n, [base](size_t s) { return base[s]; });
  const double* a = rows[0];
  if (row_count == 1) return first_minimum(n, [base, a](size_t s) { return base[s] + a[s]; });
  const double* b = rows[1];
  if (row_count == 2) return first_minimum(n, [base, a, b](size_t s) { return base[s] + a[s] + b[s]; });
#pragma omp simd
  for (size_t s = 0; s < n; ++s) scratch[s] = base[s] + a[s];
  for (size_t j = 1; j < row_count; ++j) {
    const double* row = rows[j];
#pragma omp simd
    for (size_t s = 0; s < n; ++s) scratch[s] += row[s];
  }
  return first_minimum(n, [scratch](size_t s) { return scratch[s]; });
}

constexpr uint64_t kGrainSteps = uint64_t{1} << 16;

// A thread's buffers for filling tables, sized once for the largest vertex
// (most configurations, members of D(v), factors) so they never grow.
struct FillScratch {
  FillScratch(size_t configs, size_t members, size_t factors)
      : base(configs), acc(configs), digit(members), inner_offset(factors) {
    rows.reserve(factors);
  }
  // What one costs: counted in the peak, and per thread in the plan's bound.
  static uint64_t bytes(size_t configs, size_t members, size_t factors) {
    return 2 * configs * sizeof(double) + members * sizeof(uint64_t) + factors * (sizeof(uint64_t) + sizeof(const double*));
  }

  std::vector<double> base, acc;
  std::vector<uint64_t> digit, inner_offset;
  std::vector<const double*> rows;
};

// Fills cost/argmin over a job's (virtual) entries. The last member of D(v)
// changes fastest; the factors that do not read it are summed once per run
// into `base`, and the sweep over the fast digit adds only the others. The
// work is cut into items: a chunk of one run of the fast digit.
class TableFill {
 public:
  TableFill(const TableJob& job, double* out_cost, uint32_t* out_arg)
      : job_(job), out_cost_(out_cost), out_arg_(out_arg), k_(job.radix.size()), fast_(k_ ? k_ - 1 : 0),
        run_(k_ ? job.radix[fast_] : 1) {
    sort_factors();
    const size_t configs = job_.configs;
    const uint64_t inner_factors = 1 + inner_edges_.size() + inner_reads_.size();
    chunk_ = std::max<uint64_t>(1, std::min<uint64_t>(run_, (uint64_t{1} << 16) / (configs * inner_factors)));
    chunks_per_run_ = (run_ + chunk_ - 1) / chunk_;
    items_ = job_.entries / run_ * chunks_per_run_;
    // Items of at least kGrainSteps inner steps: small tables are filled on
    // one thread, and large ones are not cut finer than scheduling pays for.
    grain_ = std::max<uint64_t>(1, kGrainSteps / (chunk_ * configs * inner_factors));
  }

  [[nodiscard]] uint64_t items() const { return items_; }
  [[nodiscard]] uint64_t grain() const { return grain_; }

  // Fills the items of `range` (on the calling thread, with its scratch).
  void fill(const tbb::blocked_range<uint64_t>& range, FillScratch& scratch) const {
    for (uint64_t item = range.begin(); item != range.end(); ++item) {
      const uint64_t outer = item / chunks_per_run_;
      const uint64_t first = (item % chunks_per_run_) * chunk_, last = std::min(run_, first + chunk_);
      start_run(outer, scratch);
      sweep_fast_digit(outer, first, last, scratch);
    }
  }

 private:
  // Splits edges and waiting tables by whether they read the fast digit.
  void sort_factors() {
    for (const TableJob::Edge& edge : job_.edges)
      (k_ && static_cast<size_t>(edge.scope_index) == fast_ ? inner_edges_ : outer_edges_).push_back(&edge);
    for (const MessageRead* read : job_.reads) {
      uint64_t fast_stride = 0;
      for (const auto& [index, message_stride] : read->terms)
        if (k_ && static_cast<size_t>(index) == fast_) fast_stride = message_stride;
      (fast_stride ? inner_reads_ : outer_reads_).emplace_back(read, fast_stride);
    }
  }

  // Digits of run `outer`; base = own cost + the factors constant over the
  // run; the offsets of the waiting tables that the sweep reads.
  void start_run(uint64_t outer, FillScratch& scratch) const {
    const size_t configs = job_.configs;
    std::vector<uint64_t>& digit = scratch.digit;
    std::vector<double>& base = scratch.base;
    uint64_t rest = outer * run_;
    for (size_t i = 0; i < k_; ++i) {
      digit[i] = rest / job_.stride[i];
      rest %= job_.stride[i];
    }
    std::copy(job_.own, job_.own + configs, base.begin());
    for (const TableJob::Edge* edge : outer_edges_) {
      const double* row = edge->row[digit[edge->scope_index]];
      for (size_t s = 0; s < configs; ++s) base[s] += row[s];
    }
    for (const auto& [read, unused] : outer_reads_) {
      uint64_t offset = 0;
      for (const auto& [index, message_stride] : read->terms) offset += digit[index] * message_stride;
      const double* row = read->cost + offset;
      for (size_t s = 0; s < configs; ++s) base[s] += row[s];
    }
    for (size_t m = 0; m < inner_reads_.size(); ++m) {
      scratch.inner_offset[m] = 0;
      for (const auto& [index, message_stride] : inner_reads_[m].first->terms)
        if (static_cast<size_t>(index) != fast_) scratch.inner_offset[m] += digit[index] * message_stride;
    }
  }

  // The entries first..last of run `outer`: each the minimum over v's
  // configurations of base plus the rows that read the fast digit.
  void sweep_fast_digit(uint64_t outer, uint64_t first, uint64_t last, FillScratch& scratch) const {
    const size_t configs = job_.configs;
    const double* base = scratch.base.data();
    double* acc = scratch.acc.data();
    double* out_cost = out_cost_ + outer * run_;
    uint32_t* out_arg = out_arg_ + outer * run_;
    std::vector<const double*>& rows = scratch.rows;
    for (uint64_t d = first; d < last; ++d) {
      rows.clear();
      for (const TableJob::Edge* edge : inner_edges_) rows.push_back(edge->row[d]);
      for (size_t m = 0; m < inner_reads_.size(); ++m)
        rows.push_back(inner_reads_[m].first->cost + scratch.inner_offset[m] + d * inner_reads_[m].second);
      auto [best_cost, best] = min_of_sum(base, rows.data(), rows.size(), acc, configs);
      out_cost[d] = best_cost;
      out_arg[d] = static_cast<uint32_t>(best);
    }
  }

  const TableJob& job_;
  double* out_cost_;
  uint32_t* out_arg_;
  size_t k_, fast_;
  uint64_t run_;
  std::vector<const TableJob::Edge*> outer_edges_, inner_edges_;
  std::vector<std::pair<const MessageRead*, uint64_t>> outer_reads_, inner_reads_;  // (read, stride of the fast digit)
  uint64_t chunk_ = 1, chunks_per_run_ = 1, items_ = 0, grain_ = 1;
};

std::vector<uint64_t> strides_of(const std::vector<int>& scope, const Objective& objective) {
  std::vector<uint64_t> stride(scope.size());
  uint64_t s = 1;
  for (size_t i = scope.size(); i-- > 0;) {
    stride[i] = s;
    s *= objective.config_count(scope[i]);
  }
  return stride;
}

std::string describe_scope(const std::vector<int>& scope, const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < scope.size() && i < 6; ++i) text += (i ? ", " : "") + names[scope[i]];
  if (scope.size() > 6) text += ", ...";
  return text;
}

// For each pair, the first earlier pair it repeats (same ends, same matrix,
// same classes), or -1. A node that lists one tensor many times has one such
// pair per listing; the DP folds repeats into one factor, so 100,000 listings
// cost 100,000 row additions rather than 100,000 rows held at once.
std::vector<int> repeated_pairs(const Objective& objective) {
  std::vector<int> repeat_of(objective.pairs.size(), -1);
  std::map<std::tuple<int, int, const void*>, std::vector<int>> firsts;
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    const PairCost& pair = objective.pairs[e];
    std::vector<int>& same_ends = firsts[{pair.u, pair.v, pair.cost.get()}];
    for (int first : same_ends) {
      const PairCost& other = objective.pairs[static_cast<size_t>(first)];
      if (other.u_class == pair.u_class && other.v_class == pair.v_class) {
        repeat_of[e] = first;
        break;
      }
    }
    if (repeat_of[e] < 0) same_ends.push_back(static_cast<int>(e));
  }
  return repeat_of;
}

// The largest vertex's needs, which every thread's FillScratch is sized for:
// configurations, members of D(v), and factors (edges to later vertices plus
// tables waiting) that a sweep may add.
struct FillShape {
  size_t configs = 0, members = 0, factors = 0;
};

FillShape fill_shape(const Objective& objective, const EliminationPlan& plan) {
  const size_t n = objective.vertex_count();
  std::vector<size_t> factors(n, 0);
  const std::vector<int> repeat_of = repeated_pairs(objective);
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    const PairCost& pair = objective.pairs[e];
    if (repeat_of[e] < 0) ++factors[plan.position[pair.u] < plan.position[pair.v] ? pair.u : pair.v];
  }
  for (int v : plan.order)
    if (!plan.dependent[v].empty()) ++factors[plan.dependent[v].back()];
  FillShape shape;
  for (size_t v = 0; v < n; ++v) {
    shape.configs = std::max(shape.configs, objective.config_count(v));
    shape.members = std::max(shape.members, plan.dependent[v].size());
    shape.factors = std::max(shape.factors, factors[v]);
  }
  return shape;
}

// Bytes of the buffers v's table is computed with, besides the tables: its
// edge rows, the class digit of each member of D(v) no waiting table reads,
// each edge's row per digit of its other end, and the compact costs (if
// compacted) and argmins. Counted in the peak while v is filled.
uint64_t working_bytes(const std::vector<EdgeRows>& edges, const TableJob& job, bool compacted) {
  uint64_t bytes = job.entries * (sizeof(uint32_t) + (compacted ? sizeof(double) : 0));
  for (const EdgeRows& edge : edges) bytes += edge.rows.size() * sizeof(double);
  for (const std::vector<int32_t>& map : job.virtual_of) bytes += map.size() * sizeof(int32_t);
  for (const TableJob::Edge& edge : job.edges) bytes += edge.row.size() * sizeof(const double*);
  return bytes;
}

// An upper bound of working_bytes for every vertex, from the plan alone:
// class combinations are counted as configurations, and the compact table as
// big as the full one.
std::vector<uint64_t> working_bytes_bound(const Objective& objective, const EliminationPlan& plan,
                                          const std::vector<uint64_t>& entries) {
  const size_t n = objective.vertex_count();
  std::vector<uint64_t> bytes(n, 0);
  const std::vector<int> repeat_of = repeated_pairs(objective);  // folded into the pair they repeat
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    if (repeat_of[e] >= 0) continue;
    const PairCost& pair = objective.pairs[e];
    const bool u_first = plan.position[pair.u] < plan.position[pair.v];
    const int first = u_first ? pair.u : pair.v, later = u_first ? pair.v : pair.u;
    const uint64_t later_classes = static_cast<uint64_t>(u_first ? pair.v_classes : pair.u_classes);
    const uint64_t rows = saturating_mul(later_classes, objective.config_count(first) * sizeof(double));
    bytes[first] = saturating_add(bytes[first], saturating_add(rows, objective.config_count(later) * sizeof(const double*)));
  }
  std::vector<std::vector<int>> read(n);  // members of D(v) some waiting table reads
  for (int u : plan.order) {
    const std::vector<int>& scope = plan.dependent[u];
    if (!scope.empty()) read[scope.back()].insert(read[scope.back()].end(), scope.begin(), scope.end() - 1);
  }
  for (int v : plan.order) {
    bool by_class = false;
    for (int w : plan.dependent[v]) {
      if (std::find(read[v].begin(), read[v].end(), w) != read[v].end()) continue;
      by_class = true;
      bytes[v] = saturating_add(bytes[v], objective.config_count(w) * sizeof(int32_t));
    }
    const uint64_t per_entry = sizeof(uint32_t) + (by_class ? sizeof(double) : 0);
    bytes[v] = saturating_add(bytes[v], saturating_mul(entries[v], per_entry));
  }
  return bytes;
}

// An edge's classes index its cost matrix: one class per configuration of
// each end, each below that end's class count.
void check_classes(const Objective& objective, const PairCost& pair) {
  auto check_end = [&](int vertex, const SharedArray<int32_t>& classes, int32_t count) {
    PASE_ASSERT(classes.size() == objective.config_count(vertex), vertex, classes.size(), objective.config_count(vertex));
    if (classes.empty()) return;
    auto [low, high] = std::minmax_element(classes.begin(), classes.end());
    PASE_ASSERT(*low >= 0 && *high < count, vertex, *low, *high, count);
  };
  check_end(pair.u, pair.u_class, pair.u_classes);
  check_end(pair.v, pair.v_class, pair.v_classes);
  PASE_ASSERT(pair.cost && pair.cost->size() == static_cast<size_t>(pair.u_classes) * static_cast<size_t>(pair.v_classes),
              pair.u, pair.v, pair.u_classes, pair.v_classes, pair.cost ? pair.cost->size() : 0);
}

// The position of `w` in the dependent set `scope` (a member by construction).
int scope_index(const std::vector<int>& scope, int w, int v) {
  const size_t index = static_cast<size_t>(std::find(scope.begin(), scope.end(), w) - scope.begin());
  PASE_ASSERT(index < scope.size(), v, w, scope.size());
  return static_cast<int>(index);
}

// Refuses a plan whose tables or work exceed the options' limits.
void check_limits(const EliminationPlan& plan, const TablePlan& sizes, const std::vector<std::string>& names,
                  const DpOptions& options) {
  auto text = [](uint64_t x) { return x == kSaturated ? std::string("more than 2^64") : std::to_string(x); };
  auto largest = [&] {
    int v = sizes.largest_vertex;
    return "'" + names[v] + "' with " + text(sizes.entries[v]) + " entries over its dependent set of " +
           std::to_string(plan.dependent[v].size()) + " (" + describe_scope(plan.dependent[v], names) + ")";
  };
  if (sizes.total_bytes > options.max_table_bytes)
    throw LimitError({"max_table_bytes", "the table byte limit",
                      "the DP tables would need " + text(sizes.total_bytes) + " bytes (" + text(sizes.working_bytes) +
                          " of them working buffers), above the limit of " + std::to_string(options.max_table_bytes) + " (",
                      "); the largest is vertex " + largest()});
  if (sizes.total_work > options.max_work)
    throw LimitError({"max_work", "the work limit",
                      "the DP would take " + text(sizes.total_work) +
                          " steps (table entries x configurations), above the limit of " + std::to_string(options.max_work) + " (",
                      "; about 10^9 steps per second per core); the largest table is vertex " + largest()});
}

// Writes v's full table from the compact one the fill produced: each
// assignment of D(v) takes the entry of its class combination, and the
// argmins go into their narrow table.
class TableExpansion {
 public:
  // `compacted` false: the fill wrote the costs in place, only argmins move.
  TableExpansion(const Objective& objective, const std::vector<int>& scope, const std::vector<uint64_t>& stride,
                 const TableJob& job, bool compacted, const double* compact_cost, const uint32_t* compact_arg,
                 double* out_cost, ArgminTable& out_argmin)
      : objective_(objective), scope_(scope), stride_(stride), job_(job), compacted_(compacted),
        compact_cost_(compact_cost), compact_arg_(compact_arg), out_cost_(out_cost), out_argmin_(out_argmin) {}

  void operator()(const tbb::blocked_range<uint64_t>& range) const {
    if (!compacted_) {
      for (uint64_t alpha = range.begin(); alpha != range.end(); ++alpha) out_argmin_.set(alpha, compact_arg_[alpha]);
      return;
    }
    std::vector<uint64_t> digit(scope_.size());
    uint64_t rest = range.begin();
    for (size_t i = 0; i < scope_.size(); ++i) {
      digit[i] = rest / stride_[i];
      rest %= stride_[i];
    }
    for (uint64_t alpha = range.begin(); alpha != range.end(); ++alpha) {
      uint64_t compact = 0;
      for (size_t i = 0; i < scope_.size(); ++i)
        compact += (job_.virtual_of[i].empty() ? digit[i] : static_cast<uint64_t>(job_.virtual_of[i][digit[i]])) * job_.stride[i];
      out_cost_[alpha] = compact_cost_[compact];
      out_argmin_.set(alpha, compact_arg_[compact]);
      for (size_t i = scope_.size(); i-- > 0;) {  // odometer, last digit fastest
        if (++digit[i] < objective_.config_count(scope_[i])) break;
        digit[i] = 0;
      }
    }
  }

 private:
  const Objective& objective_;
  const std::vector<int>& scope_;
  const std::vector<uint64_t>& stride_;
  const TableJob& job_;
  bool compacted_;
  const double* compact_cost_;
  const uint32_t* compact_arg_;
  double* out_cost_;
  ArgminTable& out_argmin_;
};

// One run of the DP over a plan. Each vertex's table is built from its own
// costs, its edges to later vertices and the tables waiting for it, then
// sent to the vertex that consumes it; back-substitution reads the argmins.
class DynamicProgram {
 public:
  DynamicProgram(const Objective& objective, const EliminationPlan& plan, const TablePlan& sizes,
                 std::function<void(const DpProgress&)> progress, const std::vector<int>& same_as, size_t kept = 0)
      : objective_(objective), plan_(plan), sizes_(sizes), n_(objective.vertex_count()), serial_(sizes.threads == 1),
        shape_(fill_shape(objective, plan)), argmins_(n_), incident_(n_), repeats_(objective.pairs.size()), inbox_(n_),
        inbox_mutex_(new std::mutex[n_]), pending_(n_, 0), component_cost_(n_, 0.0),
        progress_callback_(std::move(progress)), same_as_(same_as), followers_(n_), argmin_owner_(n_), retained_(n_),
        readers_left_(n_, 0), kept_(n_, 0) {
    PASE_ASSERT(kept <= n_ && (kept == 0 || same_as_.empty()), kept, n_, same_as_.size());
    for (size_t i = n_ - kept; i < n_; ++i) kept_[static_cast<size_t>(plan_.order[i])] = 1;
    const std::vector<int> repeat_of = repeated_pairs(objective_);
    for (size_t e = 0; e < objective_.pairs.size(); ++e) {
      if (repeat_of[e] >= 0) {
        repeats_[static_cast<size_t>(repeat_of[e])].push_back(static_cast<int>(e));
        continue;
      }
      incident_[objective_.pairs[e].u].push_back(static_cast<int>(e));
      incident_[objective_.pairs[e].v].push_back(static_cast<int>(e));
    }
    for (int v : plan_.order)
      if (!plan_.dependent[v].empty()) ++pending_[plan_.dependent[v].back()];
    for (size_t v = 0; v < n_; ++v) argmin_owner_[v] = static_cast<int>(v);
    for (int v : plan_.order)  // in order: a template's own owner is known first
      if (follows(v)) {
        const int model = same_as_[static_cast<size_t>(v)];
        // A template precedes its followers and follows nothing: it is computed
        // before any follower waits for it, and its table is its own.
        PASE_ASSERT(model >= 0 && static_cast<size_t>(model) < n_ && plan_.position[model] < plan_.position[v] &&
                        same_as_[static_cast<size_t>(model)] < 0 &&
                        sizes_.entries[v] == sizes_.entries[model] &&
                        objective_.config_count(v) == objective_.config_count(model) &&
                        plan_.dependent[v].size() == plan_.dependent[model].size(),
                    v, model);
        followers_[model].push_back(v);
        ++pending_[v];  // waits for its template too
        argmin_owner_[v] = argmin_owner_[model];
        if (reads_copy(v)) ++readers_left_[model];
      }
    progress_.tables = n_;
    progress_.work = sizes_.total_work;
    // On one thread the DP does not touch TBB at all: starting its scheduler
    // costs about 2 ms, as much as a whole small solve.
    if (!serial_) {
      arena_.emplace(sizes.threads);
      group_.emplace();
      thread_scratch_.emplace([this] { return new_scratch(); });
    }
  }

  // Fills every table; returns the optimum and the strategy.
  DpResult run() {
    fill_all_tables();
    check_all_consumed();
    DpResult result;
    for (int v : plan_.order) result.cost += component_cost_[v];  // in plan order: deterministic
    result.choice = std::vector<int32_t>(n_, 0);
    read_back_strategy(result.choice);
    result.stats = stats();
    return result;
  }

  // Fills every table but the kept vertices'; returns the table the kept
  // vertices are left with, over their configurations (the first kept in
  // plan order slowest): their own costs, the edges among them and every
  // table waiting for them, summed in plan order, plus the optimum of any
  // component without a kept vertex.
  std::vector<double> run_keeping(const std::vector<int>& kept) {
    fill_all_tables();
    check_all_consumed();
    double constant = 0;
    for (int v : plan_.order) constant += component_cost_[v];
    std::vector<uint64_t> stride = strides_of(kept, objective_);
    uint64_t entries = 1;
    for (int w : kept) entries *= objective_.config_count(w);
    std::vector<double> table(entries, constant);
    std::vector<int32_t> choice(n_, 0);
    std::vector<const Message*> waiting;
    for (int w : kept)
      for (const auto& message : inbox_[w]) waiting.push_back(message.get());
    std::sort(waiting.begin(), waiting.end(),
              [](const Message* a, const Message* b) { return a->producer_position < b->producer_position; });
    std::vector<int> kept_pairs;
    for (size_t e = 0; e < objective_.pairs.size(); ++e)
      if (kept_[static_cast<size_t>(objective_.pairs[e].u)] && kept_[static_cast<size_t>(objective_.pairs[e].v)])
        kept_pairs.push_back(static_cast<int>(e));
    for (uint64_t index = 0; index < entries; ++index) {
      for (size_t i = 0; i < kept.size(); ++i)
        choice[static_cast<size_t>(kept[i])] = static_cast<int32_t>(index / stride[i] % objective_.config_count(kept[i]));
      double sum = table[index];
      for (int w : kept) sum += objective_.vertex_cost[w][choice[w]];
      for (int e : kept_pairs) {
        const PairCost& pair = objective_.pairs[static_cast<size_t>(e)];
        sum += pair.at(choice[pair.u], choice[pair.v]);
      }
      for (const Message* message : waiting) {
        uint64_t at = 0;
        for (size_t i = 0; i < message->scope.size(); ++i)
          at += static_cast<uint64_t>(choice[message->scope[i]]) * message->stride[i];
        sum += message->cost[at];
      }
      table[index] = sum;
    }
    return table;
  }

  [[nodiscard]] DpStats stats() const {
    DpStats stats;
    stats.peak_table_bytes = peak_bytes_.load();
    for (int v : plan_.order) {
      stats.max_dependent_set = std::max(stats.max_dependent_set, plan_.dependent[v].size());
      stats.table_entries += sizes_.entries[v];
    }
    return stats;
  }

  // The argmin tables, for back-substitution after the DP is gone.
  std::vector<ArgminTable> take_argmins() { return std::move(argmins_); }

 private:
  // A vertex can be processed once every table waiting for it has arrived;
  // vertices whose tables do not depend on each other run concurrently.
  void fill_all_tables() {
    // The vertices that wait for no table, listed before any task starts:
    // once tasks run, they count `pending_` down, and a consumer that reached
    // zero is started by its last producer. Reading `pending_` while spawning
    // raced with that and could start such a consumer twice, the second time
    // without its inbox, which wrote wrong argmins (found by the thread-count
    // determinism test failing about one run in ten).
    std::vector<int> leaves;
    for (int v : plan_.order)
      if (pending_[v] == 0 && !kept_[static_cast<size_t>(v)]) leaves.push_back(v);
    if (serial_) {
      // Depth first, as a one-thread task pool would go: a consumer runs as
      // soon as its last table arrives, so few tables wait at once.
      for (int leaf : leaves) {
        serial_ready_.push_back(leaf);
        while (!serial_ready_.empty()) {
          int v = serial_ready_.back();
          serial_ready_.pop_back();
          while (v >= 0) v = process(v);
        }
      }
      return;
    }
    arena_->execute([&] {
      for (int v : leaves) group_->run([this, v] { process(v); });
      group_->wait();
    });
  }

  void report_progress(int v) {
    if (!progress_callback_) return;
    std::lock_guard<std::mutex> lock(progress_mutex_);
    ++progress_.tables_done;
    progress_.work_done += sizes_.entries[v] * objective_.config_count(v);
    progress_callback_(progress_);
  }

  // Every table was consumed: no vertex still waits, no table is left unread.
  void check_all_consumed() const {
    for (int v : plan_.order)
      if (!kept_[static_cast<size_t>(v)]) PASE_ASSERT(pending_[v] == 0 && inbox_[v].empty(), v, pending_[v], inbox_[v].size());
  }

  // Builds v's table and sends it on. Returns the consumer it completed, if
  // any, for the serial driver to run next (in parallel it is started as a
  // task instead).
  int process(int v) {
    std::unique_ptr<Message> table;
    if (follows(v)) {
      table = copied_table(v);
      release_inbox(v);
    } else {
      std::vector<EdgeRows> edges = edge_rows(v);
      std::vector<MessageRead> reads = waiting_reads(v);
      table = new_table(v);
      compute_table(v, edges, reads, *table);
      release_inbox(v);
      if (readers_left_[v] > 0) retain(v, *table);
    }
    report_progress(v);
    int next = send(v, std::move(table));
    for (int follower : followers_[v]) release(follower);
    return next;
  }

  [[nodiscard]] bool follows(int v) const { return !same_as_.empty() && same_as_[static_cast<size_t>(v)] >= 0; }

  // Whether a follower's table is read: by its consumer unless that follows
  // too (a follower reads no messages), or as a component's cost.
  [[nodiscard]] bool reads_copy(int v) const {
    const std::vector<int>& scope = plan_.dependent[v];
    return scope.empty() || !follows(scope.back());
  }

  // A template keeps a copy of its table for the followers that send theirs on.
  void retain(int v, const Message& table) {
    retained_[v] = std::make_unique<RawBuffer<double>>(table.cost.size());
    std::copy(table.cost.data(), table.cost.data() + table.cost.size(), retained_[v]->data());
    add_live(table.cost.size() * sizeof(double));
  }

  // A follower's table: its template's entries (the template is done: the
  // follower waited for it), or none when nobody reads them.
  std::unique_ptr<Message> copied_table(int v) {
    const int model = same_as_[static_cast<size_t>(v)];
    auto table = std::make_unique<Message>();
    table->scope = plan_.dependent[v];
    table->stride = strides_of(table->scope, objective_);
    table->producer_position = plan_.position[v];
    if (!reads_copy(v)) return table;
    const RawBuffer<double>& source = *retained_[model];
    table->cost = RawBuffer<double>(source.size());
    std::copy(source.data(), source.data() + source.size(), table->cost.data());
    add_live(source.size() * sizeof(double));
    std::lock_guard<std::mutex> lock(inbox_mutex_[model]);
    if (--readers_left_[model] == 0) {
      live_bytes_.fetch_sub(source.size() * sizeof(double));
      retained_[model].reset();
    }
    return table;
  }

  // A follower's template is done: one less thing to wait for.
  void release(int follower) {
    bool ready = false;
    {
      std::lock_guard<std::mutex> lock(inbox_mutex_[follower]);
      PASE_ASSERT(pending_[follower] > 0, follower, pending_[follower]);
      ready = --pending_[follower] == 0;
    }
    if (!ready) return;
    if (serial_) serial_ready_.push_back(follower);
    else group_->run([this, follower] { process(follower); });
  }

  // v's edges to vertices not yet processed, each as rows over v's
  // configurations, one row per class of the other end's configuration.
  std::vector<EdgeRows> edge_rows(int v) const {
    const std::vector<int>& scope = plan_.dependent[v];
    const size_t configs = objective_.config_count(v);
    std::vector<EdgeRows> edges;
    for (int e : incident_[v]) {
      const PairCost& pair = objective_.pairs[e];
      int w = pair.u == v ? pair.v : pair.u;
      if (plan_.position[w] < plan_.position[v]) continue;  // already counted when w was processed
      check_classes(objective_, pair);
      EdgeRows rows;
      rows.scope_index = scope_index(scope, w, v);
      bool v_produces = pair.u == v;
      rows.w_class = v_produces ? &pair.v_class : &pair.u_class;
      int32_t w_classes = v_produces ? pair.v_classes : pair.u_classes;
      rows.rows.resize(static_cast<size_t>(w_classes) * configs);
      const std::vector<double>& matrix = *pair.cost;
      for (int32_t c = 0; c < w_classes; ++c)
        for (size_t s = 0; s < configs; ++s)
          rows.rows[static_cast<size_t>(c) * configs + s] =
              v_produces ? matrix[static_cast<size_t>(pair.u_class[s]) * pair.v_classes + c]
                         : matrix[static_cast<size_t>(c) * pair.v_classes + pair.v_class[s]];
      if (!repeats_[static_cast<size_t>(e)].empty()) {
        // Each repeat adds the same cost again: one addition per repeat, in pair order.
        const std::vector<double> once = rows.rows;
        for (size_t k = 0; k < repeats_[static_cast<size_t>(e)].size(); ++k)
          for (size_t i = 0; i < once.size(); ++i) rows.rows[i] += once[i];
      }
      edges.push_back(std::move(rows));
    }
    return edges;
  }

  // How v reads each table waiting for it: the members of D(v) its entries
  // depend on, with their strides.
  std::vector<MessageRead> waiting_reads(int v) {
    const std::vector<int>& scope = plan_.dependent[v];
    // Tables arrive in any order; summing them in plan order keeps the result
    // identical bit for bit whatever the thread count.
    std::vector<std::unique_ptr<Message>>& waiting = inbox_[v];
    std::sort(waiting.begin(), waiting.end(),
              [](const auto& a, const auto& b) { return a->producer_position < b->producer_position; });
    std::vector<MessageRead> reads;
    for (const auto& message : waiting) {
      PASE_ASSERT(!message->scope.empty() && message->scope.back() == v, v, message->scope.size(), message->producer_position);
      MessageRead read;
      read.cost = message->cost.data();
      for (size_t i = 0; i + 1 < message->scope.size(); ++i)
        read.terms.emplace_back(scope_index(scope, message->scope[i], v), message->stride[i]);
      reads.push_back(std::move(read));
    }
    return reads;
  }

  // Allocates v's cost table (sent on) and argmin table (kept).
  std::unique_ptr<Message> new_table(int v) {
    const uint64_t entries = sizes_.entries[v];
    auto table = std::make_unique<Message>();
    table->scope = plan_.dependent[v];
    table->stride = strides_of(table->scope, objective_);
    table->producer_position = plan_.position[v];
    table->cost = RawBuffer<double>(entries);
    argmins_[v] = ArgminTable(entries, objective_.config_count(v));
    add_live(entries * sizeof(double) + argmins_[v].bytes());
    return table;
  }

  // Fills v's table: over class combinations where that is smaller, then
  // expanded to every assignment of D(v).
  void compute_table(int v, const std::vector<EdgeRows>& edges, const std::vector<MessageRead>& reads, Message& table) {
    const uint64_t entries = sizes_.entries[v];
    TableJob job = plan_job(objective_, table.scope, objective_.config_count(v), objective_.vertex_cost[v].data(), edges, reads);
    PASE_ASSERT(job.entries >= 1 && job.entries <= entries, v, job.entries, entries);  // class digits never outnumber configurations
    const bool compacted = job.entries != entries;
    RawBuffer<double> compact_cost(compacted ? job.entries : 0);
    RawBuffer<uint32_t> compact_arg(job.entries);
    const uint64_t working = working_bytes(edges, job, compacted);
    add_live(working);
    double* out_cost = table.cost.data();
    fill(job, compacted ? compact_cost.data() : out_cost, compact_arg.data());
    const TableExpansion expand(objective_, table.scope, table.stride, job, compacted, compact_cost.data(),
                                compact_arg.data(), out_cost, argmins_[v]);
    if (serial_ || entries < 4096) expand(tbb::blocked_range<uint64_t>(0, entries));
    else tbb::this_task_arena::isolate([&] { tbb::parallel_for(tbb::blocked_range<uint64_t>(0, entries, 4096), expand); });
    live_bytes_.fetch_sub(working);
  }

  // Fills a job's table: on this thread when it is small or the DP serial,
  // else in chunks across the arena. The wait for the chunks is isolated: a
  // waiting thread takes only this table's chunks, not another vertex, so at
  // most one vertex per thread holds its working buffers (the plan's bound).
  void fill(const TableJob& job, double* out_cost, uint32_t* out_arg) {
    // Every thread's buffers are sized for the largest vertex (fill_shape).
    PASE_ASSERT(job.configs <= shape_.configs && job.radix.size() <= shape_.members &&
                    job.edges.size() + job.reads.size() <= shape_.factors,
                job.configs, shape_.configs, job.radix.size(), shape_.members, job.edges.size(), job.reads.size(),
                shape_.factors);
    const TableFill table(job, out_cost, out_arg);
    if (serial_) {
      if (!serial_scratch_) serial_scratch_.emplace(new_scratch());
      table.fill(tbb::blocked_range<uint64_t>(0, table.items()), *serial_scratch_);
      return;
    }
    auto fill_items = [&](const tbb::blocked_range<uint64_t>& items) { table.fill(items, thread_scratch_->local()); };
    if (table.items() <= table.grain()) {
      fill_items(tbb::blocked_range<uint64_t>(0, table.items()));
      return;
    }
    tbb::this_task_arena::isolate(
        [&] { tbb::parallel_for(tbb::blocked_range<uint64_t>(0, table.items(), table.grain()), fill_items); });
  }

  // Frees the tables v has read.
  void release_inbox(int v) {
    uint64_t consumed = 0;
    for (const auto& message : inbox_[v]) consumed += message->cost.size() * sizeof(double);
    inbox_[v].clear();
    live_bytes_.fetch_sub(consumed);
  }

  // Hands v's table to its consumer, the earliest-processed member of D(v);
  // a table over nothing ends a connected component.
  int send(int v, std::unique_ptr<Message> table) {
    if (table->scope.empty()) {
      component_cost_[v] = table->cost[0];
      live_bytes_.fetch_sub(sizeof(double));
      return -1;
    }
    int consumer = table->scope.back();
    bool ready = false;
    {
      std::lock_guard<std::mutex> lock(inbox_mutex_[consumer]);
      inbox_[consumer].push_back(std::move(table));
      PASE_ASSERT(pending_[consumer] > 0, v, consumer, pending_[consumer]);  // a consumer is started once
      ready = --pending_[consumer] == 0;
    }
    if (!ready || kept_[static_cast<size_t>(consumer)]) return -1;  // a kept vertex is never eliminated
    if (serial_) return consumer;
    group_->run([this, consumer] { process(consumer); });
    return -1;
  }

  // Back-substitution, latest vertex first: each argmin table is indexed by
  // the choices already made for D(v).
  void read_back_strategy(std::vector<int32_t>& choice) const {
    for (size_t i = plan_.order.size(); i-- > 0;) {
      int v = plan_.order[i];
      if (kept_[static_cast<size_t>(v)]) continue;  // given
      const std::vector<int>& scope = plan_.dependent[v];
      std::vector<uint64_t> stride = strides_of(scope, objective_);
      uint64_t index = 0;
      for (size_t j = 0; j < scope.size(); ++j) index += static_cast<uint64_t>(choice[scope[j]]) * stride[j];
      PASE_ASSERT(index < sizes_.entries[v], v, index, sizes_.entries[v]);
      choice[v] = static_cast<int32_t>(argmins_[static_cast<size_t>(argmin_owner_[v])].get(index));
      PASE_ASSERT(static_cast<size_t>(choice[v]) < objective_.config_count(v), v, choice[v], objective_.config_count(v));
    }
  }

  // A thread's fill buffers, allocated where it first fills (allocating them
  // up front, before the first table, made a one-thread Transformer p = 64
  // solve about 7% slower: placement, not size).
  FillScratch new_scratch() {
    add_live(FillScratch::bytes(shape_.configs, shape_.members, shape_.factors));
    return FillScratch(shape_.configs, shape_.members, shape_.factors);
  }

  void add_live(uint64_t bytes) {
    uint64_t now = live_bytes_.fetch_add(bytes) + bytes;
    uint64_t peak = peak_bytes_.load();
    while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now)) {
    }
  }

  const Objective& objective_;
  const EliminationPlan& plan_;
  const TablePlan& sizes_;
  const size_t n_;
  const bool serial_;
  const FillShape shape_;
  std::vector<ArgminTable> argmins_;
  std::vector<std::vector<int>> incident_;  // pair indices per vertex, repeats left out
  std::vector<std::vector<int>> repeats_;   // per pair, the later pairs that repeat it
  std::vector<std::vector<std::unique_ptr<Message>>> inbox_;
  std::unique_ptr<std::mutex[]> inbox_mutex_;
  std::vector<int> pending_;
  std::vector<double> component_cost_;
  std::atomic<uint64_t> live_bytes_{0}, peak_bytes_{0};
  std::function<void(const DpProgress&)> progress_callback_;
  std::mutex progress_mutex_;
  DpProgress progress_;
  const std::vector<int>& same_as_;                          // followers' templates (empty: none)
  std::vector<std::vector<int>> followers_;                  // per template
  std::vector<int> argmin_owner_;                            // whose argmin table v reads back
  std::vector<std::unique_ptr<RawBuffer<double>>> retained_;  // templates' tables, while followers copy them
  std::vector<int> readers_left_;                            // followers still to copy each retained table
  std::vector<char> kept_;                                   // vertices left uneliminated (eliminate_dp)
  std::vector<int> serial_ready_;                            // serial path: vertices ready to run
  std::optional<tbb::task_arena> arena_;
  std::optional<tbb::task_group> group_;
  // Fill buffers: one on the serial path, else one per thread that fills,
  // kept across chunks and tables (a chunk can be a few microseconds of work).
  std::optional<FillScratch> serial_scratch_;
  std::optional<tbb::enumerable_thread_specific<FillScratch>> thread_scratch_;
};

}  // namespace

struct PartialArgmins {
  std::vector<ArgminTable> tables;
};

int dp_threads(int requested, uint64_t work) {
  if (requested > 0) return requested;
  return work < kSerialWork ? 1 : tbb::info::default_concurrency();
}

TablePlan measure_tables(const Objective& objective, const EliminationPlan& plan, int threads,
                         const std::vector<int>& same_as) {
  TablePlan sizes;
  const size_t n = objective.vertex_count();
  sizes.entries.assign(n, 1);
  auto follows = [&](int v) { return !same_as.empty() && same_as[static_cast<size_t>(v)] >= 0; };
  for (int v : plan.order) {
    uint64_t entries = 1;
    for (int w : plan.dependent[v]) entries = saturating_mul(entries, objective.config_count(w));
    sizes.entries[v] = entries;
    sizes.total_entries = saturating_add(sizes.total_entries, entries);
    if (follows(v)) {  // a copy of its template's table, if its consumer reads it
      if (plan.dependent[v].empty() || !follows(plan.dependent[v].back())) {
        sizes.table_bytes = saturating_add(sizes.table_bytes, saturating_mul(entries, sizeof(double)));
        sizes.total_work = saturating_add(sizes.total_work, entries);
      }
      continue;
    }
    uint64_t per_entry = sizeof(double) + static_cast<uint64_t>(ArgminTable::width_for(objective.config_count(v)));
    sizes.table_bytes = saturating_add(sizes.table_bytes, saturating_mul(entries, per_entry));
    sizes.total_work = saturating_add(sizes.total_work, saturating_mul(entries, objective.config_count(v)));
    if (sizes.largest_vertex < 0 || entries > sizes.entries[sizes.largest_vertex]) sizes.largest_vertex = v;
  }
  sizes.threads = dp_threads(threads, sizes.total_work);
  // At most one vertex per thread is being filled: the largest working sets
  // of as many vertices as threads, and each thread's fill buffers.
  std::vector<uint64_t> working = working_bytes_bound(objective, plan, sizes.entries);
  const size_t filled_at_once = std::min(working.size(), static_cast<size_t>(sizes.threads));
  std::partial_sort(working.begin(), working.begin() + static_cast<std::ptrdiff_t>(filled_at_once), working.end(),
                    std::greater<>());
  for (size_t i = 0; i < filled_at_once; ++i) sizes.working_bytes = saturating_add(sizes.working_bytes, working[i]);
  const FillShape shape = fill_shape(objective, plan);
  sizes.working_bytes = saturating_add(sizes.working_bytes, saturating_mul(static_cast<uint64_t>(sizes.threads),
                                                                           FillScratch::bytes(shape.configs, shape.members, shape.factors)));
  sizes.total_bytes = saturating_add(sizes.table_bytes, sizes.working_bytes);
  return sizes;
}

DpResult solve_dp(const Objective& objective, const EliminationPlan& plan, const std::vector<std::string>& names,
                  const DpOptions& options) {
  auto start = std::chrono::steady_clock::now();
  const size_t n = objective.vertex_count();
  PASE_ASSERT(plan.order.size() == n && plan.position.size() == n && plan.dependent.size() == n && names.size() == n, n,
              plan.order.size(), plan.position.size(), plan.dependent.size(), names.size());
  PASE_ASSERT(options.same_as.empty() || options.same_as.size() == n, options.same_as.size(), n);
  TablePlan sizes = measure_tables(objective, plan, options.threads, options.same_as);
  check_limits(plan, sizes, names, options);
  DpResult result = DynamicProgram(objective, plan, sizes, options.progress, options.same_as).run();
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

PartialDp eliminate_dp(const Objective& objective, const EliminationPlan& plan, const std::vector<std::string>& names,
                       const DpOptions& options, size_t kept) {
  auto start = std::chrono::steady_clock::now();
  const size_t n = objective.vertex_count();
  PASE_ASSERT(plan.order.size() == n && names.size() == n && kept <= n && options.same_as.empty(), n, plan.order.size(),
              names.size(), kept);
  PartialDp result;
  result.kept.assign(plan.order.end() - static_cast<std::ptrdiff_t>(kept), plan.order.end());
  // The kept vertices' tables are never built: the plan's sizes count them,
  // an upper bound of what the kept table itself takes.
  result.sizes = measure_tables(objective, plan, options.threads);
  check_limits(plan, result.sizes, names, options);
  const std::vector<int> no_followers;  // the DP keeps a reference
  DynamicProgram dp(objective, plan, result.sizes, options.progress, no_followers, kept);
  result.table = dp.run_keeping(result.kept);
  result.stats = dp.stats();
  auto argmins = std::make_shared<PartialArgmins>();
  argmins->tables = dp.take_argmins();
  for (const ArgminTable& table : argmins->tables) result.argmin_bytes += table.bytes();
  result.argmins = std::move(argmins);
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void read_back(const PartialDp& partial, const Objective& objective, const EliminationPlan& plan,
               std::vector<int32_t>& choice) {
  const std::vector<ArgminTable>& tables = partial.argmins->tables;
  std::vector<uint64_t> stride;
  for (size_t i = plan.order.size() - partial.kept.size(); i-- > 0;) {
    const int v = plan.order[i];
    const std::vector<int>& scope = plan.dependent[v];
    stride = strides_of(scope, objective);
    uint64_t index = 0;
    for (size_t j = 0; j < scope.size(); ++j) index += static_cast<uint64_t>(choice[scope[j]]) * stride[j];
    PASE_ASSERT(index < partial.sizes.entries[v], v, index, partial.sizes.entries[v]);
    choice[v] = static_cast<int32_t>(tables[static_cast<size_t>(v)].get(index));
  }
}

}  // namespace pase
