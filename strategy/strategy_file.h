#pragma once
// The `pase-strategy` v1 file: the chosen configuration of every vertex and
// how it splits each tensor, so other frameworks can apply it.
#include <optional>
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "graphs/graph.h"
#include "plans/plan.h"

namespace pase {

/// Per-vertex view of a strategy, shared by the JSON writer and the CLI table.
struct LayerReport {
  std::string name, op, dims;
  std::vector<int32_t> config;
  int64_t devices_used = 0;
  double cost = 0.0;  ///< layer cost L
};

[[nodiscard]] std::vector<LayerReport> layer_reports(const Graph& graph, const CostTables& tables,
                                                     const std::vector<int32_t>& choice);

/// Extra solver facts recorded in the file.
struct SolverReport {
  std::string order_kind;
  std::vector<std::string> order;
  size_t max_dependent_set = 0;
  uint64_t table_entries = 0;
  uint64_t largest_table_entries = 0;
  uint64_t peak_table_bytes = 0;
  double seconds = 0.0;
  /// Write peak_table_bytes and seconds: they vary from run to run and with
  /// the thread count, so by default they are left out and the file is the
  /// same bytes every time (users diff and cache it).
  bool timings = false;
  /// A bounded solve (dp/bounded_solve.h) sets lower_bound_cost and
  /// relaxed_edges; it is exact when its bound meets its cost, else its cost
  /// is within the written gap of the optimum.
  bool exact = true;
  double lower_bound_cost = 0.0;
  size_t relaxed_edges = 0;
};

/// The strategy's memory per device (docs/memory.md), and the cap it was solved under.
struct MemoryReport {
  PlanMemory bytes;
  MemoryOptions options;
  std::optional<uint64_t> cap;       ///< none: solved without a cap
  std::optional<double> lower_bound;  ///< proven lower bound on the best cost under the cap
  std::optional<double> gap;          ///< (total_cost - lower_bound) / lower_bound
};

/// The strategy file as text, fields in a fixed order: one top-level field
/// per line, one layer per line. `solver` may be null (no solver section);
/// `plan` may be null (no mesh, layouts or realized redistribution); then a
/// non-empty `no_plan_reason` is written as `plan_unavailable`. `memory` may
/// be null (no memory object).
[[nodiscard]] std::string write_strategy_file(const Graph& graph, const CostTables& tables,
                                              const std::vector<int32_t>& choice, double total_cost,
                                              const SolverReport* solver, const Plan* plan = nullptr,
                                              const MemoryReport* memory = nullptr,
                                              const std::string& no_plan_reason = "");

}  // namespace pase
