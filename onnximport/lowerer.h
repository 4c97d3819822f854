#pragma once
// Lowering an inferred ONNX graph onto the pase vocabulary (internal to the
// importer; lower_graph.h is its entry point). The Lowerer holds what every
// lowering shares: each tensor's pase reference, names, weights and the
// nodes written so far. The lowerings themselves live by op family in
// onnximport/lowerings/, each file with its table from ONNX op type to
// lowering (lowering_table.h); the dispatch (lower) and the shared helpers in
// lowerer.cc, what --lenient replaces in lenient.cc, the Slices joined into
// one split in split_groups.cc.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "base/error.h"
#include "graphs/graph_file.h"
#include "onnximport/fold_constants.h"
#include "onnximport/import_onnx.h"
#include "onnximport/norm_pattern.h"
#include "onnximport/tensor_roles.h"

namespace pase {

// Where an ONNX activation lives in the pase graph.
struct Ref {
  std::string ref;   // "node", "node:k" or an external tensor
  int node = -1;     // index into the file's nodes, or -1 (external tensor or a port k > 0)
  HeightWidth pad;   // a Pad waiting to be folded into the consuming Conv or Pool
};

// Several Slices (or scalar Gathers) of one tensor along one axis become one
// split (unstack) vertex; each member reads one of its outputs.
struct Group {
  int first = -1;                  // node index that emits the vertex
  std::string input;
  int64_t axis = 0;
  std::vector<int64_t> parts;      // split sizes; empty for an unstack
  std::map<int, int> port_of;      // node index -> output port
  std::set<int> identity;          // members that take the whole axis
};

class Lowerer {
 public:
  Lowerer(const onnx::GraphProto& graph, const TensorFacts& facts, const std::set<std::string>& data_inputs,
          const std::map<std::string, ParameterView>& parameters, const OnnxImportOptions& options,
          const std::string& source, int64_t opset);

  OnnxImport run();

  // --- the lowerings: one per ONNX op family, each file in onnximport/lowerings/
  // with its table from op type to lowering (lowering_table.h); `slots` are
  // the positions of the node's activation inputs (never empty).
  // convolution.cc
  void lower_conv(const onnx::NodeProto& node, const std::vector<int>& slots);  // Conv
  void lower_pool(const onnx::NodeProto& node, const std::vector<int>& slots);  // MaxPool, AveragePool
  void lower_global_pool(const onnx::NodeProto& node, const std::vector<int>& slots);  // GlobalAveragePool, GlobalMaxPool
  void lower_pad(const onnx::NodeProto& node, const std::vector<int>& slots);  // Pad (folded into the Conv or Pool it feeds)
  // matmul.cc
  void lower_gemm(const onnx::NodeProto& node, const std::vector<int>& slots);  // Gemm
  void lower_matmul(const onnx::NodeProto& node, const std::vector<int>& slots);  // MatMul
  // einsum.cc
  void lower_einsum(const onnx::NodeProto& node, const std::vector<int>& slots);  // Einsum
  // elementwise.cc
  void lower_binary(const onnx::NodeProto& node, const std::vector<int>& slots);  // Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mod, Where, comparisons and logic
  void lower_pointwise(const onnx::NodeProto& node, const std::vector<int>& slots);  // Relu, Sigmoid, Gelu, ... (folded into the producer's pointwise count)
  void lower_dropout(const onnx::NodeProto& node, const std::vector<int>& slots);  // Dropout
  void lower_cast_like(const onnx::NodeProto& node, const std::vector<int>& slots);  // CastLike (a Cast)
  // normalization.cc
  void lower_batchnorm(const onnx::NodeProto& node, const std::vector<int>& slots);  // BatchNormalization
  void lower_layernorm(const onnx::NodeProto& node, const std::vector<int>& slots);  // LayerNormalization
  // data_movement.cc
  void lower_reshape(const onnx::NodeProto& node, const std::vector<int>& slots);  // Reshape, Flatten, Squeeze, Unsqueeze, Expand
  void lower_tile(const onnx::NodeProto& node, const std::vector<int>& slots);  // Tile (of size-1 axes: an expand)
  void lower_transpose(const onnx::NodeProto& node, const std::vector<int>& slots);  // Transpose
  void lower_concat(const onnx::NodeProto& node, const std::vector<int>& slots);  // Concat
  void lower_split(const onnx::NodeProto& node, const std::vector<int>& slots);  // Split
  void lower_slice(const onnx::NodeProto& node, const std::vector<int>& slots);  // Slice (strided; step-1 cuts join a split)
  void lower_gather(const onnx::NodeProto& node, const std::vector<int>& slots);  // Gather (an embedding, or an index)
  void lower_gather_nd(const onnx::NodeProto& node, const std::vector<int>& slots);  // GatherND (experts at routed ids)
  // reduction.cc
  void lower_reduce_mean(const onnx::NodeProto& node, const std::vector<int>& slots);  // ReduceMean, ReduceSum
  void lower_softmax(const onnx::NodeProto& node, const std::vector<int>& slots);  // Softmax, LogSoftmax
  // index.cc
  void lower_argmax(const onnx::NodeProto& node, const std::vector<int>& slots);  // ArgMax, ArgMin
  void lower_topk(const onnx::NodeProto& node, const std::vector<int>& slots);  // TopK
  void lower_one_hot(const onnx::NodeProto& node, const std::vector<int>& slots);  // OneHot
  void lower_cumsum(const onnx::NodeProto& node, const std::vector<int>& slots);  // CumSum
  void lower_scatter_elements(const onnx::NodeProto& node, const std::vector<int>& slots);  // ScatterElements
  void lower_scatter_nd(const onnx::NodeProto& node, const std::vector<int>& slots);  // ScatterND
  // recurrent.cc
  void lower_rnn(const onnx::NodeProto& node, const std::vector<int>& slots);  // LSTM, GRU
  // control_flow.cc
  void lower_control_flow(const onnx::NodeProto& node, const std::vector<int>& slots);  // Loop, If, Scan (refused)

 private:
  // --- errors ------------------------------------------------------------------
  [[noreturn]] void fail(const onnx::NodeProto& node, const std::string& message) const;

  struct Unsupported {
    std::string op, name, reason;
    int node = -1;
  };

  // --- what --lenient leaves out -------------------------------------------------
  // A forward-pass FLOP estimate of one ONNX node, from its shapes: GEMMs and
  // convolutions 2·MACs, recurrent layers their gate GEMMs, everything else
  // one operation per output element. Only shares of the total are reported.
  double estimated_flop(const onnx::NodeProto& node) const;

  // The share of the model's estimated FLOP each replaced node holds; refused
  // above kLenientFlopShare unless forced.
  void account_replacements();

  // The error for the unsupported nodes, with the option that imports them anyway.
  OptionWords unsupported_message() const;

  // --- tensors -----------------------------------------------------------------
  bool is_active(const std::string& name) const { return !name.empty() && activations_.count(name); }

  // The graph input that `tensor` is, itself or through views that keep its
  // shape (today's exporters gather embeddings at input_ids.view(-1, seq)).
  bool data_input_behind(const std::string& tensor) const;

  bool is_used(const std::string& name) const { return consumers_.count(name) || graph_outputs_.count(name); }

  const Shape& shape_of(const onnx::NodeProto& node, const std::string& tensor) const;

  // The name of the pase node that lowers `node`: its own the first time, a
  // fresh one when it lowers to several nodes. Every ONNX node name is in
  // used_names_ from the start, so a fresh name never takes another's.
  std::string claim_name(const onnx::NodeProto& node);

  std::string unique_name(const std::string& wanted);

  // The pase reference of a tensor: an activation's Ref, or an external tensor (data inputs, weights).
  Ref ref_of(const onnx::NodeProto& node, const std::string& tensor);

  // --- weights ---------------------------------------------------------------------
  // The external tensor that stands for a parameter as the model holds it:
  // named after it and listed under "parameters", one for all its views.
  std::string parameter_tensor(const onnx::NodeProto& node, const ParameterView& parameter);

  // The model's name of the parameter `tensor` is, when the op reads it as the model holds it.
  std::optional<std::string> parameter_name(const std::string& tensor) const;

  // `weights` of a conv2d or embedding: the name of the parameter it owns.
  void name_weight(NodeV1& n, const std::string& tensor) const;

  // `weights` and `weight_layout` of an fc whose matrix operand is `tensor`,
  // read as [N, K] when `read_nk` (Gemm's transB = 1), else as [K, N]. The
  // parameter may be held either way, the operand being it or its Transpose:
  // the fc's weight keeps the parameter's name and the layout it is held in.
  void name_fc_weight(NodeV1& n, const std::string& tensor, bool read_nk) const;

  // A parameter applied elementwise to an output of shape `out` (a bias, a
  // scale), lined up from `axis` or with its last axes. Tensors with more
  // than one dimension above 1 (masks) are not biases: nullopt.
  std::optional<PointwiseWeightV1> as_pointwise_weight(const std::string& tensor, const Shape& out,
                                                       std::optional<int64_t> axis) const;

  // A parameter that node `index` applies elementwise to its output 0, listed
  // in its `pointwise_weights` (once, and not when it is the node's own weight).
  void add_pointwise_weight(int index, const std::string& tensor, std::optional<int64_t> axis);

  int last_node() const { return static_cast<int>(result_.graph.nodes.size()) - 1; }

  void alias(const std::string& out, const Ref& in) { refs_[out] = in; }

  void fold(const std::string& out, const Ref& in, int pointwise);

  // Appends a node with the ONNX node's name and its outputs' shapes as claims.
  NodeV1& emit(const onnx::NodeProto& node, const std::string& op, std::vector<std::string> inputs,
               const std::vector<std::string>& outputs);

  // Refs of the activation inputs, with their positions; weights are skipped.
  std::vector<int> active_inputs(const onnx::NodeProto& node) const;

  // A Dropout whose ratio is a constant 0 (the `ratio` attribute before
  // opset 12, input 1 since): frameworks hand the input back unchanged, so
  // it adds no work (Swin-T's attention and projection dropouts).
  bool drops_nothing(const onnx::NodeProto& node) const;

  std::optional<std::vector<int64_t>> input_ints(const onnx::NodeProto& node, int k) const;

  // --- unsupported --------------------------------------------------------------
  void unsupported(const onnx::NodeProto& node, const std::string& reason);

  int node_index(const onnx::NodeProto& node) const;

  // --lenient: one zero-cost vertex per used output that keeps every shape valid.
  void pass_through(const onnx::NodeProto& node, const std::string& reason);

  // --- groups of slices -----------------------------------------------------------
  void find_groups();

  // (axis, [begin, end)) of a step-1 Slice that cuts one axis; nullopt otherwise.
  std::optional<std::pair<int64_t, std::pair<int64_t, int64_t>>> slice_range(const onnx::NodeProto& node,
                                                                            const Shape& shape) const;

  void lower_group_member(int i);

  std::string emit_group(const onnx::NodeProto& node, const Group& g, const Ref& in);

  // --- dispatch ------------------------------------------------------------------
  // Lowers node i: a decomposed norm, a member of a split, or by its op type's
  // lowering; an op type without one is unsupported.
  void lower(int i);

  void lower_norm(const onnx::NodeProto& node, const NormMatch& m);

  // Symmetric padding that gives ONNX's output extent with pase's floor formula.
  static std::optional<int64_t> fit_padding(int64_t in, int64_t window, int64_t stride, int64_t out, int64_t begin,
                                            int64_t end);

  // Stride, padding and window of a 2-D Conv/Pool, fitted to ONNX's output shape.
  std::optional<std::string> window_geometry(const onnx::NodeProto& node, const Shape& in, const Shape& out,
                                             const Shape& window, const HeightWidth& extra, HeightWidth& stride,
                                             HeightWidth& padding, HeightWidth* dilation = nullptr) const;

  // A 1-D Conv over x [b, C, L]: a conv2d over [b, C, L, 1] with an R x 1
  // filter, between reshapes NAME/in and NAME/out.
  void lower_conv1d(const onnx::NodeProto& node, const Ref& x, const Shape& weight, int64_t group);

  // Einsum letters for a MatMul/Gemm of shapes a and b (batch dims must match exactly, no broadcasting).
  std::optional<std::string> matmul_equation(const Shape& a, const Shape& b, bool trans_a, bool trans_b) const;

  // An einsum vertex for a MatMul or Gemm; false when unsupported.
  bool lower_einsum_matmul(const onnx::NodeProto& node, bool trans_a, bool trans_b);

  // `x` broadcast to `out` (an expand vertex NAME/expand), then the
  // elementwise operation on it (NAME).
  void emit_expand_then_elementwise(const onnx::NodeProto& node, const Ref& x, const Shape& out);

  // A vertex the importer adds around a node's own (NAME/in, NAME/out), with its one output's shape.
  NodeV1& push_helper(const std::string& wanted, const std::string& op, const std::string& input, const Shape& out);

  // `weights` and `weight_layout` of an lstm vertex: the exporter's
  // parameters behind the ONNX node's W, R and B. Either ONNX's own, each a
  // parameter as held (W [D, G, I], R [D, G, U], B [D, 2·G] with G =
  // gates·U: "onnx"), or PyTorch's weight_ih [G, I], weight_hh [G, U],
  // bias_ih and bias_hh [G] per direction, which its exporter slices into
  // ONNX's gate order, concatenates and unsqueezes ("torch"). Anything else
  // keeps the default NODE/weight.
  void name_rnn_weights(const onnx::NodeProto& node, NodeV1& n, int64_t gate_units, int64_t directions, int64_t hidden,
                        int64_t features);

  // The parameters (as held) a constant tensor is built from through
  // Slice, Concat, Unsqueeze, Squeeze, Reshape, Identity and Cast, each
  // once, in the order the ops read them; nullopt when it is built
  // otherwise (or from the data).
  std::optional<std::vector<std::string>> sources_of(const std::string& tensor);

  void add_losses();

  const onnx::GraphProto& graph_;
  const TensorFacts& facts_;
  const std::set<std::string>& data_inputs_;
  const std::map<std::string, ParameterView>& parameters_;
  const OnnxImportOptions& options_;
  const std::string& source_;
  int64_t opset_;
  std::set<std::string> activations_, graph_outputs_, used_names_, emitted_names_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, Ref> refs_;
  std::map<std::string, std::string> externals_;
  std::map<std::string, std::string> parameter_tensors_;  // parameter name -> its external tensor
  std::map<std::string, int> producers_;                  // tensor -> the node that outputs it (built by sources_of)
  std::map<int, NormMatch> norms_;
  std::set<int> absorbed_;
  std::map<int, std::pair<int64_t, int64_t>> ranges_;
  std::map<std::pair<std::string, int64_t>, Group> slice_groups_, gather_groups_;
  std::vector<Group> own_groups_;
  std::map<int, Group*> group_of_;
  std::map<const Group*, std::string> emitted_groups_;
  std::vector<Unsupported> unsupported_;
  OnnxImport result_;
};

}  // namespace pase
