#include "strategy/simulated_step.h"

#include <algorithm>

#include "costmodel/table_terms.h"

namespace pase {

SimulatedLayers::SimulatedLayers(const Graph& graph, const CostTables& tables, const CostModel& model,
                                 int64_t micro_batches)
    : graph_(graph), tables_(tables), model_(model),
      micro_batches_(static_cast<double>(std::max<int64_t>(1, micro_batches))) {
  const size_t n = graph.vertices.size();
  own_.resize(n);
  for (size_t v = 0; v < n; ++v) own_[v].resize(tables.configs[v].size());
  into_.resize(n);
  touched_.resize(n);
  sharded_.assign(n, -1);
  for (size_t v = 0; v < n; ++v) touched_[v].push_back(v);
  const std::vector<PairCost>& pairs = tables.objective.pairs;
  for (size_t e = 0; e < pairs.size(); ++e) {
    const auto u = static_cast<size_t>(pairs[e].u), v = static_cast<size_t>(pairs[e].v);
    into_[v].push_back(e);
    if (std::find(touched_[u].begin(), touched_[u].end(), v) == touched_[u].end()) touched_[u].push_back(v);
  }
}

const SimulatedLayers::Own& SimulatedLayers::own(size_t v, int32_t config) {
  Own& own = own_[v][static_cast<size_t>(config)];
  if (own.known) return own;
  const auto c = static_cast<size_t>(config);
  const CostTerms terms = table_terms(tables_, model_, v, c);
  for (const CostTerm& term : terms) {
    if (is_weight_gather(term)) {
      own.gather_forward += term.forward / micro_batches_;
      own.gather_backward += (term.cost - term.forward) / micro_batches_;
    } else if (is_gradient_scatter(term)) {
      own.scatter += term.cost / micro_batches_;
    } else if (term.phase == CostPhase::MicroBatch) {
      own.forward += term.forward / micro_batches_;
      own.backward += (term.cost - term.forward) / micro_batches_;
    } else if (term.kind == CostTermKind::Compute) {
      own.step_compute += term.cost;
    } else {
      own.step_communication += term.cost;
      own.step_words += term.words;
    }
  }
  own.known = true;
  return own;
}

bool SimulatedLayers::sharded(size_t v) {
  if (sharded_[v] < 0) {
    sharded_[v] = 0;
    for (size_t c = 0; c < own_[v].size() && !sharded_[v]; ++c) {
      const Own& work = own(v, static_cast<int32_t>(c));
      sharded_[v] = work.gather_forward + work.gather_backward + work.scatter > 0;
    }
  }
  return sharded_[v] != 0;
}

SimLayer SimulatedLayers::layer(const std::vector<int32_t>& choice, size_t v) {
  const Own& mine = own(v, choice[v]);
  SimLayer layer{graph_.vertices[v].name, mine.forward, mine.backward, mine.step_communication, mine.step_compute,
                 mine.gather_forward, mine.gather_backward, mine.scatter, mine.step_words};
  // Each edge's redistribution: its activation before the consumer's forward, its gradient in its backward.
  for (size_t e : into_[v]) {
    const PairCost& pair = tables_.objective.pairs[e];
    const double cost = pair.at(static_cast<size_t>(choice[static_cast<size_t>(pair.u)]), static_cast<size_t>(choice[v])) /
                        micro_batches_;
    layer.forward += cost / 2;
    layer.backward += cost / 2;
  }
  return layer;
}

SimStage SimulatedLayers::stage(const std::vector<int32_t>& choice) {
  SimStage stage;
  for (size_t v = 0; v < graph_.vertices.size(); ++v) stage.layers.push_back(layer(choice, v));
  return stage;
}

SimStage simulated_stage(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                         const CostModel& model, int64_t micro_batches) {
  return SimulatedLayers(graph, tables, model, micro_batches).stage(choice);
}

}  // namespace pase
