#pragma once
// The `pase-graph` v1 file as plain data (a DTO): read with full field-level
// validation, written in a stable, diff-friendly layout. Semantic checks
// (references, cycles, shapes) happen when the DTO becomes a Graph.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/shape.h"

namespace pase {

/// A `stride`/`padding`/`window` value: one number or an [h, w] pair.
struct HeightWidth {
  int64_t h = 0;
  int64_t w = 0;
  bool operator==(const HeightWidth& other) const { return h == other.h && w == other.w; }
  bool operator!=(const HeightWidth& other) const { return !(*this == other); }
};

/// A trainable parameter a node applies elementwise to its output 0 (a bias,
/// a scale): not an input, but listed among the layer's weights.
struct PointwiseWeightV1 {
  std::string name;
  Shape shape;                  ///< as the model holds it
  std::optional<int64_t> axis;  ///< the output axis of shape[0]; default: the last axes (broadcasting)
  bool operator==(const PointwiseWeightV1& other) const {
    return name == other.name && shape == other.shape && axis == other.axis;
  }
};

/// One node as written in the file; unset optionals were absent.
struct NodeV1 {
  std::string name;
  std::string op;
  std::vector<std::string> inputs;
  std::optional<int64_t> cutoff;
  std::optional<std::vector<Shape>> outputs;
  std::optional<int64_t> pointwise;
  std::optional<int64_t> units, vocab, dim, layers, axis;
  std::optional<int64_t> groups, gates;  ///< conv2d: channel groups; lstm: gates per unit (4 LSTM, 3 GRU)
  std::optional<int64_t> input_size, directions;  ///< lstm: the input's features (units); 1 or 2 directions
  std::optional<int64_t> k;              ///< topk: how many to keep
  std::optional<int64_t> depth;          ///< one_hot: entries of the new axis
  std::optional<std::string> equation;
  std::optional<Shape> filter, shape;
  std::optional<HeightWidth> stride, padding, window, dilation;
  std::optional<std::vector<int64_t>> axes, perm;
  std::optional<std::vector<int64_t>> parts;  ///< sizes; one entry when written as a count
  bool parts_is_count = false;                ///< `parts` was a single number (equal parts)
  std::optional<bool> keepdims;
  std::optional<std::vector<std::string>> weights;  ///< names of the op's own weights (conv2d, fc, embedding, lstm)
  std::optional<std::string> weight_layout;  ///< how the model holds the op's weights: fc "nk" (PyTorch's Linear) or "kn"; conv2d "ncrs" or "ncr"; lstm "stacked", "onnx" or "torch"
  std::optional<std::vector<PointwiseWeightV1>> pointwise_weights;
};

/// A node of the source model that an import replaced by a pass-through
/// (`pase import --lenient`), with its share of the model's estimated FLOP.
struct ReplacedNodeV1 {
  std::string op, name;
  double flop_share = 0;
};

/// A whole graph file.
struct GraphFileV1 {
  std::string name;
  int64_t cutoff = 4;
  std::vector<std::pair<std::string, Shape>> tensors;  ///< in file order
  std::vector<std::string> parameters;  ///< external tensors that are trainable weights
  /// `checkpoint_shapes`: per weight declared in more dimensions than the
  /// model's checkpoint holds it in, the checkpoint's shape (in file order).
  std::vector<std::pair<std::string, Shape>> checkpoint_shapes;
  std::vector<NodeV1> nodes;
  std::vector<ReplacedNodeV1> replaced;  ///< `replaced`: what a lenient import left out
};

/// Parses and field-checks JSON text; `source` names the file in errors.
[[nodiscard]] GraphFileV1 parse_graph_file(const std::string& text, const std::string& source);

/// Reads and parses a file; a missing file is an InputError.
[[nodiscard]] GraphFileV1 read_graph_file(const std::string& path);

/// Serialises a graph: one tensor and one node per line, fields in a fixed order.
[[nodiscard]] std::string write_graph_file(const GraphFileV1& graph);

}  // namespace pase
