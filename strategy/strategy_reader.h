#pragma once
// Matching a read strategy file (strategy_document.h) to a graph: the
// configuration index of every vertex, or a one-line error naming the file,
// the layer and the field.
#include <cstdint>
#include <vector>

#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "strategy/strategy_document.h"

namespace pase {

/// Matches layers to vertices by name and each config to a valid configuration.
/// InputError naming the file, the layer and the field on any mismatch.
[[nodiscard]] std::vector<int32_t> strategy_choice(const StrategyDocument& file, const Graph& graph,
                                                   const CostTables& tables);

}  // namespace pase
