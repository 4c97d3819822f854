#include "solver/strategy_file.h"

#include "costmodel/costs.h"

namespace pase {

std::vector<LayerReport> layer_reports(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice) {
  std::vector<LayerReport> reports;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const ConfigSet& configs = tables.configs[v];
    const int32_t* config = configs[choice[v]];
    LayerReport r;
    r.name = graph.vertices[v].name;
    r.op = graph.vertices[v].op;
    r.dims = tables.models[v].letters;
    r.config.assign(config, config + configs.rank);
    r.devices_used = devices_used(config, configs.rank);
    r.cost = tables.objective.vertex_cost[v][choice[v]];
    reports.push_back(std::move(r));
  }
  return reports;
}

std::string format_strategy_file(const nlohmann::ordered_json& strategy) {
  // nlohmann's indented dump puts every number of every split on its own line;
  // a layer per line is as readable, diffs well and writes several times faster.
  std::string text = "{\n";
  bool first = true;
  for (auto it = strategy.begin(); it != strategy.end(); ++it) {
    text += first ? "  " : ",\n  ";
    first = false;
    text += nlohmann::ordered_json(it.key()).dump() + ": ";
    if (it.key() == "layers") {
      text += "[";
      for (size_t i = 0; i < it.value().size(); ++i) text += (i ? ",\n    " : "\n    ") + it.value()[i].dump();
      text += it.value().empty() ? "]" : "\n  ]";
    } else {
      text += it.value().dump();
    }
  }
  return text + "\n}\n";
}

nlohmann::ordered_json strategy_json(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                                     double total_cost, const SolverReport* solver) {
  using json = nlohmann::ordered_json;
  json doc;
  doc["format"] = "pase-strategy";
  doc["version"] = 1;
  doc["graph"] = graph.name;
  doc["devices"] = tables.machine.devices;
  doc["machine"] = {{"flops_tflops", tables.machine.flops_tflops}, {"bandwidth_gbps", tables.machine.bandwidth_gbps}};
  doc["cost_model"] = tables.cost_model;
  doc["cost_unit"] = tables.unit;
  doc["total_cost"] = total_cost;
  double layer_total = 0.0;
  json layers = json::array();
  std::vector<LayerReport> reports = layer_reports(graph, tables, choice);
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const Vertex& vertex = graph.vertices[v];
    const VertexModel& model = tables.models[v];
    const int32_t* config = tables.configs[v][choice[v]];
    const LayerReport& r = reports[v];
    layer_total += r.cost;
    json layer;
    layer["name"] = r.name;
    layer["op"] = r.op;
    layer["dims"] = r.dims;
    layer["domain"] = model.domain;
    layer["config"] = r.config;
    layer["devices_used"] = r.devices_used;
    layer["cost"] = r.cost;
    json inputs = json::array();
    for (size_t j = 0; j < vertex.inputs.size() && j < model.inputs.size(); ++j) {
      std::vector<int64_t> split(model.inputs[j].size());
      tensor_split(model.inputs[j], config, split.data());
      inputs.push_back({{"tensor", vertex.inputs[j].ref}, {"shape", vertex.inputs[j].shape}, {"split", split}});
    }
    layer["inputs"] = std::move(inputs);
    json outputs = json::array();
    for (size_t k = 0; k < vertex.outputs.size(); ++k) {
      std::vector<int64_t> split(model.outputs[k].size());
      tensor_split(model.outputs[k], config, split.data());
      outputs.push_back({{"shape", vertex.outputs[k]}, {"split", split}});
    }
    layer["outputs"] = std::move(outputs);
    layers.push_back(std::move(layer));
  }
  doc["layer_cost"] = layer_total;
  doc["redistribution_cost"] = total_cost - layer_total;
  doc["layers"] = std::move(layers);
  if (solver) {
    doc["solver"] = {{"order_kind", solver->order_kind},
                     {"order", solver->order},
                     {"max_dependent_set", solver->max_dependent_set},
                     {"table_entries", solver->table_entries},
                     {"largest_table_entries", solver->largest_table_entries},
                     {"peak_table_bytes", solver->peak_table_bytes},
                     {"seconds", solver->seconds}};
  }
  return doc;
}

}  // namespace pase
