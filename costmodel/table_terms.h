#pragma once
// A vertex's cost at one of its configurations as its parts, priced as the
// tables priced it (cost_tables.h): where they hold each configuration's
// layout on a mesh's nodes, each collective over the links its axes cross
// (CostModel::layer_terms_on_nodes), else the model's plain terms. What
// explain lists and what the simulator schedules come from here, so both
// add up to the tables' own vertex cost.
#include <cstddef>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/cost_terms.h"

namespace pase {

/// The terms of vertex `v` at its configuration `config` (an index into tables.configs[v]).
[[nodiscard]] CostTerms table_terms(const CostTables& tables, const CostModel& model, size_t v, size_t config);

}  // namespace pase
