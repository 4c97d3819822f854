#include "strategy/strategy_reader.h"

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_document.h"
#include "base/json_reader.h"
#include "strategy/config_lookup.h"
#include "base/text_file.h"
#include "base/closest_name.h"

namespace pase {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& message) { throw InputError(where + ": " + message); }

constexpr int64_t kMaxSplit = int64_t{1} << 30;

std::string join(const std::vector<int64_t>& values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + ")";
}

}  // namespace

StrategyFileV1 parse_strategy_file(const std::string& text, const std::string& source) {
  nlohmann::json document = parse_json_document(text, source);
  JsonReader root(document, source);
  root.expect_object("a JSON object at the top level");
  root.check_header("pase-strategy", 1);

  StrategyFileV1 file;
  file.source = source;
  if (auto f = root.optional("graph")) file.graph = f->as_string();
  if (auto f = root.optional("devices")) file.devices = f->as_positive("number of devices");
  if (auto f = root.optional("total_cost"); f && f->value().is_number()) file.total_cost = f->value().get<double>();
  std::vector<JsonReader> layers = root.required("layers", "one entry per vertex").items();
  std::unordered_map<std::string, size_t> seen;  // layer name -> index in file
  for (size_t i = 0; i < layers.size(); ++i) {
    JsonReader layer = layers[i].as_subject("layers[" + std::to_string(i) + "]");
    layer.expect_object();
    StrategyLayerV1 out;
    out.name = layer.required("name").as_string();
    layer = layer.as_subject("layer '" + out.name + "'");
    auto [it, inserted] = seen.emplace(out.name, i);
    if (!inserted)
      layer.fail("listed twice (layers[" + std::to_string(it->second) + "] and layers[" + std::to_string(i) + "])");
    for (const JsonReader& split : layer.required("config").items("split counts")) {
      int64_t count = split.as_int();
      if (count < 1 || count > kMaxSplit) split.fail("expected a split count in 1..2^30, got " + std::to_string(count));
      out.config.push_back(count);
    }
    if (auto f = layer.optional("dims")) out.dims = f->as_string();
    file.layers.push_back(std::move(out));
  }
  return file;
}

StrategyFileV1 read_strategy_file(const std::string& path) { return parse_strategy_file(read_text_file(path), path); }

std::vector<int32_t> strategy_choice(const StrategyFileV1& file, const Graph& graph, const CostTables& tables) {
  const std::string& source = file.source;
  std::vector<int32_t> choice(graph.vertices.size(), -1);
  std::vector<std::string> names;
  for (const Vertex& vertex : graph.vertices) names.push_back(vertex.name);
  for (const StrategyLayerV1& layer : file.layers) {
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
