#include "strategy/strategy_reader.h"

#include "base/closest_name.h"
#include "base/error.h"
#include "strategy/config_lookup.h"

namespace pase {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& message) { throw InputError(where + ": " + message); }

std::string join(const std::vector<int64_t>& values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + ")";
}

}  // namespace

std::vector<int32_t> strategy_choice(const StrategyDocument& file, const Graph& graph, const CostTables& tables) {
  const std::string& source = file.source;
  std::vector<int32_t> choice(graph.vertices.size(), -1);
  std::vector<std::string> names;
  for (const Vertex& vertex : graph.vertices) names.push_back(vertex.name);
  for (const StrategyLayer& layer : file.layers) {
    std::string where = source + ": layer '" + layer.name + "'";
    int v = graph.find_vertex(layer.name);
    if (v < 0) {
      std::string hint = closest_name(layer.name, names);
      fail(where, "no such vertex in graph '" + graph.name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
    const VertexModel& model = tables.models[v];
    if (layer.dims && *layer.dims != model.letters)
      fail(where + ": field 'dims'", "'" + *layer.dims + "' does not match the vertex's dims '" + model.letters + "'");
    if (layer.config.size() != model.domain.size())
      fail(where + ": field 'config'", "expected " + std::to_string(model.domain.size()) + " entries (dims '" +
                                           model.letters + "'), got " + std::to_string(layer.config.size()));
    std::string problem = config_problem(model, graph.vertices[v].cutoff, tables.machine.devices, layer.config);
    std::vector<int32_t> tuple(layer.config.begin(), layer.config.end());
    int32_t index = problem.empty() ? find_config(tables.configs[v], tuple.data()) : -1;
    if (index < 0)
      fail(where + ": field 'config'", join(layer.config) + " is not a valid configuration (" +
                                           (problem.empty() ? "not among the vertex's configurations" : problem) + ")");
    choice[v] = index;
  }
  for (size_t v = 0; v < graph.vertices.size(); ++v)
    if (choice[v] < 0)
      fail(source + ": layer '" + graph.vertices[v].name + "'",
           "missing: every vertex of graph '" + graph.name + "' needs a configuration");
  return choice;
}

}  // namespace pase
