#pragma once
// Why a layer has the configuration a strategy gives it: its cost under that
// configuration and under the best alternatives, every other vertex held
// fixed, each broken down into the layer's compute, each collective inside
// it and each redistribution on its in- and out-edges, plus one sentence
// that names what an alternative would save and what it would add.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "graphs/graph.h"

namespace pase {

enum class ExplainTermKind { Compute, AllReduce, ReduceScatter, AllGather, Halo, Transfer, InEdge, OutEdge };

/// One part of a configuration's local cost.
struct ExplainTerm {
  ExplainTermKind kind = ExplainTermKind::Compute;
  std::string what;  ///< "compute", "weight-gradient all-reduce", "redistribution to 'fc7'"
  double cost = 0;   ///< in the tables' unit
  int edge = -1;     ///< InEdge/OutEdge: the graph edge (index into graph.edges)
  int neighbour = -1;  ///< InEdge/OutEdge: the vertex at the other end
};

/// One configuration of the explained vertex, priced with every other vertex fixed.
struct ExplainedConfig {
  int32_t index = 0;            ///< into tables.configs[vertex]
  std::vector<int32_t> config;  ///< split count per domain dimension
  int64_t devices_used = 1;     ///< product of the split counts
  double layer_cost = 0;        ///< the objective's L(v, config)
  double edge_cost = 0;         ///< the objective's in- and out-edge costs given the neighbours
  double local_cost = 0;        ///< layer_cost + edge_cost
  /// local_cost minus the chosen configuration's: the change of the whole
  /// objective if only this vertex switched to this configuration.
  double delta = 0;
  /// Compute and collectives (from the cost model; they add up to layer_cost
  /// up to rounding), then every in-edge, then every out-edge (exact).
  std::vector<ExplainTerm> terms;
};

struct Explanation {
  int vertex = 0;
  size_t configurations = 0;  ///< how many the vertex has
  ExplainedConfig chosen;
  /// The `top` cheapest other configurations, cheapest first (ties: configuration order).
  std::vector<ExplainedConfig> alternatives;
  /// The configuration the data-parallel baseline gives the vertex (strategy/baselines.h),
  /// when it is neither chosen nor among `alternatives`.
  std::optional<ExplainedConfig> data_parallel;
  int32_t data_parallel_index = 0;  ///< that configuration's index (may be the chosen one)
  size_t cheaper = 0;               ///< alternatives strictly cheaper than the chosen (0 at an optimum)
  std::string reason;               ///< one sentence
};

/// Explains `vertex` under `choice` (a configuration index per vertex), with the
/// `top` best alternatives. `model` must be the one that priced `tables`.
[[nodiscard]] Explanation explain_vertex(const Graph& graph, const CostTables& tables, const CostModel& model,
                                         const std::vector<int32_t>& choice, int vertex, size_t top = 5);

/// explain_vertex for every vertex, in vertex order (the edges are indexed once).
[[nodiscard]] std::vector<Explanation> explain_all(const Graph& graph, const CostTables& tables, const CostModel& model,
                                                   const std::vector<int32_t>& choice, size_t top = 5);

/// A cost of the tables read as seconds on the modelled machine: FLOP at the
/// machine's rate for the `pase` model, as is for a model priced in seconds.
[[nodiscard]] double cost_seconds(const CostTables& tables, double cost);

/// A configuration as a sentence reads it: "splitting the batch 'b' 8 ways",
/// "splitting 'n' 2 ways on 2 of the 8 devices", "keeping it on one device".
[[nodiscard]] std::string config_words(const Graph& graph, const CostTables& tables, int vertex, const int32_t* config);

}  // namespace pase
