#include "graphs/layer_work.h"

#include "graphs/op_registry.h"

namespace pase {

GemmShape gemm_shape(const VertexModel& model, const int32_t* c) {
  const WorkParams& s = model.work;
  GemmShape g;
  g.n = s.n_scale;
  g.k = s.k_scale;
  g.pointwise = s.pointwise;
  for (int d : s.batch) g.batch *= per_device(model, c, d);
  for (int d : s.m) g.m *= per_device(model, c, d), g.cm *= c[d];
  for (int d : s.n) g.n *= per_device(model, c, d), g.cn *= c[d];
  for (int d : s.k) g.k *= per_device(model, c, d), g.ck *= c[d];
  return g;
}

LayerWork describe_work(const VertexModel& model, const int32_t* config) {
  LayerWork work;
  const OpDefinition& op = op_definition(model.kind);
  if (op.describe_work) op.describe_work(model, config, work);
  return work;
}

}  // namespace pase
