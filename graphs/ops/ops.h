#pragma once
// Every op's definition, one function each (graphs/ops/<family>.cc), as
// listed in graphs/ops/op_list.h.
#include "graphs/node_context.h"
#include "graphs/op_definition.h"
#include "graphs/ops/op_helpers.h"

namespace pase::ops {

#define PASE_OP(kind, definition) OpDefinition definition();
#include "graphs/ops/op_list.h"
#undef PASE_OP

/// concat, split, stack, unstack: the batch is dimension 1 when they work along dimension 0.
int batch_beside_axis(const Vertex& vertex, const VertexModel& model);

}  // namespace pase::ops
