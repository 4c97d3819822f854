#include "dp/table_sizes.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include <tbb/info.h>

#include "base/checked_math.h"
#include "base/error.h"
#include "dp/table_fill.h"
#include "dp/table_storage.h"

namespace pase {
namespace {

std::string describe_scope(const std::vector<int>& scope, const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < scope.size() && i < 6; ++i) text += (i ? ", " : "") + names[scope[i]];
  if (scope.size() > 6) text += ", ...";
  return text;
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

}  // namespace

std::vector<uint64_t> strides_of(const std::vector<int>& scope, const Objective& objective) {
  std::vector<uint64_t> stride(scope.size());
  uint64_t s = 1;
  for (size_t i = scope.size(); i-- > 0;) {
    stride[i] = s;
    s *= objective.config_count(scope[i]);
  }
  return stride;
}

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

uint64_t working_bytes(const std::vector<EdgeRows>& edges, const TableJob& job, bool compacted) {
  uint64_t bytes = job.entries * (sizeof(uint32_t) + (compacted ? sizeof(double) : 0));
  for (const EdgeRows& edge : edges) bytes += edge.rows.size() * sizeof(double);
  for (const std::vector<int32_t>& map : job.virtual_of) bytes += map.size() * sizeof(int32_t);
  for (const TableJob::Edge& edge : job.edges) bytes += edge.row.size() * sizeof(const double*);
  return bytes;
}

std::optional<LimitError> limit_error(const EliminationPlan& plan, const TablePlan& sizes,
                                      const std::vector<std::string>& names, const DpOptions& options) {
  auto text = [](uint64_t x) { return x == kSaturated ? std::string("more than 2^64") : std::to_string(x); };
  auto largest = [&] {
    int v = sizes.largest_vertex;
    return "'" + names[v] + "' with " + text(sizes.entries[v]) + " entries over its dependent set of " +
           std::to_string(plan.dependent[v].size()) + " (" + describe_scope(plan.dependent[v], names) + ")";
  };
  if (sizes.total_bytes > options.max_table_bytes)
    return LimitError({"max_table_bytes", "the table byte limit",
                      "the DP tables would need " + text(sizes.total_bytes) + " bytes (" + text(sizes.working_bytes) +
                          " of them working buffers), above the limit of " + std::to_string(options.max_table_bytes) + " (",
                      "); the largest is vertex " + largest()});
  if (sizes.total_work > options.max_work)
    return LimitError({"max_work", "the work limit",
                      "the DP would take " + text(sizes.total_work) +
                          " steps (table entries x configurations), above the limit of " + std::to_string(options.max_work) + " (",
                      "; about 10^9 steps per second per core); the largest table is vertex " + largest()});
  return std::nullopt;
}

void check_limits(const EliminationPlan& plan, const TablePlan& sizes, const std::vector<std::string>& names,
                  const DpOptions& options) {
  if (std::optional<LimitError> error = limit_error(plan, sizes, names, options)) throw *error;
}

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

}  // namespace pase
