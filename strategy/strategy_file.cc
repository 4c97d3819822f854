#include "strategy/strategy_file.h"

#include "costmodel/costs.h"
#include "base/json_text.h"
#include "graphs/layer_weights.h"
#include "plans/plan_text.h"

namespace pase {
namespace {

// ,"weights":[{"name":...,"shape":[...],"dims":[...],"split":[...]},...]:
// the trainable parameters the layer reads and how the configuration splits them.
// With a plan, each also gets its layout and the axes its gradient is all-reduced over.
void append_weights(std::string& out, const Vertex& vertex, const VertexModel& model, const int32_t* config,
                    const Plan* plan, const PlannedLayer* planned) {
  out += ",\"weights\":[";
  std::vector<int64_t> split;
  std::vector<LayerWeight> weights = layer_weights(vertex, model);
  for (size_t k = 0; k < weights.size(); ++k) {
    const LayerWeight& w = weights[k];
    out += k ? ",{\"name\":" : "{\"name\":";
    append_json_string(out, w.name);
    out += ",\"shape\":";
    append_json_array(out, w.shape);
    out += ",\"dims\":[";
    std::vector<std::string> dims = split_letters(w.split, model.letters);
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d) out += ',';
      append_json_string(out, dims[d]);
    }
    out += "],\"split\":";
    split.resize(w.split.size());
    tensor_split(w.split, config, split.data());
    append_json_array(out, split);
    if (plan) append_tensor_plan(out, planned->weights[k], plan->mesh, /*is_weight=*/true, /*with_dims=*/false);
    out += '}';
  }
  out += ']';
}

}  // namespace

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

std::string write_strategy_file(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                                double total_cost, const SolverReport* solver, const Plan* plan,
                                const MemoryReport* memory, const std::string& no_plan_reason) {
  // Written straight to text: building the document as nlohmann::json first
  // took longer than solving the smaller graphs. The layout is a layer per
  // line, which reads well and diffs well.
  std::string out;
  out.reserve(512 + 400 * graph.vertices.size());
  auto field = [&out](const char* key) { append_json_top_level_key(out, key); };
  auto member = [&out](bool first, const char* key) {
    if (!first) out += ',';
    append_json_string(out, key);
    out += ':';
  };
  field("format");
  append_json_string(out, "pase-strategy");
  field("version");
  append_json_number(out, int64_t{1});
  field("graph");
  append_json_string(out, graph.name);
  field("devices");
  append_json_number(out, tables.machine.devices);
  field("machine");
  out += '{';
  member(true, "flops_tflops");
  append_json_number(out, tables.machine.flops_tflops);
  member(false, "bandwidth_gbps");
  append_json_number(out, tables.machine.bandwidth_gbps);
  out += '}';
  field("cost_model");
  append_json_string(out, tables.cost_model);
  field("cost_unit");
  append_json_string(out, tables.unit);
  field("total_cost");
  append_json_number(out, total_cost);
  if (!graph.replaced.empty()) {
    // What a lenient import left out: the cost above does not include it.
    field("replaced");
    out += '[';
    for (size_t i = 0; i < graph.replaced.size(); ++i) {
      const ReplacedNodeV1& r = graph.replaced[i];
      out += i ? "," : "";
      out += '{';
      member(true, "op");
      append_json_string(out, r.op);
      member(false, "name");
      append_json_string(out, r.name);
      member(false, "flop_share");
      append_json_number(out, r.flop_share);
      out += '}';
    }
    out += ']';
  }
  if (solver) {
    field("exact");
    out += solver->exact ? "true" : "false";
    if (solver->lower_bound_cost > 0) {
      field("lower_bound_cost");
      append_json_number(out, solver->lower_bound_cost);
      field("gap");
      append_json_number(out, solver->exact || solver->lower_bound_cost <= 0
                                  ? 0.0
                                  : (total_cost - solver->lower_bound_cost) / solver->lower_bound_cost);
    }
  }

  std::vector<LayerReport> reports = layer_reports(graph, tables, choice);
  double layer_total = 0.0;
  for (const LayerReport& r : reports) layer_total += r.cost;
  field("layer_cost");
  append_json_number(out, layer_total);
  field("redistribution_cost");
  append_json_number(out, total_cost - layer_total);
  if (plan) {
    field("mesh");
    append_mesh(out, plan->mesh);
    field("realized_total_cost");
    append_json_number(out, plan->realized_total_cost);
    field("axis_assignment");
    out += "{\"method\":\"dp\",\"exact\":";
    out += plan->assignment_exact ? "true" : "false";
    out += ",\"proof\":";
    append_json_string(out, plan->assignment_proof);
    out += ",\"candidates_per_layer\":" + std::to_string(plan->candidates_per_layer);
    out += ",\"realized_total_lower_bound\":";
    append_json_number(out, plan->realized_total_lower_bound);
    out += '}';
  } else if (!no_plan_reason.empty()) {
    field("plan_unavailable");
    append_json_string(out, no_plan_reason);
  }
  if (memory) {
    auto optional_number = [&out](const auto& value) {
      if (value) append_json_number(out, *value);
      else out += "null";
    };
    field("memory");
    out += '{';
    member(true, "per_device_bytes");
    append_json_number(out, memory->bytes.total());
    member(false, "cap_bytes");
    optional_number(memory->cap);
    member(false, "weights_bytes");
    append_json_number(out, memory->bytes.weights);
    member(false, "activations_bytes");
    append_json_number(out, memory->bytes.activations);
    member(false, "dtype");
    append_json_string(out, dtype_name(memory->options.dtype));
    member(false, "optimizer");
    append_json_string(out, optimizer_name(memory->options.optimizer));
    member(false, "lower_bound_cost");
    optional_number(memory->lower_bound);
    member(false, "gap");
    optional_number(memory->gap);
    out += '}';
  }
  field("layers");
  out += '[';
  std::vector<int64_t> split;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const Vertex& vertex = graph.vertices[v];
    const VertexModel& model = tables.models[v];
    const int32_t* config = tables.configs[v][choice[v]];
    const LayerReport& r = reports[v];
    out += v ? ",\n    {" : "\n    {";
    member(true, "name");
    append_json_string(out, r.name);
    member(false, "op");
    append_json_string(out, r.op);
    member(false, "dims");
    append_json_string(out, r.dims);
    member(false, "domain");
    append_json_array(out, model.domain);
    member(false, "config");
    append_json_array(out, r.config);
    if (plan) {
      member(false, "mesh_axes");
      append_mesh_axes(out, plan->layers[v], plan->mesh);
    }
    member(false, "devices_used");
    append_json_number(out, r.devices_used);
    member(false, "cost");
    append_json_number(out, r.cost);
    member(false, "inputs");
    out += '[';
    for (size_t j = 0; j < vertex.inputs.size() && j < model.inputs.size(); ++j) {
      split.resize(model.inputs[j].size());
      tensor_split(model.inputs[j], config, split.data());
      out += j ? ",{" : "{";
      member(true, "tensor");
      append_json_string(out, vertex.inputs[j].ref);
      member(false, "shape");
      append_json_array(out, vertex.inputs[j].shape);
      member(false, "split");
      append_json_array(out, split);
      if (plan) append_tensor_plan(out, plan->layers[v].inputs[j], plan->mesh, /*is_weight=*/false);
      out += '}';
    }
    out += ']';
    member(false, "outputs");
    out += '[';
    for (size_t k = 0; k < vertex.outputs.size(); ++k) {
      split.resize(model.outputs[k].size());
      tensor_split(model.outputs[k], config, split.data());
      out += k ? ",{" : "{";
      member(true, "shape");
      append_json_array(out, vertex.outputs[k]);
      member(false, "split");
      append_json_array(out, split);
      if (plan) append_tensor_plan(out, plan->layers[v].outputs[k], plan->mesh, /*is_weight=*/false);
      out += '}';
    }
    out += ']';
    append_weights(out, vertex, model, config, plan, plan ? &plan->layers[v] : nullptr);
    out += '}';
  }
  out += graph.vertices.empty() ? "]" : "\n  ]";
  if (solver) {
    field("solver");
    out += '{';
    member(true, "order_kind");
    append_json_string(out, solver->order_kind);
    member(false, "order");
    out += '[';
    for (size_t i = 0; i < solver->order.size(); ++i) {
      if (i) out += ',';
      append_json_string(out, solver->order[i]);
    }
    out += ']';
    member(false, "max_dependent_set");
    append_json_number(out, static_cast<uint64_t>(solver->max_dependent_set));
    member(false, "table_entries");
    append_json_number(out, solver->table_entries);
    member(false, "largest_table_entries");
    append_json_number(out, solver->largest_table_entries);
    if (solver->timings) {
      member(false, "peak_table_bytes");
      append_json_number(out, solver->peak_table_bytes);
    }
    if (solver->relaxed_edges > 0) {
      member(false, "relaxed_edges");
      append_json_number(out, static_cast<uint64_t>(solver->relaxed_edges));
    }
    if (solver->timings) {
      member(false, "seconds");
      append_json_number(out, solver->seconds);
    }
    out += '}';
  }
  out += "\n}\n";
  return out;
}

}  // namespace pase
