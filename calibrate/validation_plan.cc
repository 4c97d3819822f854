#include "calibrate/validation_plan.h"

#include <map>

#include <nlohmann/json.hpp>

#include "graphs/error.h"

namespace pase {
namespace {

using json = nlohmann::json;

// Only the fields --validate needs are read; the rest of the file is the solver's.
std::map<std::string, std::vector<int32_t>> read_configs(const std::string& text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error&) {
    throw InputError(source + ": malformed JSON (expected a pase-strategy file)");
  }
  auto fail = [&](const std::string& where, const std::string& message) {
    throw InputError(source + ": " + where + ": " + message);
  };
  if (!root.is_object() || root.value("format", json()) != "pase-strategy")
    fail("field 'format'", "expected \"pase-strategy\"");
  if (root.value("version", json()) != 1) fail("field 'version'", "unsupported version (this pase reads version 1)");
  if (!root.contains("layers") || !root["layers"].is_array()) fail("field 'layers'", "expected an array of layers");
  std::map<std::string, std::vector<int32_t>> configs;
  for (size_t i = 0; i < root["layers"].size(); ++i) {
    const json& layer = root["layers"][i];
    std::string where = "layers[" + std::to_string(i) + "]";
    if (!layer.is_object() || !layer.contains("name") || !layer["name"].is_string())
      fail(where, "expected an object with a string 'name'");
    if (!layer.contains("config") || !layer["config"].is_array())
      fail(where + ": field 'config'", "expected an array of split counts");
    std::vector<int32_t> config;
    for (const json& split : layer["config"]) {
      if (!split.is_number_integer() || split.get<int64_t>() < 1 || split.get<int64_t>() > (int64_t{1} << 30))
        fail(where + ": field 'config'", "expected positive split counts, got " + layer["config"].dump());
      config.push_back(static_cast<int32_t>(split.get<int64_t>()));
    }
    configs[layer["name"].get<std::string>()] = config;
  }
  return configs;
}

}  // namespace

std::vector<PlannedLayer> validation_plan(const Graph& graph, const std::string& strategy_text,
                                          const std::string& source, const CalibratedCostModel& model) {
  std::map<std::string, std::vector<int32_t>> configs = read_configs(strategy_text, source);
  std::vector<PlannedLayer> plan;
  for (const Vertex& vertex : graph.vertices) {
    VertexModel vm = build_vertex_model(vertex);
    const std::vector<int32_t> unsplit(vm.domain.size(), 1);
    if (!describe_work(vm, unsplit.data()).has_gemm) continue;  // only GEMM layers are timed
    auto it = configs.find(vertex.name);
    if (it == configs.end())
      throw InputError(source + ": no layer '" + vertex.name + "' (is the strategy for graph '" + graph.name + "'?)");
    const std::vector<int32_t>& config = it->second;
    if (config.size() != vm.domain.size())
      throw InputError(source + ": layer '" + vertex.name + "': field 'config': expected " +
                       std::to_string(vm.domain.size()) + " split counts (dims \"" + vm.letters + "\"), got " +
                       std::to_string(config.size()));
    for (size_t d = 0; d < config.size(); ++d)
      if (config[d] > vm.domain[d])
        throw InputError(source + ": layer '" + vertex.name + "': field 'config': split " + std::to_string(config[d]) +
                         " of dim '" + vm.letters.substr(d, 1) + "' exceeds its extent " + std::to_string(vm.domain[d]));
    PlannedLayer layer;
    layer.name = vertex.name;
    layer.config = config;
    layer.shape = gemm_shape(vm, config.data());
    layer.gemms = training_gemms(layer.shape);
    for (size_t g = 0; g < 3; ++g) layer.predicted[g] = layer.shape.batch * model.gemm_seconds(layer.gemms[g]);
    plan.push_back(std::move(layer));
  }
  return plan;
}

}  // namespace pase
