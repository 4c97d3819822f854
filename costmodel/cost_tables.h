#pragma once
// Prices every configuration of every vertex and every edge of a graph once,
// producing the Objective the solver minimises plus what export needs.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/configs.h"
#include "costmodel/cost_model.h"
#include "costmodel/machine.h"
#include "dp/objective.h"
#include "graphs/vertex_model.h"
#include "graphs/graph.h"

namespace pase {

/// Per vertex, its model (read as models[v]); equal models are one shared
/// copy, as a deep model's blocks would otherwise hold one each.
class VertexModels {
 public:
  [[nodiscard]] const VertexModel& operator[](size_t v) const { return *models_[v]; }
  [[nodiscard]] size_t size() const { return models_.size(); }
  void resize(size_t n) { models_.resize(n); }
  void set(size_t v, std::shared_ptr<const VertexModel> model) { models_[v] = std::move(model); }
  /// The shared copy of vertex v's model.
  [[nodiscard]] const std::shared_ptr<const VertexModel>& shared(size_t v) const { return models_[v]; }

 private:
  std::vector<std::shared_ptr<const VertexModel>> models_;
};

struct CostTables {
  Machine machine;
  std::string cost_model = "pase";  ///< name of the model that priced the tables
  std::string unit = "flop";
  VertexModels models;
  std::vector<ConfigSet> configs;
  /// Node-aware configurations (priced on a mesh's axes, plans/mesh_search.h):
  /// per vertex and configuration, how many pieces of each split share one
  /// node (CostModel::layer_on_nodes). Empty: configurations say nothing of nodes.
  std::vector<ConfigSet> per_node;
  Objective objective;
};

/// Default cap on configurations per vertex (each is priced and kept in memory).
inline constexpr size_t kDefaultMaxConfigs = size_t{1} << 20;

/// Which configurations of a vertex (its model) a solve may use: those a
/// device mesh realizes, those kernels run well (kernel_splits.h); empty: all.
using ConfigFilter = std::function<bool(const VertexModel& model, const int32_t* config)>;

/// The vertices [begin, end) of `tables` (which price `graph`, one pair per
/// edge in edge order) as the tables of graphs/stage_graph.h's stage graph:
/// its vertices' models, configurations and costs, the edges inside the
/// range renumbered, every array shared with `tables`. Equal to pricing the
/// stage graph, since each vertex and edge is priced on its own.
[[nodiscard]] CostTables slice_cost_tables(const CostTables& tables, const Graph& graph, int begin, int end);
/// The same over several ranges, as stage_graph's stage of several ranges.
[[nodiscard]] CostTables slice_cost_tables(const CostTables& tables, const Graph& graph,
                                           const std::vector<std::pair<int, int>>& ranges);

/// Builds models, enumerates configurations (those `keep` accepts) and
/// prices layers and edges with `model`.
[[nodiscard]] CostTables build_cost_tables(const Graph& graph, const CostModel& model,
                                           size_t max_configs = kDefaultMaxConfigs, const ConfigFilter& keep = {});

/// build_cost_tables without the edges (objective.pairs empty): for bounds
/// that take every edge at nothing (each layer at its least), which would
/// otherwise price every edge matrix to read none of it.
[[nodiscard]] CostTables build_vertex_cost_tables(const Graph& graph, const CostModel& model,
                                                  size_t max_configs = kDefaultMaxConfigs, const ConfigFilter& keep = {});

/// The same with the default `pase` model on `machine`.
[[nodiscard]] CostTables build_cost_tables(const Graph& graph, const Machine& machine,
                                           size_t max_configs = kDefaultMaxConfigs);

/// The tables of `graph`, which differs from the graph `base` priced only in
/// per-layer techniques that leave configurations and edges alone
/// (Vertex::recompute, Vertex::zero): base's configurations and edge
/// matrices (shared), every vertex's costs priced anew with `model`.
[[nodiscard]] CostTables reprice_vertices(const Graph& graph, const CostModel& model, const CostTables& base);

/// What a priced graph holds in its tables, each shared array counted once:
/// vertex costs, configuration lists, class maps and edge matrices.
struct TableFootprint {
  uint64_t bytes = 0;  ///< bytes of the arrays' values
  size_t arrays = 0;   ///< distinct arrays (each priced or enumerated once)
};

/// The footprint of `tables` (a deep model's identical blocks add nothing).
[[nodiscard]] TableFootprint table_footprint(const CostTables& tables);

/// Cost of a full strategy computed straight from the formulas (no tables):
/// the reference the DP is checked against.
[[nodiscard]] double evaluate_strategy_direct(const Graph& graph, const CostTables& tables, const CostModel& model,
                                              const std::vector<int32_t>& choice);

}  // namespace pase
