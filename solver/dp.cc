#include "solver/dp.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "graphs/error.h"

namespace pase {
namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return a * b;
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }

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
  std::vector<uint8_t> bytes_;
};

// A finished table waiting for the vertex that consumes it.
struct Message {
  std::vector<double> cost;
  std::vector<int> scope;        // D(w), latest first; the consumer is last (stride 1)
  std::vector<uint64_t> stride;  // mixed-radix strides of `scope`
};

// An edge between v and a later vertex w, as rows over v's configurations.
struct EdgeRows {
  int scope_index = 0;                  // where w sits in D(v)
  const std::vector<int32_t>* w_class;  // class of each configuration of w
  std::vector<double> rows;             // rows[w_class * Cv + s]
};

// A message read by v: its offset for an assignment of D(v), then Cv contiguous entries.
struct MessageRead {
  const double* cost = nullptr;
  std::vector<std::pair<int, uint64_t>> terms;  // (index in D(v), stride in the message)
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
    if (sizes.largest_vertex < 0 || entries > sizes.entries[sizes.largest_vertex]) sizes.largest_vertex = v;
  }
  return sizes;
}

DpResult solve_dp(const Objective& objective, const EliminationPlan& plan, const std::vector<std::string>& names,
                  const DpOptions& options) {
  auto start = std::chrono::steady_clock::now();
  const size_t n = objective.vertex_count();
  TablePlan sizes = measure_tables(objective, plan);
  if (sizes.total_bytes > options.max_table_bytes) {
    int v = sizes.largest_vertex;
    auto text = [](uint64_t x) { return x == kSaturated ? std::string("more than 2^64") : std::to_string(x); };
    throw ResourceError("the DP tables would need " + text(sizes.total_bytes) + " bytes, above the limit of " +
                        std::to_string(options.max_table_bytes) + " (--max-table-bytes); the largest is vertex '" +
                        names[v] + "' with " + text(sizes.entries[v]) + " entries over its dependent set of " +
                        std::to_string(plan.dependent[v].size()) + " (" + describe_scope(plan.dependent[v], names) + ")");
  }

  DpResult result;
  result.choice.assign(n, 0);
  std::vector<ArgminTable> argmins(n);
  std::vector<std::vector<std::unique_ptr<Message>>> inbox(n);  // messages waiting for each vertex
  std::vector<std::vector<int>> incident(n);                    // pair indices per vertex
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    incident[objective.pairs[e].u].push_back(static_cast<int>(e));
    incident[objective.pairs[e].v].push_back(static_cast<int>(e));
  }
  uint64_t live_bytes = 0;

  tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
  for (int v : plan.order) {
    const std::vector<int>& scope = plan.dependent[v];
    const size_t configs = objective.config_count(v);
    const std::vector<double>& own = objective.vertex_cost[v];
    std::vector<uint64_t> stride = strides_of(scope, objective);
    const uint64_t entries = sizes.entries[v];
    result.stats.max_dependent_set = std::max(result.stats.max_dependent_set, scope.size());
    result.stats.table_entries += entries;

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
      for (int32_t c = 0; c < w_classes; ++c)
        for (size_t s = 0; s < configs; ++s)
          rows.rows[static_cast<size_t>(c) * configs + s] =
              v_produces ? pair.cost[static_cast<size_t>(pair.u_class[s]) * pair.v_classes + c]
                         : pair.cost[static_cast<size_t>(c) * pair.v_classes + pair.v_class[s]];
      edges.push_back(std::move(rows));
    }
    std::vector<MessageRead> reads;
    for (const auto& message : inbox[v]) {
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
    table->cost.resize(entries);
    argmins[v] = ArgminTable(entries, configs);
    live_bytes += entries * sizeof(double) + argmins[v].bytes();
    result.stats.peak_table_bytes = std::max(result.stats.peak_table_bytes, live_bytes);

    const size_t factors = 1 + edges.size() + reads.size();
    const size_t grain = std::max<size_t>(1, 32768 / (configs * factors));
    double* out_cost = table->cost.data();
    ArgminTable& out_argmin = argmins[v];
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<uint64_t>(0, entries, grain), [&](const tbb::blocked_range<uint64_t>& range) {
        std::vector<double> acc(configs);
        std::vector<uint64_t> digit(scope.size());
        uint64_t rest = range.begin();
        for (size_t i = 0; i < scope.size(); ++i) {
          digit[i] = rest / stride[i];
          rest %= stride[i];
        }
        for (uint64_t alpha = range.begin(); alpha != range.end(); ++alpha) {
          std::copy(own.begin(), own.end(), acc.begin());
          for (const EdgeRows& edge : edges) {
            const double* row = edge.rows.data() + static_cast<size_t>((*edge.w_class)[digit[edge.scope_index]]) * configs;
            for (size_t s = 0; s < configs; ++s) acc[s] += row[s];
          }
          for (const MessageRead& read : reads) {
            uint64_t offset = 0;
            for (const auto& [index, message_stride] : read.terms) offset += digit[index] * message_stride;
            const double* row = read.cost + offset;
            for (size_t s = 0; s < configs; ++s) acc[s] += row[s];
          }
          size_t best = 0;
          for (size_t s = 1; s < configs; ++s)
            if (acc[s] < acc[best]) best = s;  // strict: ties go to the first configuration
          out_cost[alpha] = acc[best];
          out_argmin.set(alpha, static_cast<uint32_t>(best));
          for (size_t i = scope.size(); i-- > 0;) {  // odometer, last digit fastest
            if (++digit[i] < objective.config_count(scope[i])) break;
            digit[i] = 0;
          }
        }
      });
    });

    for (auto& message : inbox[v]) live_bytes -= message->cost.size() * sizeof(double);
    inbox[v].clear();
    if (scope.empty()) {
      result.cost += table->cost[0];  // a finished connected component
      live_bytes -= sizeof(double);
    } else {
      inbox[scope.back()].push_back(std::move(table));
    }
  }

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
