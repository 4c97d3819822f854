// lstm: x = (b, s, U), `layers` stacked layers of `units` = U, `gates`
// gate blocks per unit (4 for an LSTM, 3 for a GRU). Domain "lsbnk" =
// (L, s, b, U, U) with the sequence unsplittable: per layer and step a GEMM
// of the (b, 2U) input-and-state by the (2U, gates·U) gate weights, plus
// moving the (b, U) state from its output split to the next step's input
// split. A GRU's reset gate scales the state before its candidate GEMM; the
// work is the same GEMM, and its 3 pointwise ops per gate output stand in
// for the gate arithmetic as the LSTM's do.
#include "graphs/ops/ops.h"
#include "graphs/redistribution_words.h"

namespace pase::ops {
namespace {

enum Dim { kLayers = 0, kSteps = 1, kBatch = 2, kUnitsOut = 3, kUnitsIn = 4 };

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  node.expect_rank(0, 3, "batch, sequence, features");
  const Shape& x = node.input(0);
  v.units = node.required(node.node().units, "units");
  v.layers = node.required(node.node().layers, "layers");
  v.gates = node.node().gates.value_or(4);
  if (x[2] != v.units)
    node.fail("units", "shape mismatch: units " + std::to_string(v.units) + " but '" + node.node().inputs[0] + "' has " +
                           std::to_string(x[2]) + " features (shape " + shape_to_string(x) + ")");
  // The gate weights, [layers, 2·units, gates·units] (model below).
  node.check_weight("units", {v.layers, node.mul("units", 2, v.units), node.mul("units", v.gates, v.units)});
  return same_shape_output(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  VertexModel m;
  m.kind = v.kind;
  m.letters = "lsbnk";
  m.domain = {v.layers, x[1], x[0], v.units, v.units};
  m.splittable = {1, 0, 1, 1, 1};
  m.inputs = {{{kBatch}, {kSteps}, {kUnitsIn}}};
  m.outputs = {{{kBatch}, {kSteps}, {kUnitsOut}}};
  m.weights = {{"weight", {v.layers, 2 * v.units, v.gates * v.units}, {{kLayers}, {kUnitsIn}, {kUnitsOut}}}};
  m.work.batch = {kLayers};
  m.work.m = {kSteps, kBatch};
  m.work.n = {kUnitsOut};
  m.work.k = {kUnitsIn};
  m.work.n_scale = static_cast<double>(v.gates);
  m.work.k_scale = 2.0;
  m.work.pointwise = 3.0;
  return m;
}

void describe(const VertexModel& m, const int32_t* c, LayerWork& work) {
  describe_gemm(m, c, work);
  // Each step, each layer: the (b, U) hidden state is produced split (cb, cn)
  // but the next step's GEMM needs it split (cb, ck).
  Shape state = {m.domain[kBatch], m.domain[kUnitsOut]};
  int64_t held[2] = {c[kBatch], c[kUnitsOut]};
  int64_t needed[2] = {c[kBatch], c[kUnitsIn]};
  double group = static_cast<double>(c[kBatch]) * std::max(c[kUnitsOut], c[kUnitsIn]);
  double times = static_cast<double>(m.domain[kLayers]) * static_cast<double>(m.domain[kSteps]);
  work.transfers.add({redistribution_words(state, held, needed), group, times, "lstm state"});
}

}  // namespace

OpDefinition lstm() {
  return OpDefinition("lstm", OpKind::Lstm).fields({"units", "layers"}, {"gates", "weights"}).infers(infer).models(model).works(describe)
      .batch_role([](const Vertex&, const VertexModel&) { return static_cast<int>(kBatch); });
}

}  // namespace pase::ops
