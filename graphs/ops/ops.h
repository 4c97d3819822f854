#pragma once
// Every op family's definition, one function each (graphs/ops/<family>.cc);
// graphs/op_registry.cc lists them. A new op: one file here, one line in the
// registry's table, one declaration below.
#include "graphs/node_context.h"
#include "graphs/op_definition.h"
#include "graphs/ops/op_helpers.h"

namespace pase::ops {

OpDefinition fc();
OpDefinition einsum();
OpDefinition matmul();
OpDefinition embedding();
OpDefinition conv2d();
OpDefinition pool2d();
OpDefinition elementwise();
OpDefinition norm();
OpDefinition batchnorm();
OpDefinition softmax();
OpDefinition softmax_xent();
OpDefinition reduce_mean();
OpDefinition concat();
OpDefinition split();
OpDefinition reshape();
OpDefinition ravel();
OpDefinition transpose();
OpDefinition stack();
OpDefinition unstack();
OpDefinition lstm();

/// concat, split, stack, unstack: the batch is dimension 1 when they work along dimension 0.
int batch_beside_axis(const Vertex& vertex, const VertexModel& model);

}  // namespace pase::ops
