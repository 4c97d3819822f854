#include "stages/pipeline_document.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "base/error.h"
#include "stages/pipeline_schedule.h"

#include "graphs/stage_graph.h"
#include "strategy/strategy_file.h"

namespace pase {

Graph solved_stage_graph(const Graph& graph, const PipelineStage& stage) {
  Graph named = stage.chunks.empty() ? stage_graph(graph, stage.begin, stage.end) : stage_graph(graph, stage.chunks);
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
  sort_in_graph_order(graph, document.layers);
  document.graph = graph.name;
  document.devices = devices;
  document.total_cost = outcome.step;
  // Each stage's layers and redistributions as its own solve priced them (M t + w each).
  document.layer_cost = layers_cost;
  document.redistribution_cost = stages_cost - layers_cost;
  document.summary.clear();
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

namespace {

// The chunks each stage holds under the file's schedule: 1 (stages of
// contiguous layers), V for interleaved:V.
int64_t chunks_of(const StrategyDocument& file, const std::string& path) {
  if (!file.training || file.training->schedule.empty()) return 1;
  try {
    const PipelineSchedule schedule = parse_schedule(file.training->schedule);
    return schedule.kind == ScheduleKind::Interleaved ? schedule.chunks : 1;
  } catch (const OptionError& error) {
    throw InputError(path + ": training.pipeline: field 'schedule'" + error.words().after);
  }
}

// A layer of `stage` after the layers of `before` (each stage's layers contiguous).
void check_contiguous(const std::vector<int>& before, int stage, const std::string& where) {
  const int last = before.empty() ? 0 : before.back();
  if (stage < last)
    throw InputError(where + ": field 'stage': " + std::to_string(stage) + " after a layer of stage " +
                     std::to_string(last) + " (each stage's layers are contiguous in the graph's order)");
  if (stage > last + 1 || (before.empty() && stage > 0))
    throw InputError(where + ": field 'stage': " + std::to_string(stage) + ", but stage " +
                     std::to_string(before.empty() ? 0 : last + 1) + " has no layers");
}

// The first layer of a chunk of `stage` after `runs` chunks (interleaved:V):
// stage after stage, V times round.
void check_round(const std::vector<int>& before, int stage, int64_t stages, int64_t chunks, int64_t runs,
                 const std::string& where) {
  const int expected = before.empty() ? 0 : static_cast<int>((before.back() + 1) % stages);
  if (runs == stages * chunks)
    throw InputError(where + ": field 'stage': " + std::to_string(stage) + " after the last of " +
                     std::to_string(stages * chunks) + " chunks (interleaved: " + std::to_string(stages) +
                     " stages of " + std::to_string(chunks) + " chunks each)");
  if (stage != expected)
    throw InputError(where + ": field 'stage': " + std::to_string(stage) + ", but chunk " + std::to_string(runs) +
                     " is stage " + std::to_string(expected) + "'s (interleaved: the stages' chunks in turn, " +
                     std::to_string(chunks) + " times round)");
}

// Each vertex's stage as the file gives it, checked: the stages' layers in
// order, stage after stage (round and round, V times, when interleaved).
std::vector<int> vertex_stages(const Graph& graph, const StrategyDocument& file, const std::string& path) {
  const int64_t stages = file.training ? file.training->stages : 1;
  const int64_t chunks = chunks_of(file, path);
  std::unordered_map<std::string, const StrategyLayer*> by_name;
  for (const StrategyLayer& layer : file.layers) by_name.emplace(layer.name, &layer);
  std::vector<int> stage_of;
  int64_t runs = 0;
  for (const Vertex& vertex : graph.vertices) {
    const auto it = by_name.find(vertex.name);
    const std::string where = path + ": layer '" + vertex.name + "'";
    if (it == by_name.end()) throw InputError(where + ": missing (a vertex of graph '" + graph.name + "')");
    if (!it->second->stage)
      throw InputError(where + ": field 'stage': missing (the file has " + std::to_string(stages) + " pipeline stages)");
    const int stage = *it->second->stage;
    if (stage < 0 || stage >= stages)
      throw InputError(where + ": field 'stage': expected a stage below " + std::to_string(stages) + ", got " +
                       std::to_string(stage));
    if (chunks == 1) check_contiguous(stage_of, stage, where);
    else if (stage_of.empty() || stage != stage_of.back()) check_round(stage_of, stage, stages, chunks, runs, where);
    if (stage_of.empty() || stage != stage_of.back()) ++runs;
    stage_of.push_back(stage);
  }
  if (chunks == 1 && !stage_of.empty() && stage_of.back() + 1 != stages)
    throw InputError(path + ": training.pipeline: " + std::to_string(stages) + " stages, but the layers name " +
                     std::to_string(stage_of.back() + 1));
  if (chunks > 1 && !stage_of.empty() && runs != stages * chunks && stages > 1)
    throw InputError(path + ": training.pipeline: " + std::to_string(stages) + " stages of " + std::to_string(chunks) +
                     " chunks each, but the layers make " + std::to_string(runs) + " chunks");
  return stage_of;
}

}  // namespace

GivenPipeline given_pipeline(const Graph& graph, const StrategyDocument& file, const std::string& path) {
  const std::vector<int> stage_of = vertex_stages(graph, file, path);
  const std::vector<int> cuts = stage_starts(graph);
  GivenPipeline given;
  const size_t stages = static_cast<size_t>(file.training ? file.training->stages : 1);
  given.chunks.resize(stages);
  for (size_t v = 0; v < stage_of.size(); ++v) {
    StageRanges& own = given.chunks[static_cast<size_t>(stage_of[v])];
    if (v > 0 && stage_of[v] == stage_of[v - 1]) {
      own.back().second = static_cast<int>(v) + 1;
      continue;
    }
    if (!std::binary_search(cuts.begin(), cuts.end(), static_cast<int>(v)))
      throw InputError(path + ": layer '" + graph.vertices[v].name + "': field 'stage': stage " +
                       std::to_string(stage_of[v]) +
                       " begins here, where more than one tensor crosses from the layers before (a stage begins after a "
                       "block boundary)");
    given.starts.push_back(static_cast<int>(v));
    own.push_back({static_cast<int>(v), static_cast<int>(v) + 1});
  }
  given.starts.push_back(static_cast<int>(graph.vertices.size()));
  if (chunks_of(file, path) == 1) given.chunks.clear();  // one range a stage: given.starts says it all
  auto parts = std::make_shared<std::vector<StrategyDocument>>();
  for (size_t k = 0; k < stages; ++k) {
    StrategyDocument part = file;
    part.plan.reset();
    part.layers.clear();
    if (file.plan && k < file.plan->stages.size()) {  // the stage's own plan: its layers on its mesh
      part.plan = Plan{};
      part.plan->mesh = file.plan->stages[k].mesh;
      for (const PlannedLayer& layer : file.plan->layers)
        if (static_cast<size_t>(layer.stage) == k) part.plan->layers.push_back(layer);
    }
    std::unordered_map<std::string, bool> in_stage;
    for (size_t v = 0; v < stage_of.size(); ++v)
      if (static_cast<size_t>(stage_of[v]) == k) in_stage[graph.vertices[v].name] = true;
    for (const StrategyLayer& layer : file.layers)
      if (in_stage.count(layer.name)) part.layers.push_back(layer);
    parts->push_back(std::move(part));
  }
  given.stages = std::move(parts);
  return given;
}

}  // namespace pase
