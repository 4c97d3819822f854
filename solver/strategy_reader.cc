#include "solver/strategy_reader.h"

#include <limits>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "graphs/error.h"
#include "graphs/json_document.h"
#include "graphs/graph_file.h"
#include "solver/config_lookup.h"

namespace pase {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& message) { throw InputError(where + ": " + message); }

std::string describe(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a non-integer number";
  return std::string("a") + (value.is_array() || value.is_object() ? "n " : " ") + value.type_name();
}

int64_t get_int(const json& value, const std::string& where) {
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    fail(where, "expected an integer, got " + (value.is_number() ? value.dump() : describe(value)));
  return value.get<int64_t>();
}

std::string join(const std::vector<int64_t>& values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + ")";
}

}  // namespace

StrategyFileV1 parse_strategy_file(const std::string& text, const std::string& source) {
  json root = parse_json_document(text, source);
  if (!root.is_object()) fail(source, "expected a JSON object at the top level, got " + describe(root));
  auto field = [&](const std::string& f) { return source + ": field '" + f + "'"; };
  if (!root.contains("format")) fail(field("format"), "missing (expected \"pase-strategy\")");
  if (root["format"] != "pase-strategy") fail(field("format"), "expected \"pase-strategy\", got " + root["format"].dump());
  if (!root.contains("version")) fail(field("version"), "missing (expected 1)");
  if (get_int(root["version"], field("version")) != 1)
    fail(field("version"), "unsupported version " + root["version"].dump() + " (this pase reads version 1)");

  StrategyFileV1 file;
  file.source = source;
  if (root.contains("graph")) {
    if (!root["graph"].is_string()) fail(field("graph"), "expected a string, got " + describe(root["graph"]));
    file.graph = root["graph"].get<std::string>();
  }
  if (root.contains("devices")) {
    file.devices = get_int(root["devices"], field("devices"));
    if (*file.devices < 1) fail(field("devices"), "expected a positive number of devices, got " + root["devices"].dump());
  }
  if (root.contains("total_cost") && root["total_cost"].is_number()) file.total_cost = root["total_cost"].get<double>();
  if (!root.contains("layers")) fail(field("layers"), "missing (one entry per vertex)");
  const json& layers = root["layers"];
  if (!layers.is_array()) fail(field("layers"), "expected an array, got " + describe(layers));
  for (size_t i = 0; i < layers.size(); ++i) {
    std::string where = source + ": layers[" + std::to_string(i) + "]";
    const json& layer = layers[i];
    if (!layer.is_object()) fail(where, "expected an object, got " + describe(layer));
    if (!layer.contains("name")) fail(where + ": field 'name'", "missing");
    if (!layer["name"].is_string()) fail(where + ": field 'name'", "expected a string, got " + describe(layer["name"]));
    StrategyLayerV1 out;
    out.name = layer["name"].get<std::string>();
    where = source + ": layer '" + out.name + "'";
    if (!layer.contains("config")) fail(where + ": field 'config'", "missing");
    const json& config = layer["config"];
    if (!config.is_array()) fail(where + ": field 'config'", "expected an array of split counts, got " + describe(config));
    for (size_t d = 0; d < config.size(); ++d) {
      int64_t split = get_int(config[d], where + ": field 'config'[" + std::to_string(d) + "]");
      if (split < 1 || split > (int64_t{1} << 30))
        fail(where + ": field 'config'[" + std::to_string(d) + "]", "expected a split count in 1..2^30, got " +
                                                                          std::to_string(split));
      out.config.push_back(split);
    }
    if (layer.contains("dims")) {
      if (!layer["dims"].is_string()) fail(where + ": field 'dims'", "expected a string, got " + describe(layer["dims"]));
      out.dims = layer["dims"].get<std::string>();
    }
    file.layers.push_back(std::move(out));
  }
  return file;
}

StrategyFileV1 read_strategy_file(const std::string& path) { return parse_strategy_file(read_text_file(path), path); }

std::vector<int32_t> strategy_choice(const StrategyFileV1& file, const Graph& graph, const CostTables& tables) {
  const std::string& source = file.source;
  std::vector<int32_t> choice(graph.vertices.size(), -1);
  std::unordered_map<std::string, size_t> seen;  // layer name -> index in file
  std::vector<std::string> names;
  for (const Vertex& vertex : graph.vertices) names.push_back(vertex.name);
  for (size_t i = 0; i < file.layers.size(); ++i) {
    const StrategyLayerV1& layer = file.layers[i];
    std::string where = source + ": layer '" + layer.name + "'";
    int v = graph.find_vertex(layer.name);
    if (v < 0) {
      std::string hint = closest_name(layer.name, names);
      fail(where, "no such vertex in graph '" + graph.name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
    auto [it, inserted] = seen.emplace(layer.name, i);
    if (!inserted)
      fail(where, "listed twice (layers[" + std::to_string(it->second) + "] and layers[" + std::to_string(i) + "])");
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
