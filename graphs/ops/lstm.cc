// lstm: x = (b, s, I), `layers` stacked layers of `units` = U, `gates`
// gate blocks per unit (4 for an LSTM, 3 for a GRU), `directions` D = 1 or
// 2 (bidirectional), `input_size` I = U by default. Domain "lsbnk" =
// (L, s, b, D·U, I) with the sequence unsplittable: per layer and step a
// GEMM of the (b, I + U) input-and-state by the (I + U, gates·D·U) gate
// weights, plus moving the (b, D·U) state from its output split to the next
// step's input split. The directions are folded into n: the output's
// features are the forward direction's U, then the backward one's, and
// splitting n by 2 runs the two recurrences on different devices; both
// directions do the same GEMMs, so the work is the one GEMM with n = D·U.
// k is the input's features; the state's U are priced through k_scale
// (I + U) / I (2 when I = U). A GRU's reset gate scales the state before
// (ONNX's linear_before_reset = 0) or after (= 1, PyTorch) its candidate
// GEMM; the GEMMs are the same either way, and its 3 pointwise ops per
// gate output stand in for the gate arithmetic as the LSTM's do.
//
// The weights are listed as the model holds them (`weight_layout`):
// "stacked" (the default) one [L, I + U, D·gates·U]; "onnx" ONNX's W
// [D, gates·U, I], R [D, gates·U, U] and, with 3 names, B [D, 2·gates·U];
// "torch" PyTorch's per direction weight_ih [gates·U, I], weight_hh
// [gates·U, U] and, with 4 names per direction, bias_ih and bias_hh
// [gates·U]. The last two need layers = 1 (one ONNX node is one layer).
#include "graphs/ops/ops.h"
#include "graphs/redistribution_words.h"

namespace pase::ops {
namespace {

enum Dim { kLayers = 0, kSteps = 1, kBatch = 2, kUnitsOut = 3, kUnitsIn = 4 };

// How many `weights` names list the biases too ("onnx": W, R, B; "torch":
// weight_ih, weight_hh, bias_ih, bias_hh per direction); with fewer, the
// matrices alone are listed. "stacked" has no biases.
size_t names_with_biases(const std::string& layout, int64_t directions) {
  if (layout == "onnx") return 3;
  if (layout == "torch") return 4 * static_cast<size_t>(directions);
  return 0;
}

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  node.expect_rank(0, 3, "batch, sequence, features");
  const Shape& x = node.input(0);
  v.units = node.required(node.node().units, "units");
  v.layers = node.required(node.node().layers, "layers");
  v.gates = node.node().gates.value_or(4);
  v.input_size = node.node().input_size.value_or(v.units);
  v.directions = node.node().directions.value_or(1);
  if (v.directions != 1 && v.directions != 2)
    node.fail("directions", "expected 1 or 2, got " + std::to_string(v.directions));
  if (x[2] != v.input_size) {
    if (!node.node().input_size)
      node.fail("units", "shape mismatch: units " + std::to_string(v.units) + " but '" + node.node().inputs[0] + "' has " +
                             std::to_string(x[2]) + " features (shape " + shape_to_string(x) + ")");
    node.fail("input_size", "shape mismatch: input_size " + std::to_string(v.input_size) + " but '" +
                                node.node().inputs[0] + "' has " + std::to_string(x[2]) + " features (shape " +
                                shape_to_string(x) + ")");
  }
  v.weight_layout = node.node().weight_layout.value_or("stacked");
  // A stacked layer reads the D·U features of the layer below, not I.
  if (v.layers != 1 && (v.input_size != v.units || v.directions != 1 || v.weight_layout != "stacked"))
    node.fail("layers", "expected 1 with an input_size other than units, 2 directions or the weight_layout \"onnx\" "
                        "or \"torch\" (one layer per node), got " + std::to_string(v.layers));
  const size_t names = node.node().weights ? node.node().weights->size() : 0;
  v.weight_bias = names > 0 && names == names_with_biases(v.weight_layout, v.directions);
  const int64_t gate_units = node.mul("units", v.gates, v.units);
  // The gate weights, [layers, I + U, D·gates·U] (model below).
  node.check_weight("units", {v.layers, node.add("input_size", v.input_size, v.units), node.mul("units", v.directions, gate_units)});
  v.outputs = {node.checked("units", {x[0], x[1], node.mul("directions", v.directions, v.units)})};
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  const int64_t gate_units = v.gates * v.units;
  VertexModel m;
  m.kind = v.kind;
  m.letters = "lsbnk";
  m.domain = {v.layers, x[1], x[0], v.directions * v.units, v.input_size};
  m.splittable = {1, 0, 1, 1, 1};
  m.inputs = {{{kBatch}, {kSteps}, {kUnitsIn}}};
  m.outputs = {{{kBatch}, {kSteps}, {kUnitsOut}}};
  const SplitMap matrix = {{kUnitsOut}, {kUnitsIn}}, vector = {{kUnitsOut}};
  if (v.weight_layout == "onnx") {
    m.weights = {{"W", {v.directions, gate_units, v.input_size}, {{}, {kUnitsOut}, {kUnitsIn}}},
                 {"R", {v.directions, gate_units, v.units}, {{}, {kUnitsOut}, {kUnitsIn}}}};
    if (v.weight_bias) m.weights.push_back({"B", {v.directions, 2 * gate_units}, {{}, {kUnitsOut}}});
  } else if (v.weight_layout == "torch") {
    for (int64_t d = 0; d < v.directions; ++d) {
      m.weights.push_back({"weight_ih", {gate_units, v.input_size}, matrix});
      m.weights.push_back({"weight_hh", {gate_units, v.units}, matrix});
      if (v.weight_bias) {
        m.weights.push_back({"bias_ih", {gate_units}, vector});
        m.weights.push_back({"bias_hh", {gate_units}, vector});
      }
    }
  } else {
    m.weights = {{"weight", {v.layers, v.input_size + v.units, v.directions * gate_units}, {{kLayers}, {kUnitsIn}, {kUnitsOut}}}};
  }
  m.work.batch = {kLayers};
  m.work.m = {kSteps, kBatch};
  m.work.n = {kUnitsOut};
  m.work.k = {kUnitsIn};
  m.work.n_scale = static_cast<double>(v.gates);
  // (I + U) / I is exactly 2 when I = U.
  m.work.k_scale = static_cast<double>(v.input_size + v.units) / static_cast<double>(v.input_size);
  m.work.pointwise = 3.0;
  return m;
}

void describe(const VertexModel& m, const int32_t* c, LayerWork& work) {
  describe_gemm(m, c, work);
  // Each step, each layer: the (b, D·U) hidden state is produced split (cb, cn)
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
  return OpDefinition("lstm", OpKind::Lstm)
      .fields({"units", "layers"}, {"gates", "input_size", "directions", "weights", "weight_layout"})
      .infers(infer)
      .models(model)
      .works(describe)
      .batch_role([](const Vertex&, const VertexModel&) { return static_cast<int>(kBatch); });
}

}  // namespace pase::ops
