#pragma once
// One solve, one policy: every command that prices or chooses a strategy
// (solve, batch, compare, frontier, explain, evaluate) hands a request to
// solve_request and prints what comes back, so they cannot drift apart. The
// steps, each once: price the graph (on the mesh's configurations, with a
// mesh), choose the strategy (the optimum, a bounded solve past the DP's
// limits, the capped search under a memory cap, a given strategy, a
// baseline, or the frontier), count its memory, place it on the mesh.
#include <string>
#include <utility>

#include "base/error.h"
#include "costmodel/cost_model.h"
#include "graphs/graph.h"
#include "memorycap/separable_bound.h"
#include "solve/outcome.h"
#include "solve/request.h"

namespace pase {

/// A built-in strategy that does not apply to the graph (a command that
/// compares several skips it, saying why: `reason`).
class BaselineNotApplicable : public OptionError {
 public:
  BaselineNotApplicable(const std::string& baseline, const std::string& graph, std::string reason)
      : OptionError({"baseline", "baseline", "", ": " + baseline + " does not apply to '" + graph + "': " + reason}),
        reason_(std::move(reason)) {}
  [[nodiscard]] const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

/// Answers `request` for `graph` priced by `model`. Bad input (a given
/// strategy that does not match the graph, a baseline that does not apply)
/// is an InputError; past the DP's limits with `exact`, or where not even a
/// bounded solve fits, a LimitError. A cap that nothing fits is an outcome
/// (capped->feasible false, `choice` the least-memory strategy) for the
/// caller to refuse in its words (no_fit_words).
[[nodiscard]] SolveOutcome solve_request(const Graph& graph, const CostModel& model, const SolveRequest& request);

/// The graph priced as solve_request prices it (over the configurations the
/// request searches; no mesh): what SolveRequest::priced takes.
[[nodiscard]] CostTables price_graph(const Graph& graph, const CostModel& model, const SolveRequest& request);

/// price_graph, and with `request.mesh` and `search_layouts` every
/// configuration on each way the mesh runs it (plans/mesh_search.h): the
/// tables and each vertex's layouts, as SolveRequest's priced and
/// priced_layouts take them.
struct PricedLayouts {
  CostTables tables;
  std::vector<std::shared_ptr<const std::vector<AxisAssignment>>> layouts;
};
[[nodiscard]] PricedLayouts price_graph_layouts(const Graph& graph, const CostModel& model, const SolveRequest& request);

/// A lower bound on the cost of every strategy `request` (an Optimum) could
/// find for `graph`: each layer at its least cost over the configurations
/// searched (and, with per-layer techniques left to the solver, over those),
/// no edge costing anything; with `request.cap`, the least such cost within
/// it (memorycap/separable_bound.h: infinity where nothing fits). Prices the
/// graph, runs no DP: what a search over several graphs (micro-batch counts)
/// rules one out with before solving it.
[[nodiscard]] double least_cost_bound(const Graph& graph, const CostModel& model, const SolveRequest& request);

/// A tighter lower bound with one DP where `request.cap` is set: the
/// Lagrangian bound of memorycap/memory_priced_dp.h at the separable bound's
/// price per byte (the DP optimum of cost + price x bytes, less price x cap;
/// the edges counted), never below the separable bound; infinity where
/// nothing fits. Without a cap, least_cost_bound.
[[nodiscard]] double lagrangian_cost_bound(const Graph& graph, const CostModel& model, const SolveRequest& request);

/// lagrangian_cost_bound with the price it was read at; with `round_price`
/// at the separable price rounded down to a power of two (like graphs then
/// share their priced blocks' tables through SolveOptions' block cache).
[[nodiscard]] PricedBound lagrangian_bound(const Graph& graph, const CostModel& model, const SolveRequest& request,
                                           bool round_price);

}  // namespace pase
