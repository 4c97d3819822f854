#include "layer_cost_support.h"

#include <algorithm>

#include <doctest/doctest.h>

#include "costmodel/machine.h"
#include "test_support.h"

namespace pase::test {

std::string one_layer_graph_text(const std::string& tensors, const std::string& nodes) {
  return R"({"format": "pase-graph", "version": 1, "cutoff": 1, "tensors": {)" + tensors + R"(}, "nodes": [)" + nodes +
         "]}";
}

Graph one_layer_graph(const std::string& tensors, const std::string& nodes) {
  return graph_from_json(one_layer_graph_text(tensors, nodes));
}

double last_layer_cost(const Graph& graph, const std::vector<int32_t>& config, int64_t devices) {
  Machine machine;
  machine.devices = devices;
  CostTables tables = build_cost_tables(graph, machine);
  size_t v = graph.vertices.size() - 1;
  const ConfigSet& configs = tables.configs[v];
  REQUIRE(configs.rank == static_cast<int>(config.size()));
  for (size_t s = 0; s < configs.size(); ++s)
    if (std::equal(config.begin(), config.end(), configs[s])) return tables.objective.vertex_cost[v][s];
  return -1;
}

std::vector<int64_t> split_of(const SplitMap& map, const std::vector<int32_t>& config) {
  std::vector<int64_t> split(map.size());
  tensor_split(map, config.data(), split.data());
  return split;
}

}  // namespace pase::test
