#pragma once
// The validated computation graph the cost model and solver work on: vertices
// in topological order with inferred shapes, one edge per tensor between two
// vertices. Graph algorithms build the Boost.Graph view they need where they
// run (component_count in build_graph.cc).
#include <map>
#include <string>
#include <vector>

#include "graphs/graph_file.h"
#include "base/shape.h"

namespace pase {

/// The kind of a vertex: one per line of graphs/ops/op_list.h.
enum class OpKind {
#define PASE_OP(kind, definition) kind,
#include "graphs/ops/op_list.h"
#undef PASE_OP
};

/// Where an input tensor comes from: a vertex output, or an external tensor (vertex == -1).
struct TensorSource {
  int vertex = -1;
  int port = 0;
};

struct VertexInput {
  std::string ref;  ///< as written: "conv1", "qkv:1", "image"; "x/ravel" for the inner reshape tensor
  TensorSource source;
  Shape shape;
  bool parameter = false;  ///< an external tensor the graph lists under `parameters` (a trainable weight)
};

/// Megatron-LM's sequence parallelism on a tensor-parallel GEMM
/// (graphs/sequence_parallel.h): where its partial sums and its input meet
/// the norms, residual adds and dropouts that run split over the sequence.
enum class SequenceParallel {
  None,
  ScatterOutput,  ///< row-parallel: reduce-scatters its output over the sequence (all-gathers in backward)
  GatherInput,    ///< column-parallel: all-gathers its sequence-split input (reduce-scatters its gradient)
};

/// A parameter a vertex applies elementwise to its output 0 (a bias, a scale).
struct PointwiseWeight {
  std::string name;
  Shape shape;
  int axis = 0;  ///< the output axis of shape[0]; each dimension is 1 or the output's extent
};

/// One vertex; attributes are normalised (axes non-negative, pairs expanded, defaults filled).
struct Vertex {
  std::string name;  ///< a reshape node gives "NAME/ravel" and "NAME"
  std::string op;    ///< the op name of the file
  OpKind kind = OpKind::Elementwise;
  int64_t cutoff = 4;
  std::vector<VertexInput> inputs;
  std::vector<Shape> outputs;
  int64_t pointwise = 0;
  int64_t units = 0, vocab = 0, dim = 0, layers = 0;
  int64_t groups = 1;  ///< conv2d: channel groups (depthwise: groups = channels)
  int64_t gates = 4;   ///< lstm: gate blocks per unit (LSTM 4, GRU 3)
  int64_t input_size = 0;  ///< lstm: the input's features (units unless set)
  int64_t directions = 1;  ///< lstm: 2 when bidirectional
  int64_t k = 0;       ///< topk: how many to keep; scatter_nd: coordinates per index
  int axis = 0;
  std::vector<int> axes;
  bool keepdims = false;
  std::vector<int> perm;
  std::string equation;  ///< einsum; matmul and embedding get an equivalent one
  Shape filter;
  HeightWidth stride{1, 1}, padding{0, 0}, window{0, 0}, dilation{1, 1};
  bool weight_kn = false;  ///< fc: the model holds its weight [K, N] (`weight_layout` "kn"), not [N, K]
  std::string weight_layout;  ///< conv2d: "ncrs" or "ncr"; lstm: "stacked", "onnx" or "torch" (how the model holds its weights)
  bool weight_bias = false;   ///< lstm: its "onnx" or "torch" weights include the biases
  std::vector<std::string> weight_names;  ///< the node's `weights`: one per op-owned weight, or empty (NODE/weight)
  std::vector<PointwiseWeight> pointwise_weights;
  /// Set by a training setup, never by the file (docs/training.md): the layer
  /// does not keep its outputs from forward to backward and runs its forward
  /// again during backward.
  bool recompute = false;
  /// Set by a training setup or a strategy file's layer: the ZeRO stage of
  /// this layer's weights (0..3); -1: the training setup's stage.
  int zero = -1;
  /// Set by a training setup: the vertex makes or normalises attention scores
  /// inside a fused attention kernel (graphs/attention.h): its outputs are
  /// neither kept nor written to memory.
  bool fused_scores = false;
  /// Set by the Megatron baseline under sequence parallelism, or by a
  /// strategy file's layer: how the layer meets the sequence-split ops.
  SequenceParallel sequence_parallel = SequenceParallel::None;
};

/// One tensor from a producer output to a consumer input.
struct TensorEdge {
  int src = 0, src_port = 0;
  int dst = 0, dst_port = 0;
};

struct Graph {
  std::string name;
  std::string source;  ///< file name for messages
  std::vector<Vertex> vertices;  ///< topological order
  std::vector<TensorEdge> edges;
  std::vector<std::string> parameters;  ///< external tensors that are trainable weights, in file order
  /// Weights the model's checkpoint holds with neighbouring dimensions merged
  /// (graphs/checkpoint_shapes.h): the checkpoint's shape by weight name.
  std::map<std::string, Shape> checkpoint_shapes;
  std::vector<ReplacedNodeV1> replaced;  ///< source-model nodes a lenient import replaced by pass-throughs

  [[nodiscard]] int find_vertex(const std::string& vertex_name) const;  ///< -1 if absent
  [[nodiscard]] std::vector<std::string> vertex_names() const;       ///< in vertex order (how solvers name them)
  [[nodiscard]] int component_count() const;                            ///< weakly connected components
};

/// Validates references, cycles and shapes, and lowers reshape into ravel/unravel.
[[nodiscard]] Graph build_graph(const GraphFileV1& file, const std::string& source);

/// read_graph_file + build_graph.
[[nodiscard]] Graph load_graph(const std::string& path);

}  // namespace pase
