#include "strategy/strategy_file.h"

#include "costmodel/costs.h"
#include "graphs/layer_weights.h"
#include "graphs/sequence_parallel.h"
#include "strategy/plan_summary.h"

namespace pase {
namespace {

// How `config` splits a tensor whose dimensions follow `map`.
std::vector<int64_t> split_of(const SplitMap& map, const int32_t* config) {
  std::vector<int64_t> split(map.size());
  tensor_split(map, config, split.data());
  return split;
}

// A vertex's entry: its configuration, and how that splits every input,
// output and trainable parameter it reads.
StrategyLayer strategy_layer(const Vertex& vertex, const VertexModel& model, const int32_t* config,
                             const LayerReport& report) {
  StrategyLayer layer;
  layer.name = report.name;
  layer.op = report.op;
  layer.dims = report.dims;
  layer.domain = model.domain;
  layer.config.assign(report.config.begin(), report.config.end());
  layer.devices_used = report.devices_used;
  layer.cost = report.cost;
  for (size_t j = 0; j < vertex.inputs.size() && j < model.inputs.size(); ++j)
    layer.inputs.push_back({vertex.inputs[j].ref, vertex.inputs[j].shape, split_of(model.inputs[j], config), {}});
  for (size_t k = 0; k < vertex.outputs.size(); ++k)
    layer.outputs.push_back({"", vertex.outputs[k], split_of(model.outputs[k], config), {}});
  for (const LayerWeight& w : layer_weights(vertex, model))
    layer.weights.push_back({w.name, w.shape, split_of(w.split, config), split_letters(w.split, model.letters)});
  return layer;
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

StrategyDocument strategy_document(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                                   double total_cost, const SolverReport* solver, const Plan* plan,
                                   const MemoryReport* memory, const std::string& no_plan_reason) {
  StrategyDocument d;
  d.graph = graph.name;
  d.devices = tables.machine.devices;
  d.flops_tflops = tables.machine.flops_tflops;
  d.bandwidth_gbps = tables.machine.bandwidth_gbps;
  d.machine_profile = tables.machine.profile;
  d.cost_model = tables.cost_model;
  d.cost_unit = tables.unit;
  d.total_cost = total_cost;
  d.replaced = graph.replaced;
  if (solver) d.solver = *solver;
  const std::vector<LayerReport> reports = layer_reports(graph, tables, choice);
  double layer_total = 0.0;
  for (const LayerReport& r : reports) layer_total += r.cost;
  d.layer_cost = layer_total;
  d.redistribution_cost = total_cost - layer_total;
  if (plan) d.plan = *plan;
  else d.plan_unavailable = no_plan_reason;
  if (memory) d.memory = *memory;
  d.summary = plan_summary(graph, tables, choice, memory ? memory->options : TrainingSetup{}, plan);
  if (memory && !memory->options.plain_step()) {
    const TrainingSetup& t = memory->options;
    d.training = TrainingRecord{t.micro_batches, memory->micro_batch_size, t.recompute, t.zero, t.attention, 1, "1f1b",
                                {tables.machine.devices}, {total_cost}, {memory->bytes.total()}};
  }
  d.layers.reserve(graph.vertices.size());
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    d.layers.push_back(strategy_layer(graph.vertices[v], tables.models[v], tables.configs[v][choice[v]], reports[v]));
    d.layers.back().sequence_parallel = sequence_parallel_name(graph.vertices[v].sequence_parallel);
    if (d.training) {
      d.layers.back().recompute = graph.vertices[v].recompute;
      d.layers.back().zero = zero_stage_of(memory->options, graph.vertices[v].zero);
      d.layers.back().fused_attention = graph.vertices[v].fused_scores;
    }
  }
  return d;
}

std::string write_strategy_file(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                                double total_cost, const SolverReport* solver, const Plan* plan,
                                const MemoryReport* memory, const std::string& no_plan_reason) {
  return write_strategy(strategy_document(graph, tables, choice, total_cost, solver, plan, memory, no_plan_reason));
}

}  // namespace pase
