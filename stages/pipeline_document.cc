#include "stages/pipeline_document.h"

#include <algorithm>
#include <cmath>

#include "graphs/stage_graph.h"
#include "strategy/strategy_file.h"

namespace pase {

Graph solved_stage_graph(const Graph& graph, const PipelineStage& stage) {
  Graph named = stage_graph(graph, stage.begin, stage.end);
  const StageSolve& solved = *stage.solve;  // a range with the same key: the same vertices in order
  for (size_t v = 0; v < named.vertices.size(); ++v) {
    named.vertices[v].recompute = solved.recompute[v];
    named.vertices[v].zero = solved.zero[v];
    named.vertices[v].fused_scores = solved.fused_scores[v];
  }
  return named;
}

StrategyDocument pipeline_document(const Graph& graph, const PipelineOutcome& outcome, const TrainingSetup& setup,
                                   int64_t micro_batch_size, const PipelineSchedule& schedule, int64_t devices,
                                   std::optional<uint64_t> cap) {
  StrategyDocument document;
  TrainingRecord training{setup.micro_batches, micro_batch_size, setup.recompute, setup.zero, setup.attention,
                          static_cast<int64_t>(outcome.stages.size()), schedule_name(schedule), {}, {}, {}};
  PlanMemory largest;
  double layers_cost = 0, stages_cost = 0;
  for (size_t k = 0; k < outcome.stages.size(); ++k) {
    const PipelineStage& stage = outcome.stages[k];
    const Graph named = solved_stage_graph(graph, stage);
    MemoryReport memory;
    memory.options = setup;
    memory.micro_batch_size = micro_batch_size;
    memory.bytes = stage.bytes;
    StrategyDocument part = strategy_document(named, stage.solve->outcome.tables, stage.solve->outcome.solution.choice,
                                              stage.solve->step_cost, nullptr, nullptr, &memory);
    if (k == 0) document = part;
    layers_cost += part.layer_cost.value_or(0);
    stages_cost += stage.solve->step_cost;
    for (StrategyLayer& layer : part.layers) {
      layer.stage = static_cast<int>(k);
      layer.recompute = layer.recompute.value_or(false);
      layer.zero = layer.zero.value_or(zero_stage_of(setup, -1));
      layer.fused_attention = layer.fused_attention.value_or(false);
      if (k > 0) document.layers.push_back(std::move(layer));
    }
    if (k == 0) document.layers = part.layers;
    training.stage_devices.push_back(stage.devices);
    training.stage_cost.push_back(stage.value.t);
    training.stage_memory_bytes.push_back(stage.bytes.total());
    if (stage.bytes.total() > largest.total()) largest = stage.bytes;
  }
  document.graph = graph.name;
  document.devices = devices;
  document.total_cost = outcome.step;
  // Each stage's layers and redistributions as its own solve priced them (M t + w each).
  document.layer_cost = layers_cost;
  document.redistribution_cost = stages_cost - layers_cost;
  document.summary.clear();
  document.plan_unavailable = "pipeline stages: each stage's mesh is not placed yet";
  MemoryReport memory;
  memory.options = setup;
  memory.micro_batch_size = micro_batch_size;
  memory.bytes = largest;
  memory.cap = cap;
  if (!std::isnan(outcome.lower_bound)) {  // a baseline's stages are not searched: no bound
    memory.lower_bound = outcome.lower_bound;
    memory.gap = outcome.lower_bound > 0 ? (outcome.step - outcome.lower_bound) / outcome.lower_bound : 0.0;
  }
  document.memory = memory;
  document.training = training;
  return document;
}

}  // namespace pase
