#pragma once
// How one vertex is parallelised: its iteration domain, which dimensions may be
// split, how a configuration splits each input and output tensor, and the
// parameters of its layer cost. Derived once from the graph's op semantics.
#include <string>
#include <vector>

#include "graphs/graph.h"

namespace pase {

/// For each tensor dimension, the domain dimensions whose split counts multiply
/// to give that dimension's split (empty list: never split).
using SplitMap = std::vector<std::vector<int>>;

/// Parameters of a layer-cost formula of cost-model.md.
struct LayerCostSpec {
  enum class Kind { Zero, Gemm, Pool, Elementwise, Norm, Softmax, SoftmaxXent, ReduceMean };
  Kind kind = Kind::Zero;
  std::vector<int> batch, m, n, k;  ///< GEMM roles as domain dimension indices
  double n_scale = 1.0, k_scale = 1.0;  ///< lstm: n = 4U, k = 2U over domain extents U
  double pointwise = 0.0;
  bool lstm_state_exchange = false;     ///< lstm's extra L*s*r*A term
  int axis = 0;                         ///< norm, softmax
  std::vector<int> axes;                ///< reduce_mean
  double in_h = 0, in_w = 0, window_r = 0, window_s = 0;  ///< pool2d halo
};

// model_key (vertex_model.cc) writes every field of these two structs: a
// field added here must be added there, or vertices that differ in it would
// share prices.
struct VertexModel {
  std::string letters;            ///< one letter per domain dimension ("bchwrsn")
  Shape domain;
  std::vector<char> splittable;   ///< 0: only split 1
  bool contiguous_only = false;   ///< reshape halves: row-major contiguous splits only
  std::vector<SplitMap> inputs;   ///< per input port
  std::vector<SplitMap> outputs;  ///< per output port
  LayerCostSpec cost;
};

/// Builds the model of a validated vertex.
[[nodiscard]] VertexModel build_vertex_model(const Vertex& vertex);

/// Bytes that identify a model: equal keys if and only if the models are
/// equal, field by field. Lets repeated layers be priced once.
[[nodiscard]] std::string model_key(const VertexModel& model);

}  // namespace pase
