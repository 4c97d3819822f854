#pragma once
// One-layer graphs and the `pase` model's price of one configuration: the
// op cost tests work costs out by hand and compare them with these.
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "graphs/vertex_model.h"

namespace pase::test {

/// The text of a graph file (cutoff 1) with `tensors` (JSON members) and `nodes` (JSON objects, comma-separated).
std::string one_layer_graph_text(const std::string& tensors, const std::string& nodes);

/// That graph, read.
Graph one_layer_graph(const std::string& tensors, const std::string& nodes);

/// The price of the graph's last vertex under `config` on `devices`; -1 when
/// the configuration is not enumerated.
double last_layer_cost(const Graph& graph, const std::vector<int32_t>& config, int64_t devices = 8);

/// The per-dimension split of a tensor read through `map` under `config`.
std::vector<int64_t> split_of(const SplitMap& map, const std::vector<int32_t>& config);

}  // namespace pase::test
