#pragma once
// The strategy in one line, in the words practitioners configure a run with
// (docs/plans.md, "The plan in one line"): how the layers that multiply by a
// weight (GEMMs, embedding tables) split into data, sequence and tensor
// parallelism (and, placed on a mesh of nodes, which
// part of each runs inside a node), then the training techniques.
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "costmodel/training_setup.h"
#include "graphs/graph.h"
#include "plans/plan.h"

namespace pase {

/// "tensor 8 (inside nodes) x data 8 (across nodes), ZeRO-1, recompute full,
/// 4 micro-batches"; when the weight GEMMs differ, "mixed: 3 patterns over
/// 224 weight GEMMs (tensor 8 x data 8 on 160; ...)". `plan` (may be
/// null) places the splits on nodes; without it, or on a mesh inside one
/// node, nothing is said of nodes.
[[nodiscard]] std::string plan_summary(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                                       const TrainingSetup& setup, const Plan* plan);

}  // namespace pase
