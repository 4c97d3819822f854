#pragma once
// FlexFlow's search as FlexFlow runs it (docs/simulate.md, "FlexFlow's search
// on the simulator"): the Markov chain of mcmc.h with the simulated step as
// its objective. A move changes one layer's configuration, so the durations
// of its tasks and of its consumers' (their edges in); the delta simulation
// re-times only the tasks from the first changed one on (FlexFlow's delta
// simulation), a full one every task.
#include <cstdint>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "simulate/step_simulation.h"
#include "simulate/task_graph.h"
#include "strategy/mcmc.h"
#include "strategy/simulated_step.h"

namespace pase {

/// How a simulated step is asked of a strategy.
struct SimulatedStepOptions {
  int64_t micro_batches = 1;  ///< the tables' (the graph is one micro-batch of them)
  bool overlap = true;        ///< gradient collectives beside the backward pass (StepModel::overlap)
  bool delta = true;          ///< re-time from the first changed task on; false: every task, every move
  bool across_nodes = false;  ///< the devices span nodes: the collectives cross the network (SimStage::across_nodes)
};

/// The simulated step of a strategy on one stage (no pipeline), as a chain's objective.
class SimulatedStepObjective final : public ChainObjective {
 public:
  /// `model` priced `tables`; graph, tables and model outlive this.
  SimulatedStepObjective(const Graph& graph, const CostTables& tables, const CostModel& model,
                         const SimulatedStepOptions& options);

  size_t vertex_count() const override { return tables_.objective.vertex_count(); }
  uint64_t config_count(size_t v) const override { return tables_.objective.config_count(v); }
  /// A fresh task graph of `choice`, simulated in full.
  double evaluate(const std::vector<int32_t>& choice) override;
  double begin(const std::vector<int32_t>& start) override;
  double move_delta(const std::vector<int32_t>& current, int v, int32_t to) override;
  void accept() override;
  void reject() override;

  [[nodiscard]] size_t task_count() const { return graph_.size(); }
  [[nodiscard]] uint64_t tasks_retimed() const { return tasks_retimed_; }  ///< over every move so far
  [[nodiscard]] uint64_t moves() const { return moves_; }

 private:
  StepModel step_model(const std::vector<int32_t>& choice, bool every_step_task);
  void set_layer(size_t layer);

  const CostTables& tables_;
  SimulatedStepOptions options_;
  SimulatedLayers layers_;
  StepModel model_;  // the step's options (its stages dropped once the graph is built)
  TaskGraph graph_;
  SimulatedStep simulated_;
  std::vector<int32_t> choice_;                      // the chain's assignment, the move applied
  std::vector<std::vector<size_t>> tasks_of_layer_;  // [layer]: its tasks, increasing
  // The move being priced, to undo: the vertex and its configuration before,
  // each changed task's duration before, the simulation from `first_` on before.
  int moved_ = -1;
  int32_t moved_from_ = 0;
  std::vector<std::pair<size_t, double>> undo_durations_;
  size_t first_ = 0;
  SimulatedStep undo_tail_;
  double undo_step_ = 0;
  uint64_t tasks_retimed_ = 0, moves_ = 0;
};

struct SimulatedMcmcResult {
  McmcResult chain;       ///< its cost: the simulated step of its choice
  double additive = 0;    ///< the choice as the tables' objective sums it
  size_t tasks = 0;       ///< tasks in the step's graph
  double tasks_per_move = 0;  ///< tasks re-timed per move, on average
};

/// FlexFlow's chain from `start` with the simulated step as its objective.
[[nodiscard]] SimulatedMcmcResult simulated_mcmc_search(const Graph& graph, const CostTables& tables,
                                                        const CostModel& model, const SimulatedStepOptions& step,
                                                        const std::vector<int32_t>& start, const McmcOptions& options);

/// The simulated step of `choice` on one stage (simulate_step of its task graph).
[[nodiscard]] double simulated_step_of(const Graph& graph, const CostTables& tables, const CostModel& model,
                                       const SimulatedStepOptions& step, const std::vector<int32_t>& choice);

}  // namespace pase
