#pragma once
// The trainable parameters each layer reads, as the strategy file lists them
// (docs/formats.md, "Strategy file"): the weights its op owns (conv2d's
// filter, fc's matrix, embedding's table, lstm's gate weights), the external
// tensors the graph lists under `parameters` that it reads, and the
// parameters it applies elementwise to its output (`pointwise_weights`:
// biases, scales). Information for whoever lays the model out; no cost model
// reads it.
#include <string>
#include <vector>

#include "graphs/graph.h"
#include "base/shape.h"
#include "graphs/vertex_model.h"

namespace pase {

struct LayerWeight {
  std::string name;  ///< as the model holds it: the node's `weights` name, NODE/weight, or the tensor's name
  Shape shape;       ///< as the model holds it
  SplitMap split;    ///< how its dimensions follow the vertex's domain
};

/// "NODE/weight": the name of an op-owned weight the node's `weights` does not name.
[[nodiscard]] std::string default_weight_name(const std::string& node, size_t index);

/// The name of the op-owned weight `index` of `vertex`: its node's `weights`
/// entry, or default_weight_name where the node names none.
[[nodiscard]] std::string owned_weight_name(const Vertex& vertex, size_t index);

/// The weights `vertex` reads, in that order: op-owned, parameter inputs, pointwise; each name once.
[[nodiscard]] std::vector<LayerWeight> layer_weights(const Vertex& vertex, const VertexModel& model);

/// Per tensor dimension, the letters of the domain dimensions it follows, major first ("" for none).
[[nodiscard]] std::vector<std::string> split_letters(const SplitMap& map, const std::string& letters);

}  // namespace pase
