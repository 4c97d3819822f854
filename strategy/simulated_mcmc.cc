#include "strategy/simulated_mcmc.h"

#include <algorithm>

#include "simulate/step_tasks.h"

namespace pase {

SimulatedStepObjective::SimulatedStepObjective(const Graph& graph, const CostTables& tables, const CostModel& model,
                                               const SimulatedStepOptions& options)
    : tables_(tables), options_(options), layers_(graph, tables, model, options.micro_batches) {}

StepModel SimulatedStepObjective::step_model(const std::vector<int32_t>& choice, bool every_step_task) {
  StepModel step;
  step.micro_batches = options_.micro_batches;
  step.overlap = options_.overlap;
  step.every_step_task = every_step_task;
  step.unit = tables_.unit;
  step.stages.push_back(layers_.stage(choice));
  step.stages[0].across_nodes = options_.across_nodes;
  if (every_step_task)
    for (size_t v = 0; v < step.stages[0].layers.size(); ++v) step.stages[0].layers[v].sharded = layers_.sharded(v);
  return step;
}

double SimulatedStepObjective::evaluate(const std::vector<int32_t>& choice) {
  const TaskGraph graph = step_tasks(step_model(choice, false));
  SimulatedStep simulated;
  retime_from(graph, 0, simulated);
  return simulated.step;
}

double SimulatedStepObjective::begin(const std::vector<int32_t>& start) {
  choice_ = start;
  // Every layer's step tasks, of no work too: a move changes durations, not the graph.
  model_ = step_model(start, true);
  graph_ = step_tasks(model_);
  model_.stages.clear();  // what task_duration reads of it is the options
  tasks_of_layer_.assign(choice_.size(), {});
  for (size_t i = 0; i < graph_.size(); ++i)
    if (graph_.tasks()[i].layer >= 0) tasks_of_layer_[static_cast<size_t>(graph_.tasks()[i].layer)].push_back(i);
  retime_from(graph_, 0, simulated_);
  return simulated_.step;
}

// Layer `layer`'s tasks take its work at choice_, each change kept for reject.
void SimulatedStepObjective::set_layer(size_t layer) {
  const SimLayer work = layers_.layer(choice_, layer);
  for (size_t task : tasks_of_layer_[layer]) {
    const double duration = task_duration(model_, graph_.tasks()[task], work);
    if (duration == graph_.tasks()[task].duration) continue;
    undo_durations_.emplace_back(task, graph_.tasks()[task].duration);
    graph_.set_duration(task, duration);
    first_ = std::min(first_, task);
  }
}

double SimulatedStepObjective::move_delta(const std::vector<int32_t>& current, int v, int32_t to) {
  (void)current;  // choice_ follows it: every move is accepted or rejected
  ++moves_;
  const auto vertex = static_cast<size_t>(v);
  moved_ = v;
  moved_from_ = choice_[vertex];
  choice_[vertex] = to;
  undo_durations_.clear();
  undo_step_ = simulated_.step;
  first_ = graph_.size();
  for (size_t layer : layers_.touched_by(vertex)) set_layer(layer);
  if (!options_.delta) first_ = 0;
  if (first_ >= graph_.size()) return 0.0;  // no duration changed
  save_times_from(simulated_, first_, undo_tail_);  // for reject
  retime_from(graph_, first_, simulated_);
  tasks_retimed_ += graph_.size() - first_;
  return simulated_.step - undo_step_;
}

void SimulatedStepObjective::accept() { moved_ = -1; }

void SimulatedStepObjective::reject() {
  if (moved_ < 0) return;
  choice_[static_cast<size_t>(moved_)] = moved_from_;
  moved_ = -1;
  if (first_ >= graph_.size()) return;  // nothing was re-timed
  for (auto it = undo_durations_.rbegin(); it != undo_durations_.rend(); ++it) graph_.set_duration(it->first, it->second);
  restore_times_from(undo_tail_, first_, undo_step_, simulated_);
}

SimulatedMcmcResult simulated_mcmc_search(const Graph& graph, const CostTables& tables, const CostModel& model,
                                          const SimulatedStepOptions& step, const std::vector<int32_t>& start,
                                          const McmcOptions& options) {
  SimulatedStepObjective objective(graph, tables, model, step);
  SimulatedMcmcResult result;
  result.chain = mcmc_search(objective, start, options);
  result.additive = tables.objective.evaluate(result.chain.choice);
  result.tasks = objective.task_count();
  result.tasks_per_move =
      objective.moves() ? static_cast<double>(objective.tasks_retimed()) / static_cast<double>(objective.moves()) : 0.0;
  return result;
}

double simulated_step_of(const Graph& graph, const CostTables& tables, const CostModel& model,
                         const SimulatedStepOptions& step, const std::vector<int32_t>& choice) {
  return SimulatedStepObjective(graph, tables, model, step).evaluate(choice);
}

}  // namespace pase
