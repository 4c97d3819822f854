#pragma once
// The table of ops: one line per op family, each defined in graphs/ops/.
#include <string>
#include <vector>

#include "graphs/op_definition.h"

namespace pase {

/// The definition of a vertex kind.
[[nodiscard]] const OpDefinition& op_definition(OpKind kind);

/// The definition of an op as named in graph files, or nullptr if unknown.
[[nodiscard]] const OpDefinition* find_op(const std::string& name);

/// Every op name graph files may use, sorted.
[[nodiscard]] const std::vector<std::string>& known_ops();

/// Whether the op accepts `field` (required or optional).
[[nodiscard]] bool op_takes_field(const OpDefinition& op, const std::string& field);

/// Domain index of the batch dimension: 0, except lstm 'b', einsum 'b' when present,
/// and the dim after an unsplittable axis 0 (stack, unstack, concat, split).
[[nodiscard]] int batch_dimension(const Vertex& vertex, const VertexModel& model);

}  // namespace pase
