#include "solver/dp.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <unordered_map>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "graphs/error.h"

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
  const std::vector<int32_t>* w_class = nullptr;
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
    // Number the distinct class tuples over the edges to w, in order of first
    // appearance. A tuple is packed into one integer (mixed radix over the
    // edges' class counts); a dense lookup serves when that space is small.
    std::vector<const EdgeRows*> mine;
    for (const EdgeRows& edge : edges)
      if (static_cast<size_t>(edge.scope_index) == i) mine.push_back(&edge);
    uint64_t key_space = 1;
    for (const EdgeRows* edge : mine) key_space = saturating_mul(key_space, edge->rows.size() / configs);
    std::vector<int32_t>& map = job.virtual_of[i];
    map.resize(w_configs);
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
      int32_t next = static_cast<int32_t>(representative[i].size());
      int32_t& slot = key_space == kSaturated ? by_tuple.try_emplace(tuple, -1).first->second
                      : dense.empty()         ? sparse.try_emplace(key, -1).first->second
                                              : dense[key];
      if (slot < 0) {
        slot = next;
        representative[i].push_back(c);
      }
      map[c] = slot;
    }
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

struct FillScratch {
  std::vector<double> base, acc;
  std::vector<uint64_t> digit, inner_offset;
  std::vector<const double*> rows;
};

// Fills cost/argmin over the job's (virtual) entries. The last member of D(v)
// changes fastest; the factors that do not read it are summed once per run
// into `base`, and the sweep over the fast digit adds only the others.
// `arena` null: the whole DP runs on this thread, without TBB.
void fill_table(const TableJob& job, tbb::task_arena* arena, double* out_cost, uint32_t* out_arg) {
  const size_t k = job.radix.size();
  const size_t configs = job.configs;
  const size_t fast = k ? k - 1 : 0;
  const uint64_t run = k ? job.radix[fast] : 1;
  const uint64_t outer_count = job.entries / run;
  std::vector<const TableJob::Edge*> outer_edges, inner_edges;
  for (const TableJob::Edge& edge : job.edges)
    (k && static_cast<size_t>(edge.scope_index) == fast ? inner_edges : outer_edges).push_back(&edge);
  std::vector<std::pair<const MessageRead*, uint64_t>> outer_reads, inner_reads;  // (read, stride of the fast digit)
  for (const MessageRead* read : job.reads) {
    uint64_t fast_stride = 0;
    for (const auto& [index, message_stride] : read->terms)
      if (k && static_cast<size_t>(index) == fast) fast_stride = message_stride;
    (fast_stride ? inner_reads : outer_reads).emplace_back(read, fast_stride);
  }
  const size_t inner_factors = 1 + inner_edges.size() + inner_reads.size();
  const uint64_t chunk = std::max<uint64_t>(1, std::min<uint64_t>(run, (uint64_t{1} << 16) / (configs * inner_factors)));
  const uint64_t chunks_per_run = (run + chunk - 1) / chunk;
  const uint64_t items_total = outer_count * chunks_per_run;
  auto fill = [&](const tbb::blocked_range<uint64_t>& items) {
      // Per-thread scratch, kept across chunks and tables: a chunk can be a
      // few microseconds of work, and all threads share one malloc arena.
      thread_local FillScratch scratch;
      std::vector<double>& base = scratch.base;
      std::vector<double>& acc = scratch.acc;
      std::vector<uint64_t>& digit = scratch.digit;
      std::vector<const double*>& rows = scratch.rows;
      std::vector<uint64_t>& inner_offset = scratch.inner_offset;
      base.resize(configs);
      acc.resize(configs);
      digit.resize(k);
      inner_offset.resize(inner_reads.size());
      for (uint64_t item = items.begin(); item != items.end(); ++item) {
        const uint64_t outer = item / chunks_per_run;
        const uint64_t first = (item % chunks_per_run) * chunk, last = std::min(run, first + chunk);
        uint64_t rest = outer * run;
        for (size_t i = 0; i < k; ++i) {
          digit[i] = rest / job.stride[i];
          rest %= job.stride[i];
        }
        std::copy(job.own, job.own + configs, base.begin());
        for (const TableJob::Edge* edge : outer_edges) {
          const double* row = edge->row[digit[edge->scope_index]];
          for (size_t s = 0; s < configs; ++s) base[s] += row[s];
        }
        for (const auto& [read, unused] : outer_reads) {
          uint64_t offset = 0;
          for (const auto& [index, message_stride] : read->terms) offset += digit[index] * message_stride;
          const double* row = read->cost + offset;
          for (size_t s = 0; s < configs; ++s) base[s] += row[s];
        }
        for (size_t m = 0; m < inner_reads.size(); ++m) {
          inner_offset[m] = 0;
          for (const auto& [index, message_stride] : inner_reads[m].first->terms)
            if (static_cast<size_t>(index) != fast) inner_offset[m] += digit[index] * message_stride;
        }
        for (uint64_t d = first; d < last; ++d) {
          rows.clear();
          for (const TableJob::Edge* edge : inner_edges) rows.push_back(edge->row[d]);
          for (size_t m = 0; m < inner_reads.size(); ++m)
            rows.push_back(inner_reads[m].first->cost + inner_offset[m] + d * inner_reads[m].second);
          auto [best_cost, best] = min_of_sum(base.data(), rows.data(), rows.size(), acc.data(), configs);
          out_cost[outer * run + d] = best_cost;
          out_arg[outer * run + d] = static_cast<uint32_t>(best);
        }
      }
  };
  // Chunks of at least kGrainSteps inner steps: small tables are filled on
  // this thread, and large ones are not cut finer than scheduling pays for.
  const uint64_t item_steps = chunk * configs * inner_factors;
  const uint64_t grain = std::max<uint64_t>(1, kGrainSteps / item_steps);
  if (!arena || items_total <= grain) {
    fill(tbb::blocked_range<uint64_t>(0, items_total));
    return;
  }
  arena->execute([&] { tbb::parallel_for(tbb::blocked_range<uint64_t>(0, items_total, grain), fill); });
}

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

}  // namespace

TablePlan measure_tables(const Objective& objective, const EliminationPlan& plan) {
  TablePlan sizes;
  const size_t n = objective.vertex_count();
  sizes.entries.assign(n, 1);
  for (int v : plan.order) {
    uint64_t entries = 1;
    for (int w : plan.dependent[v]) entries = saturating_mul(entries, objective.config_count(w));
    sizes.entries[v] = entries;
    uint64_t per_entry = sizeof(double) + static_cast<uint64_t>(ArgminTable::width_for(objective.config_count(v)));
    sizes.total_entries = saturating_add(sizes.total_entries, entries);
    sizes.total_bytes = saturating_add(sizes.total_bytes, saturating_mul(entries, per_entry));
    sizes.total_work = saturating_add(sizes.total_work, saturating_mul(entries, objective.config_count(v)));
    if (sizes.largest_vertex < 0 || entries > sizes.entries[sizes.largest_vertex]) sizes.largest_vertex = v;
  }
  return sizes;
}

DpResult solve_dp(const Objective& objective, const EliminationPlan& plan, const std::vector<std::string>& names,
                  const DpOptions& options) {
  auto start = std::chrono::steady_clock::now();
  const size_t n = objective.vertex_count();
  TablePlan sizes = measure_tables(objective, plan);
  auto text = [](uint64_t x) { return x == kSaturated ? std::string("more than 2^64") : std::to_string(x); };
  auto largest = [&] {
    int v = sizes.largest_vertex;
    return "'" + names[v] + "' with " + text(sizes.entries[v]) + " entries over its dependent set of " +
           std::to_string(plan.dependent[v].size()) + " (" + describe_scope(plan.dependent[v], names) + ")";
  };
  if (sizes.total_bytes > options.max_table_bytes)
    throw ResourceError("the DP tables would need " + text(sizes.total_bytes) + " bytes, above the limit of " +
                        std::to_string(options.max_table_bytes) + " (--max-table-bytes); the largest is vertex " + largest());
  if (sizes.total_work > options.max_work)
    throw ResourceError("the DP would take " + text(sizes.total_work) +
                        " steps (table entries x configurations), above the limit of " + std::to_string(options.max_work) +
                        " (--max-work; about 10^9 steps per second per core); the largest table is vertex " + largest());

  DpResult result;
  result.choice.assign(n, 0);
  std::vector<ArgminTable> argmins(n);
  std::vector<std::vector<int>> incident(n);  // pair indices per vertex
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    incident[objective.pairs[e].u].push_back(static_cast<int>(e));
    incident[objective.pairs[e].v].push_back(static_cast<int>(e));
  }
  // A vertex can be processed once every table waiting for it has arrived;
  // vertices whose tables do not depend on each other run concurrently.
  std::vector<std::vector<std::unique_ptr<Message>>> inbox(n);
  std::unique_ptr<std::mutex[]> inbox_mutex(new std::mutex[n]);
  std::vector<int> pending(n, 0);
  for (int v : plan.order) {
    result.stats.max_dependent_set = std::max(result.stats.max_dependent_set, plan.dependent[v].size());
    result.stats.table_entries += sizes.entries[v];
    if (!plan.dependent[v].empty()) ++pending[plan.dependent[v].back()];
  }
  std::vector<double> component_cost(n, 0.0);
  std::atomic<uint64_t> live_bytes{0}, peak_bytes{0};
  auto add_live = [&](uint64_t bytes) {
    uint64_t now = live_bytes.fetch_add(bytes) + bytes;
    uint64_t peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
  };

  const int threads = options.threads > 0 ? options.threads : sizes.total_work < kSerialWork ? 1 : tbb::task_arena::automatic;
  // On one thread the DP does not touch TBB at all: starting its scheduler
  // costs about 2 ms, as much as a whole small solve.
  const bool serial = threads == 1;
  std::optional<tbb::task_arena> arena;
  std::optional<tbb::task_group> group;
  if (!serial) {
    arena.emplace(threads);
    group.emplace();
  }
  // Processes v; returns the consumer its table completed, if any, for the
  // serial driver to run next (in parallel it is started as a task instead).
  std::function<int(int)> process = [&](int v) -> int {
    const std::vector<int>& scope = plan.dependent[v];
    const size_t configs = objective.config_count(v);
    const std::vector<double>& own = objective.vertex_cost[v];
    std::vector<uint64_t> stride = strides_of(scope, objective);
    const uint64_t entries = sizes.entries[v];

    std::vector<EdgeRows> edges;
    for (int e : incident[v]) {
      const PairCost& pair = objective.pairs[e];
      int w = pair.u == v ? pair.v : pair.u;
      if (plan.position[w] < plan.position[v]) continue;  // already counted when w was processed
      EdgeRows rows;
      rows.scope_index = static_cast<int>(std::find(scope.begin(), scope.end(), w) - scope.begin());
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
      edges.push_back(std::move(rows));
    }
    // Tables arrive in any order; summing them in plan order keeps the result
    // identical bit for bit whatever the thread count.
    std::vector<std::unique_ptr<Message>>& waiting = inbox[v];
    std::sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) { return a->producer_position < b->producer_position; });
    std::vector<MessageRead> reads;
    for (const auto& message : waiting) {
      MessageRead read;
      read.cost = message->cost.data();
      for (size_t i = 0; i + 1 < message->scope.size(); ++i) {
        int index = static_cast<int>(std::find(scope.begin(), scope.end(), message->scope[i]) - scope.begin());
        read.terms.emplace_back(index, message->stride[i]);
      }
      reads.push_back(std::move(read));
    }

    auto table = std::make_unique<Message>();
    table->scope = scope;
    table->stride = stride;
    table->producer_position = plan.position[v];
    table->cost = RawBuffer<double>(entries);
    argmins[v] = ArgminTable(entries, configs);
    add_live(entries * sizeof(double) + argmins[v].bytes());

    TableJob job = plan_job(objective, scope, configs, own.data(), edges, reads);
    double* out_cost = table->cost.data();
    ArgminTable& out_argmin = argmins[v];
    const bool compacted = job.entries != entries;
    RawBuffer<double> compact_cost(compacted ? job.entries : 0);
    RawBuffer<uint32_t> compact_arg(job.entries);
    fill_table(job, serial ? nullptr : &*arena, compacted ? compact_cost.data() : out_cost, compact_arg.data());
    // Expand the compact table to every configuration of D(v).
    auto expand = [&](const tbb::blocked_range<uint64_t>& range) {
      if (!compacted) {
        for (uint64_t alpha = range.begin(); alpha != range.end(); ++alpha) out_argmin.set(alpha, compact_arg[alpha]);
        return;
      }
      std::vector<uint64_t> digit(scope.size());
      uint64_t rest = range.begin();
      for (size_t i = 0; i < scope.size(); ++i) {
        digit[i] = rest / stride[i];
        rest %= stride[i];
      }
      for (uint64_t alpha = range.begin(); alpha != range.end(); ++alpha) {
        uint64_t compact = 0;
        for (size_t i = 0; i < scope.size(); ++i)
          compact += (job.virtual_of[i].empty() ? digit[i] : static_cast<uint64_t>(job.virtual_of[i][digit[i]])) * job.stride[i];
        out_cost[alpha] = compact_cost[compact];
        out_argmin.set(alpha, compact_arg[compact]);
        for (size_t i = scope.size(); i-- > 0;) {  // odometer, last digit fastest
          if (++digit[i] < objective.config_count(scope[i])) break;
          digit[i] = 0;
        }
      }
    };
    if (serial || entries < 4096) expand(tbb::blocked_range<uint64_t>(0, entries));
    else tbb::parallel_for(tbb::blocked_range<uint64_t>(0, entries, 4096), expand);

    uint64_t consumed = 0;
    for (const auto& message : waiting) consumed += message->cost.size() * sizeof(double);
    waiting.clear();
    live_bytes.fetch_sub(consumed);
    if (scope.empty()) {
      component_cost[v] = table->cost[0];  // a finished connected component
      live_bytes.fetch_sub(sizeof(double));
      return -1;
    }
    int consumer = scope.back();
    bool ready = false;
    {
      std::lock_guard<std::mutex> lock(inbox_mutex[consumer]);
      inbox[consumer].push_back(std::move(table));
      ready = --pending[consumer] == 0;
    }
    if (!ready) return -1;
    if (serial) return consumer;
    group->run([&process, consumer] { process(consumer); });
    return -1;
  };
  // The vertices that wait for no table, listed before any task starts:
  // once tasks run, they count `pending` down, and a consumer that reached
  // zero is started by its last producer. Reading `pending` while spawning
  // raced with that and could start such a consumer twice, the second time
  // without its inbox, which wrote wrong argmins (found by the thread-count
  // determinism test failing about one run in ten).
  std::vector<int> leaves;
  for (int v : plan.order)
    if (pending[v] == 0) leaves.push_back(v);
  if (serial) {
    // Depth first, as a one-thread task pool would go: a consumer runs as
    // soon as its last table arrives, so few tables wait at once.
    for (int leaf : leaves)
      for (int v = leaf; v >= 0;) v = process(v);
  } else {
    arena->execute([&] {
      for (int v : leaves) group->run([&process, v] { process(v); });
      group->wait();
    });
  }
  for (int v : plan.order) result.cost += component_cost[v];  // in plan order: deterministic
  result.stats.peak_table_bytes = peak_bytes.load();

  for (size_t i = plan.order.size(); i-- > 0;) {
    int v = plan.order[i];
    const std::vector<int>& scope = plan.dependent[v];
    std::vector<uint64_t> stride = strides_of(scope, objective);
    uint64_t index = 0;
    for (size_t j = 0; j < scope.size(); ++j) index += static_cast<uint64_t>(result.choice[scope[j]]) * stride[j];
    result.choice[v] = static_cast<int32_t>(argmins[v].get(index));
  }
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace pase
