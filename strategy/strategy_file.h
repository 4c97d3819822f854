#pragma once
// A solve's strategy as a `pase-strategy` document (strategy_document.h): the
// chosen configuration of every vertex and how it splits each tensor, so
// other frameworks can apply it, with what the solve found out on the way.
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "plans/plan.h"
#include "strategy/strategy_document.h"

namespace pase {

/// Per-vertex view of a strategy, shared by the document and the CLI tables.
struct LayerReport {
  std::string name, op, dims;
  std::vector<int32_t> config;
  int64_t devices_used = 0;
  double cost = 0.0;  ///< layer cost L
};

[[nodiscard]] std::vector<LayerReport> layer_reports(const Graph& graph, const CostTables& tables,
                                                     const std::vector<int32_t>& choice);

/// The document of a strategy: `solver` may be null (no solver section);
/// `plan` may be null (no mesh, layouts or realized redistribution), and then
/// a non-empty `no_plan_reason` is recorded as `plan_unavailable`; `memory`
/// may be null (no memory object).
[[nodiscard]] StrategyDocument strategy_document(const Graph& graph, const CostTables& tables,
                                                 const std::vector<int32_t>& choice, double total_cost,
                                                 const SolverReport* solver, const Plan* plan = nullptr,
                                                 const MemoryReport* memory = nullptr,
                                                 const std::string& no_plan_reason = "");

/// write_strategy(strategy_document(...)): the file's text.
[[nodiscard]] std::string write_strategy_file(const Graph& graph, const CostTables& tables,
                                              const std::vector<int32_t>& choice, double total_cost,
                                              const SolverReport* solver, const Plan* plan = nullptr,
                                              const MemoryReport* memory = nullptr,
                                              const std::string& no_plan_reason = "");

}  // namespace pase
