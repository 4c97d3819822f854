#pragma once
// A priced strategy as the simulator's step (docs/simulate.md, "From a
// strategy to tasks"): each layer at its configuration, its terms as the
// cost model that priced the tables lists them, per micro-batch and per
// step. Micro-batch terms' forward part goes in forward, the rest (and a
// recomputed forward) in backward; an edge's redistribution half in its
// consumer's forward, half in its backward; step terms' collectives after
// the layer's last backward, their compute (the optimizer's update) after
// every gradient; ZeRO's per-micro-batch weight gathers and gradient
// reduce-scatters apart (the simulator runs them on their own streams).
#include <cstdint>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "simulate/step_model.h"

namespace pase {

/// Each layer's work at any configuration, its own terms found once per
/// configuration asked (a search asks a layer again and again).
class SimulatedLayers {
 public:
  /// `model` priced `tables` at `micro_batches`; all three outlive this.
  SimulatedLayers(const Graph& graph, const CostTables& tables, const CostModel& model, int64_t micro_batches);

  /// Vertex `v` at `choice[v]`, with the edges into it from its producers at theirs.
  [[nodiscard]] SimLayer layer(const std::vector<int32_t>& choice, size_t v);
  /// Every layer of the graph at `choice`: one stage.
  [[nodiscard]] SimStage stage(const std::vector<int32_t>& choice);
  /// Whether some configuration of `v` gathers or scatters its weight (ZeRO-2/3), asked of each once.
  [[nodiscard]] bool sharded(size_t v);
  /// The vertices whose layer a move of `v` changes: v and the consumers of its edges.
  [[nodiscard]] const std::vector<size_t>& touched_by(size_t v) const { return touched_[v]; }

 private:
  struct Own {
    bool known = false;
    double forward = 0, backward = 0, step_communication = 0, step_compute = 0;
    double gather_forward = 0, gather_backward = 0, scatter = 0, step_words = 0;
  };
  const Own& own(size_t v, int32_t config);

  const Graph& graph_;
  const CostTables& tables_;
  const CostModel& model_;
  double micro_batches_;
  std::vector<std::vector<Own>> own_;         // [vertex][configuration]
  std::vector<std::vector<size_t>> into_;     // [vertex]: its edges in (objective pairs), in the pairs' order
  std::vector<std::vector<size_t>> touched_;  // [vertex]
  std::vector<signed char> sharded_;          // [vertex]: -1 not asked yet, else sharded()
};

/// One stage of the step: every layer of `graph` at `choice`.
[[nodiscard]] SimStage simulated_stage(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                                       const CostModel& model, int64_t micro_batches);

}  // namespace pase
