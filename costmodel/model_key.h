#pragma once
// Keys that let repeated layers be priced once (build_cost_tables).
#include <string>

#include "graphs/vertex_model.h"

namespace pase {

/// Bytes that identify a model: equal keys if and only if the models are
/// equal, field by field. Prices depend only on the model (and the cutoff,
/// which build_cost_tables keys separately).
[[nodiscard]] std::string model_key(const VertexModel& model);

}  // namespace pase
