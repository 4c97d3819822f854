#pragma once
// How one vertex is parallelised: its iteration domain, which dimensions may
// be split, how a configuration splits each input, output and weight tensor,
// and the parameters of the work a configuration leaves each device. Each op
// builds its own (graphs/ops/); cost models read it and never the op.
#include <cstdint>
#include <string>
#include <vector>

#include "graphs/graph.h"
#include "base/shape.h"

namespace pase {

/// For each tensor dimension, the domain dimensions whose split counts multiply
/// to give that dimension's split (empty list: never split).
using SplitMap = std::vector<std::vector<int>>;

/// A weight the op owns (fc's matrix, conv's filter): not an input of the
/// graph file, but held, updated and all-reduced by the devices.
struct WeightTensor {
  std::string role;  ///< "weight", "filter", "table"
  Shape shape;
  SplitMap split;    ///< how its dimensions follow the domain
};

/// Per-op numbers the op's work description reads (graphs/layer_work.h).
struct WorkParams {
  std::vector<int> batch, m, n, k;      ///< GEMM roles as domain dimension indices
  double n_scale = 1.0, k_scale = 1.0;  ///< lstm: n = 4U, k = 2U over domain extents U
  double pointwise = 0.0;
  /// The GEMM's B operand (k x n) is a trainable weight: an op-owned weight, or
  /// an einsum's or matmul's second input that the graph lists under `parameters`.
  bool weight_operand = false;
  int axis = 0;                                          ///< norm, softmax
  std::vector<int> axes;                                 ///< reduce_mean
  double in_h = 0, in_w = 0, window_r = 0, window_s = 0;  ///< pool2d halo; in_h, in_w: conv2d's input too
};

// model_key (costmodel/model_key.cc) writes every field of these structs: a
// field added here must be added there, or vertices that differ in it would
// share prices.
struct VertexModel {
  OpKind kind = OpKind::Elementwise;  ///< whose work description prices it
  std::string letters;                ///< one letter per domain dimension ("bchwrsn")
  Shape domain;
  std::vector<char> splittable;   ///< 0: only split 1
  bool contiguous_only = false;   ///< reshape halves: row-major contiguous splits only
  std::vector<SplitMap> inputs;   ///< per input port
  std::vector<SplitMap> outputs;  ///< per output port
  std::vector<WeightTensor> weights;
  WorkParams work;
  /// Runs its forward again during backward instead of keeping its outputs (Vertex::recompute).
  bool recompute = false;
  /// ZeRO stage of its weights; -1: the training setup's (Vertex::zero).
  int zero = -1;
  /// Its outputs are attention scores inside a fused kernel (Vertex::fused_scores).
  bool fused_scores = false;
  /// Megatron's sequence parallelism (Vertex::sequence_parallel): a
  /// ScatterOutput layer's output is split over the sequence on its
  /// contraction's ways too; a GatherInput layer's input gradient is summed
  /// by the edge from its sequence-split input, not by an all-reduce.
  SequenceParallel sequence_parallel = SequenceParallel::None;
};

/// Builds the model of a validated vertex (through its op's definition).
[[nodiscard]] VertexModel build_vertex_model(const Vertex& vertex);

/// How a configuration splits one tensor of the vertex.
void tensor_split(const SplitMap& map, const int32_t* config, int64_t* split_out);

/// Per-device extent d / c of domain dimension `d` (real division).
[[nodiscard]] inline double per_device(const VertexModel& model, const int32_t* config, int d) {
  return static_cast<double>(model.domain[d]) / static_cast<double>(config[d]);
}

}  // namespace pase
