#include "onnximport/lower_nodes.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "graphs/einsum.h"
#include "base/error.h"
#include "graphs/op_registry.h"
#include "onnximport/einsum_chain.h"
#include "onnximport/norm_pattern.h"
#include "onnximport/onnx_model.h"
#include "onnximport/tensor_roles.h"

namespace pase {
namespace {

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

bool is_one_of(const std::string& op, std::initializer_list<const char*> ops) {
  for (const char* candidate : ops)
    if (op == candidate) return true;
  return false;
}

// The graph format's einsum has at least one m- and one n-letter; a
// contraction without one (te,etd->td, or abcd,bd->ac inside a chain) is the
// extension op `contraction`, priced alike. Keeping every other equation an
// einsum leaves graphs that the format could already carry unchanged.
const char* contraction_op(const std::string& equation) {
  return is_gemm_einsum(parse_contraction(equation)) ? "einsum" : "contraction";
}

// Whether a pase op can absorb a following activation into its `pointwise` count.
bool takes_pointwise(const std::string& op) {
  const OpDefinition* definition = find_op(op);
  return definition != nullptr && op_takes_field(*definition, "pointwise");
}

// Whether a pase op's price already covers a scale and bias applied to its
// output: a normalization's γ and β (a decomposed LayerNorm's Mul and Add)
// are its own parameters, not extra pointwise work.
bool prices_own_affine(const std::string& op) {
  const OpDefinition* definition = find_op(op);
  if (definition == nullptr) return false;
  return definition->kind == OpKind::Norm || definition->kind == OpKind::RmsNorm || definition->kind == OpKind::Batchnorm;
}

// Unary ops whose cost folds into the producer's pointwise count: (op, count).
int pointwise_count(const std::string& op) {
  if (is_one_of(op, {"Identity", "Cast"})) return 0;
  if (is_one_of(op, {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Gelu", "Elu", "Selu", "Softplus", "Softsign",
                     "HardSigmoid", "HardSwish", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Clip", "Dropout",
                     "Sin", "Cos", "Mish", "Celu", "ThresholdedRelu", "Floor", "Ceil", "Round", "Sign"}))
    return 1;
  return -1;
}

std::string join_shape(const Shape& shape) { return shape_to_string(shape); }

class Lowerer {
 public:
  Lowerer(const onnx::GraphProto& graph, const TensorFacts& facts, const std::set<std::string>& data_inputs,
          const std::map<std::string, ParameterView>& parameters, const OnnxImportOptions& options,
          const std::string& source, int64_t opset)
      : graph_(graph), facts_(facts), data_inputs_(data_inputs), parameters_(parameters), options_(options), source_(source),
        opset_(opset) {
    activations_ = find_activations(graph, data_inputs);
    for (int i = 0; i < graph.node_size(); ++i) {
      used_names_.insert(graph.node(i).name());
      for (int k = 0; k < graph.node(i).input_size(); ++k) consumers_[graph.node(i).input(k)].push_back(i);
    }
    for (const onnx::ValueInfoProto& out : graph.output()) graph_outputs_.insert(out.name());
  }

  OnnxImport run() {
    result_.graph.name = graph_.name().empty() ? "onnx" : graph_.name();
    for (const NormMatch& m : find_decomposed_norms(graph_)) {
      if (!activations_.count(m.input)) continue;
      for (int n : m.nodes) absorbed_.insert(n);
      norms_[m.first] = m;
    }
    find_groups();
    for (int i = 0; i < graph_.node_size(); ++i) lower(i);
    add_losses();
    if (!unsupported_.empty() && !options_.lenient) throw OptionError(unsupported_message());
    if (!unsupported_.empty()) account_replacements();
    return std::move(result_);
  }

 private:
  // --- errors ------------------------------------------------------------------
  [[noreturn]] void fail(const onnx::NodeProto& node, const std::string& message) const {
    throw InputError(source_ + ": node '" + node.name() + "': " + message);
  }

  struct Unsupported {
    std::string op, name, reason;
    int node = -1;
  };

  // --- what --lenient leaves out -------------------------------------------------
  // A forward-pass FLOP estimate of one ONNX node, from its shapes: GEMMs and
  // convolutions 2·MACs, recurrent layers their gate GEMMs, everything else
  // one operation per output element. Only shares of the total are reported.
  double estimated_flop(const onnx::NodeProto& node) const {
    auto elements = [&](const std::string& t) {
      const Shape* s = facts_.shape(t);
      double n = 1;
      if (s)
        for (int64_t d : *s) n *= static_cast<double>(d);
      return s ? n : 0.0;
    };
    const std::string& op = node.op_type();
    const Shape* in = node.input_size() > 0 ? facts_.shape(node.input(0)) : nullptr;
    const Shape* w = node.input_size() > 1 ? facts_.shape(node.input(1)) : nullptr;
    const double out = node.output_size() > 0 ? elements(node.output(0)) : 0.0;
    if ((op == "MatMul" || op == "Gemm") && in && !in->empty()) {
      const bool trans_a = op == "Gemm" && int_attribute(node, "transA", 0) != 0;
      return 2 * out * static_cast<double>(trans_a ? in->front() : in->back());
    }
    if ((op == "Conv" || op == "ConvTranspose") && w && w->size() >= 2) {
      double taps = 1;
      for (size_t d = 1; d < w->size(); ++d) taps *= static_cast<double>((*w)[d]);
      return 2 * (op == "Conv" ? out : elements(node.input(0))) * taps;
    }
    if ((op == "LSTM" || op == "GRU" || op == "RNN") && in && in->size() == 3) {
      const double gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
      const double hidden = static_cast<double>(int_attribute(node, "hidden_size", 0));
      const double directions = string_attribute(node, "direction", "forward") == "bidirectional" ? 2 : 1;
      return 2 * directions * static_cast<double>((*in)[0]) * static_cast<double>((*in)[1]) * gates * hidden *
             (static_cast<double>((*in)[2]) + hidden);
    }
    double all = 0;
    for (const std::string& o : node.output()) all += o.empty() ? 0.0 : elements(o);
    return all;
  }

  // The share of the model's estimated FLOP each replaced node holds; refused
  // above kLenientFlopShare unless forced.
  void account_replacements() {
    double total = 0;
    for (int i = 0; i < graph_.node_size(); ++i) {
      bool any = false;
      for (const std::string& out : graph_.node(i).output()) any = any || is_active(out);
      if (any) total += estimated_flop(graph_.node(i));
    }
    double replaced = 0;
    for (const Unsupported& u : unsupported_) {
      const double flop = u.node >= 0 ? estimated_flop(graph_.node(u.node)) : 0.0;
      replaced += flop;
      result_.replaced.push_back({u.op, u.name, total > 0 ? flop / total : 0.0});
      result_.graph.replaced.push_back({u.op, u.name, total > 0 ? flop / total : 0.0});
    }
    const double share = total > 0 ? replaced / total : 0.0;
    auto percent = [](double fraction) {
      char text[32];
      std::snprintf(text, sizeof text, "%.2f%%", 100 * fraction);
      return std::string(text);
    };
    for (const LenientReplacement& r : result_.replaced)
      result_.notes.push_back("lenient: node '" + r.name + "' (" + r.op + ") holds " + percent(r.flop_share) +
                              " of the model's estimated FLOP");
    const std::string summary = std::to_string(unsupported_.size()) + " node(s) imported as pass-throughs hold " +
                                percent(share) + " of the model's estimated FLOP";
    if (share > kLenientFlopShare && !options_.lenient_force)
      throw OptionError({"lenient_force", "the import option 'lenient_force'",
                         source_ + ": " + summary + " (more than 5%): the solution would price a different model; ",
                         " imports them anyway"});
    result_.notes.push_back("lenient: " + summary);
  }

  // The error for the unsupported nodes, with the option that imports them anyway.
  OptionWords unsupported_message() const {
    const Unsupported& first = unsupported_.front();
    std::string text = source_ + ": node '" + first.name + "': unsupported " + first.op +
                       (first.reason.empty() ? "" : " (" + first.reason + ")") + "; " + std::to_string(unsupported_.size()) +
                       " unsupported node(s):";
    std::map<std::string, std::vector<std::string>> by_op;
    for (const Unsupported& u : unsupported_) by_op[u.op].push_back(u.name);
    bool first_op = true;
    for (const auto& [op, names] : by_op) {
      text += std::string(first_op ? " " : "; ") + op + " x" + std::to_string(names.size()) + " (";
      for (size_t k = 0; k < names.size() && k < 5; ++k) text += (k ? ", '" : "'") + names[k] + "'";
      if (names.size() > 5) text += ", +" + std::to_string(names.size() - 5) + " more";
      text += ")";
      first_op = false;
    }
    return {"lenient", "the import option 'lenient'", text + "; ", " imports them as zero-cost pass-through vertices"};
  }

  // --- tensors -----------------------------------------------------------------
  bool is_active(const std::string& name) const { return !name.empty() && activations_.count(name); }

  bool is_used(const std::string& name) const { return consumers_.count(name) || graph_outputs_.count(name); }

  const Shape& shape_of(const onnx::NodeProto& node, const std::string& tensor) const {
    const Shape* shape = facts_.shape(tensor);
    if (!shape) fail(node, "cannot infer the shape of '" + tensor + "' (ONNX shape inference and the constant evaluator left it unknown)");
    return *shape;
  }

  // The name of the pase node that lowers `node`: its own the first time, a
  // fresh one when it lowers to several nodes. Every ONNX node name is in
  // used_names_ from the start, so a fresh name never takes another's.
  std::string claim_name(const onnx::NodeProto& node) {
    std::string name = emitted_names_.count(node.name()) ? unique_name(node.name()) : node.name();
    emitted_names_.insert(name);
    return name;
  }

  std::string unique_name(const std::string& wanted) {
    std::string name = wanted;
    for (int k = 2; used_names_.count(name); ++k) name = wanted + "_" + std::to_string(k);
    used_names_.insert(name);
    return name;
  }

  // The pase reference of a tensor: an activation's Ref, or an external tensor (data inputs, weights).
  Ref ref_of(const onnx::NodeProto& node, const std::string& tensor) {
    auto it = refs_.find(tensor);
    if (it != refs_.end()) return it->second;
    if (is_active(tensor) && !data_inputs_.count(tensor))
      fail(node, "input '" + tensor + "' comes from an output pase does not model");
    auto ext = externals_.find(tensor);
    if (ext == externals_.end()) {
      // A weight read as it is held (an einsum's operand) keeps the model's
      // name and is listed under "parameters".
      auto parameter = parameters_.find(tensor);
      if (parameter != parameters_.end() && parameter->second.as_held()) {
        ext = externals_.emplace(tensor, parameter_tensor(node, parameter->second)).first;
      } else {
        std::string name = unique_name(pase_name(tensor, "tensor"));
        result_.graph.tensors.emplace_back(name, shape_of(node, tensor));
        ext = externals_.emplace(tensor, name).first;
      }
    }
    return Ref{ext->second, -1, {}};
  }

  // --- weights ---------------------------------------------------------------------
  // The external tensor that stands for a parameter as the model holds it:
  // named after it and listed under "parameters", one for all its views.
  std::string parameter_tensor(const onnx::NodeProto& node, const ParameterView& parameter) {
    auto named = parameter_tensors_.find(parameter.name);
    if (named == parameter_tensors_.end()) {
      std::string name = unique_name(pase_name(parameter.name, "weight"));
      result_.graph.tensors.emplace_back(name, shape_of(node, parameter.name));
      result_.graph.parameters.push_back(name);
      named = parameter_tensors_.emplace(parameter.name, name).first;
    }
    return named->second;
  }

  // The model's name of the parameter `tensor` is, when the op reads it as the model holds it.
  std::optional<std::string> parameter_name(const std::string& tensor) const {
    auto it = parameters_.find(tensor);
    if (it == parameters_.end() || !it->second.as_held()) return std::nullopt;
    return it->second.name;
  }

  // `weights` of a conv2d or embedding: the name of the parameter it owns.
  void name_weight(NodeV1& n, const std::string& tensor) const {
    if (std::optional<std::string> name = parameter_name(tensor)) n.weights = std::vector<std::string>{*name};
  }

  // `weights` and `weight_layout` of an fc whose matrix operand is `tensor`,
  // read as [N, K] when `read_nk` (Gemm's transB = 1), else as [K, N]. The
  // parameter may be held either way, the operand being it or its Transpose:
  // the fc's weight keeps the parameter's name and the layout it is held in.
  void name_fc_weight(NodeV1& n, const std::string& tensor, bool read_nk) const {
    auto it = parameters_.find(tensor);
    if (it == parameters_.end() || it->second.perm.size() != 2) return;
    // Operand dimension i is the parameter's dimension perm[i]; N is operand dimension 0 or 1.
    const int64_t n_of_parameter = it->second.perm[read_nk ? 0 : 1];
    n.weights = std::vector<std::string>{it->second.name};
    if (n_of_parameter == 1) n.weight_layout = "kn";
  }

  // A parameter applied elementwise to an output of shape `out` (a bias, a
  // scale), lined up from `axis` or with its last axes. Tensors with more
  // than one dimension above 1 (masks) are not biases: nullopt.
  std::optional<PointwiseWeightV1> as_pointwise_weight(const std::string& tensor, const Shape& out,
                                                       std::optional<int64_t> axis) const {
    std::optional<std::string> name = parameter_name(tensor);
    const Shape* shape = facts_.shape(tensor);
    if (!name || !shape || shape->empty()) return std::nullopt;
    const auto rank = static_cast<int64_t>(out.size()), dims = static_cast<int64_t>(shape->size());
    int64_t from = axis.value_or(rank - dims);
    if (from < 0 || from + dims > rank) return std::nullopt;
    int large = 0;
    for (int64_t d = 0; d < dims; ++d) {
      int64_t size = (*shape)[static_cast<size_t>(d)];
      if (size != 1 && size != out[static_cast<size_t>(from + d)]) return std::nullopt;
      large += size > 1 ? 1 : 0;
    }
    if (large > 1) return std::nullopt;
    return PointwiseWeightV1{*name, *shape, from == rank - dims ? std::nullopt : std::optional<int64_t>(from)};
  }

  // A parameter that node `index` applies elementwise to its output 0, listed
  // in its `pointwise_weights` (once, and not when it is the node's own weight).
  void add_pointwise_weight(int index, const std::string& tensor, std::optional<int64_t> axis) {
    if (index < 0) return;
    NodeV1& n = result_.graph.nodes[static_cast<size_t>(index)];
    if (!n.outputs || n.outputs->empty()) return;
    std::optional<PointwiseWeightV1> weight = as_pointwise_weight(tensor, n.outputs->front(), axis);
    if (!weight) return;
    if (n.weights && std::find(n.weights->begin(), n.weights->end(), weight->name) != n.weights->end()) return;
    std::vector<PointwiseWeightV1>& list = n.pointwise_weights ? *n.pointwise_weights : n.pointwise_weights.emplace();
    for (const PointwiseWeightV1& w : list)
      if (w.name == weight->name) return;
    list.push_back(std::move(*weight));
  }

  int last_node() const { return static_cast<int>(result_.graph.nodes.size()) - 1; }

  void alias(const std::string& out, const Ref& in) { refs_[out] = in; }

  void fold(const std::string& out, const Ref& in, int pointwise) {
    if (in.node >= 0 && pointwise > 0 && takes_pointwise(result_.graph.nodes[in.node].op)) {
      NodeV1& producer = result_.graph.nodes[in.node];
      producer.pointwise = producer.pointwise.value_or(0) + pointwise;
    }
    alias(out, in);
  }

  // Appends a node with the ONNX node's name and its outputs' shapes as claims.
  NodeV1& emit(const onnx::NodeProto& node, const std::string& op, std::vector<std::string> inputs,
               const std::vector<std::string>& outputs) {
    NodeV1 n;
    n.name = claim_name(node);
    n.op = op;
    n.inputs = std::move(inputs);
    std::vector<Shape> claims;
    for (const std::string& out : outputs) claims.push_back(shape_of(node, out));
    n.outputs = claims;
    int index = static_cast<int>(result_.graph.nodes.size());
    for (size_t k = 0; k < outputs.size(); ++k)
      refs_[outputs[k]] = Ref{k == 0 && outputs.size() == 1 ? n.name : n.name + ":" + std::to_string(k),
                              k == 0 && outputs.size() == 1 ? index : -1, {}};
    result_.graph.nodes.push_back(std::move(n));
    return result_.graph.nodes.back();
  }

  // Refs of the activation inputs, with their positions; weights are skipped.
  std::vector<int> active_inputs(const onnx::NodeProto& node) const {
    std::vector<int> slots;
    for (int k = 0; k < node.input_size(); ++k)
      if (is_active(node.input(k))) slots.push_back(k);
    return slots;
  }

  // A Dropout whose ratio is a constant 0 (the `ratio` attribute before
  // opset 12, input 1 since): frameworks hand the input back unchanged, so
  // it adds no work (Swin-T's attention and projection dropouts).
  bool drops_nothing(const onnx::NodeProto& node) const {
    if (const onnx::AttributeProto* ratio = find_attribute(node, "ratio")) return ratio->f() == 0.0f;
    if (node.input_size() < 2 || node.input(1).empty()) return false;
    const ConstantValue* ratio = facts_.value(node.input(1));
    return ratio != nullptr && ratio->data.size() == 1 && ratio->data[0] == 0.0;
  }

  std::optional<std::vector<int64_t>> input_ints(const onnx::NodeProto& node, int k) const {
    if (k >= node.input_size() || node.input(k).empty()) return std::nullopt;
    const ConstantValue* v = facts_.value(node.input(k));
    if (!v) return std::nullopt;
    std::vector<int64_t> out;
    for (double x : v->data)
      out.push_back(x > 9e18 ? INT64_MAX : x < -9e18 ? INT64_MIN : static_cast<int64_t>(x));
    return out;
  }

  // --- unsupported --------------------------------------------------------------
  void unsupported(const onnx::NodeProto& node, const std::string& reason) {
    unsupported_.push_back({node.op_type(), node.name(), reason, node_index(node)});
    if (options_.lenient) pass_through(node, reason);
    else
      for (const std::string& out : node.output()) refs_[out] = Ref{node.name(), -1, {}};  // keeps later nodes mappable
  }

  int node_index(const onnx::NodeProto& node) const {
    for (int i = 0; i < graph_.node_size(); ++i)
      if (&graph_.node(i) == &node) return i;
    return -1;
  }

  // --lenient: one zero-cost vertex per used output that keeps every shape valid.
  void pass_through(const onnx::NodeProto& node, const std::string& reason) {
    std::vector<int> slots = active_inputs(node);
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& out = node.output(k);
      if (out.empty() || !is_used(out)) continue;
      const Shape& shape = shape_of(node, out);
      std::vector<std::string> same;
      for (int slot : slots)
        if (shape_of(node, node.input(slot)) == shape) same.push_back(ref_of(node, node.input(slot)).ref);
      std::string how;
      onnx::NodeProto renamed = node;
      if (k > 0) renamed.set_name(node.name() + "/" + std::to_string(k));
      if (!same.empty()) {
        emit(renamed, "elementwise", same, {out});
        how = "an elementwise vertex with pointwise 0";
      } else if (!slots.empty() && checked_product(shape_of(node, node.input(slots[0]))) == checked_product(shape)) {
        NodeV1& n = emit(renamed, "reshape", {ref_of(node, node.input(slots[0])).ref}, {out});
        n.shape = shape;
        how = "a reshape vertex";
      } else if (!slots.empty() && !shape.empty() && checked_product(shape_of(node, node.input(slots[0])))) {
        // Other shapes: one entry of the first activation input broadcast to
        // the output (NAME/flat, NAME/one, NAME), all data movement, so that
        // the graph stays connected.
        const Shape flat_shape = {*checked_product(shape_of(node, node.input(slots[0])))};
        NodeV1& flat = push_helper(renamed.name() + "/flat", "reshape", ref_of(node, node.input(slots[0])).ref, flat_shape);
        flat.shape = flat_shape;
        std::string flat_name = flat.name;
        NodeV1& one = push_helper(renamed.name() + "/one", "slice", flat_name, {1});
        one.axis = 0;
        one.shape = Shape{1};
        std::string one_name = one.name;
        NodeV1& n = emit(renamed, "expand", {one_name}, {out});
        n.shape = shape;
        how = "an expand of one entry of its first activation input";
      } else {
        std::string name = unique_name(renamed.name());
        result_.graph.tensors.emplace_back(name, shape);
        refs_[out] = Ref{name, -1, {}};
        how = "an external tensor (no vertex: the graph is cut there)";
      }
      result_.notes.push_back("lenient: node '" + node.name() + "' (" + node.op_type() + (reason.empty() ? "" : ", " + reason) +
                              ") output " + std::to_string(k) + " imported as " + how);
    }
  }

  // --- groups of slices -----------------------------------------------------------
  void find_groups() {
    std::map<std::pair<std::string, int64_t>, Group> slices, gathers;
    for (int i = 0; i < graph_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_.node(i);
      if (node.input_size() == 0 || !is_active(node.input(0))) continue;
      const Shape* shape = facts_.shape(node.input(0));
      if (!shape) continue;
      if (node.op_type() == "Slice") {
        std::optional<std::pair<int64_t, std::pair<int64_t, int64_t>>> range = slice_range(node, *shape);
        if (!range) continue;
        Group& g = slices[{node.input(0), range->first}];
        if (g.first < 0) {
          g.first = i;
          g.input = node.input(0);
          g.axis = range->first;
        }
        ranges_[i] = range->second;
        g.port_of[i] = -1;
      } else if (node.op_type() == "Gather" && !is_active(node.input(1))) {
        const ConstantValue* index = facts_.value(node.input(1));
        if (!index || !index->dims.empty() || shape->size() < 2) continue;
        int64_t rank = static_cast<int64_t>(shape->size());
        int64_t axis = int_attribute(node, "axis", 0);
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) continue;
        auto k = static_cast<int64_t>(index->data[0]);
        if (k < 0) k += (*shape)[axis];
        Group& g = gathers[{node.input(0), axis}];
        if (g.first < 0) {
          g.first = i;
          g.input = node.input(0);
          g.axis = axis;
        }
        g.port_of[i] = static_cast<int>(k);
      }
    }
    for (auto& [key, g] : slices) {
      int64_t extent = facts_.shape(g.input)->at(g.axis);
      std::set<int64_t> bounds = {0, extent};
      for (const auto& [i, port] : g.port_of) {
        bounds.insert(ranges_[i].first);
        bounds.insert(ranges_[i].second);
      }
      std::vector<int64_t> cuts(bounds.begin(), bounds.end());
      for (size_t k = 0; k + 1 < cuts.size(); ++k) g.parts.push_back(cuts[k + 1] - cuts[k]);
      bool disjoint = true;
      for (auto& [i, port] : g.port_of) {
        auto [begin, end] = ranges_[i];
        auto at = std::lower_bound(cuts.begin(), cuts.end(), begin);
        if (begin == 0 && end == extent) {
          g.identity.insert(i);
        } else if (at + 1 < cuts.end() && *(at + 1) == end) {
          port = static_cast<int>(at - cuts.begin());
        } else {
          disjoint = false;
        }
      }
      // Overlapping slices each get their own split, led by themselves.
      for (auto& [i, port] : g.port_of) {
        if (disjoint || g.identity.count(i)) {
          group_of_[i] = &g;
          continue;
        }
        Group own;
        own.first = i;
        own.input = g.input;
        own.axis = g.axis;
        auto [begin, end] = ranges_[i];
        for (int64_t part : {begin, end - begin, extent - end})
          if (part > 0) own.parts.push_back(part);
        own.port_of[i] = begin > 0 ? 1 : 0;
        own_groups_.push_back(own);
      }
      if (disjoint && g.identity.size() == g.port_of.size()) continue;
      if (disjoint) {
        // The first non-identity member emits the split.
        for (const auto& [i, port] : g.port_of)
          if (!g.identity.count(i)) {
            g.first = i;
            break;
          }
      }
    }
    for (Group& own : own_groups_) group_of_[own.first] = &own;
    for (auto& [key, g] : gathers)
      for (const auto& [i, port] : g.port_of) group_of_[i] = &g;
    slice_groups_ = std::move(slices);
    gather_groups_ = std::move(gathers);
  }

  // (axis, [begin, end)) of a step-1 Slice that cuts one axis; nullopt otherwise.
  std::optional<std::pair<int64_t, std::pair<int64_t, int64_t>>> slice_range(const onnx::NodeProto& node,
                                                                            const Shape& shape) const {
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset_ < 10) {
      starts = ints_attribute(node, "starts").value_or(std::vector<int64_t>{});
      ends = ints_attribute(node, "ends").value_or(std::vector<int64_t>{});
      axes = ints_attribute(node, "axes").value_or(std::vector<int64_t>{});
    } else {
      std::optional<std::vector<int64_t>> s = input_ints(node, 1), e = input_ints(node, 2);
      if (!s || !e) return std::nullopt;
      starts = *s;
      ends = *e;
      if (node.input_size() > 3 && !node.input(3).empty()) {
        std::optional<std::vector<int64_t>> a = input_ints(node, 3);
        if (!a) return std::nullopt;
        axes = *a;
      }
      if (node.input_size() > 4 && !node.input(4).empty()) {
        std::optional<std::vector<int64_t>> st = input_ints(node, 4);
        if (!st) return std::nullopt;
        steps = *st;
      }
    }
    if (axes.empty())
      for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    if (starts.size() != ends.size() || axes.size() != starts.size()) return std::nullopt;
    std::optional<std::pair<int64_t, std::pair<int64_t, int64_t>>> result;
    int64_t rank = static_cast<int64_t>(shape.size());
    for (size_t k = 0; k < axes.size(); ++k) {
      if (!steps.empty() && steps[k] != 1) return std::nullopt;
      int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (axis < 0 || axis >= rank) return std::nullopt;
      int64_t size = shape[axis], begin = starts[k], end = ends[k];
      if (begin < 0) begin += size;
      if (end < 0) end += size;
      begin = std::clamp<int64_t>(begin, 0, size);
      end = std::clamp<int64_t>(end, 0, size);
      if (end <= begin) return std::nullopt;
      if (begin == 0 && end == size) continue;
      if (result) return std::nullopt;  // more than one axis is cut
      result = {axis, {begin, end}};
    }
    if (!result) return std::make_pair(int64_t{0}, std::make_pair(int64_t{0}, shape.empty() ? 0 : shape[0]));
    return result;
  }

  void lower_group_member(int i) {
    const onnx::NodeProto& node = graph_.node(i);
    Group& g = *group_of_.at(i);
    Ref in = ref_of(node, g.input);
    if (g.identity.count(i)) {
      alias(node.output(0), in);
      return;
    }
    if (!emitted_groups_.count(&g)) {
      emitted_groups_[&g] = emit_group(node, g, in);
    }
    const std::string& name = emitted_groups_[&g];
    int port = g.port_of.at(i);
    refs_[node.output(0)] = Ref{name + ":" + std::to_string(port), -1, {}};
  }

  std::string emit_group(const onnx::NodeProto& node, const Group& g, const Ref& in) {
    NodeV1 n;
    n.name = claim_name(node);
    n.inputs = {in.ref};
    n.axis = g.axis;
    Shape shape = *facts_.shape(g.input);
    std::vector<Shape> claims;
    if (g.parts.empty()) {
      n.op = "unstack";
      Shape out = shape;
      out.erase(out.begin() + g.axis);
      claims.assign(static_cast<size_t>(shape[g.axis]), out);
    } else {
      n.op = "split";
      n.parts = g.parts;
      for (int64_t part : g.parts) {
        Shape out = shape;
        out[g.axis] = part;
        claims.push_back(out);
      }
    }
    n.outputs = claims;
    result_.graph.nodes.push_back(n);
    return n.name;
  }

  // --- the ops ---------------------------------------------------------------------
  void lower(int i) {
    const onnx::NodeProto& node = graph_.node(i);
    const std::string& op = node.op_type();
    bool any_active = false;
    for (const std::string& out : node.output()) any_active = any_active || is_active(out);
    if (!any_active) return;
    if (auto it = norms_.find(i); it != norms_.end()) {
      lower_norm(node, it->second);
      return;
    }
    if (absorbed_.count(i)) return;
    for (const std::string& out : node.output())
      if (is_active(out) && is_used(out) && !facts_.shape(out))
        fail(node, "cannot infer the shape of output '" + out + "' (" + op +
                       "; ONNX shape inference and the constant evaluator left it unknown)");
    if (!node.domain().empty() && node.domain() != "ai.onnx") return unsupported(node, "domain " + node.domain());
    if (group_of_.count(i)) return lower_group_member(i);
    std::vector<int> slots = active_inputs(node);
    if (slots.empty()) return;  // only Shape-like outputs
    const std::string& x = node.input(slots[0]);

    if (op == "Dropout") {
      if (node.output_size() > 1 && is_used(node.output(1))) return unsupported(node, "its mask output is used");
      return fold(node.output(0), ref_of(node, x), drops_nothing(node) ? 0 : 1);
    }
    if (int pw = pointwise_count(op); pw >= 0 && slots.size() == 1 && slots[0] == 0) {
      if (shape_of(node, node.output(0)) != shape_of(node, x)) return unsupported(node, "changes the shape");
      return fold(node.output(0), ref_of(node, x), pw);
    }
    if (op == "Conv") return lower_conv(node, slots);
    if (op == "MaxPool" || op == "AveragePool") return lower_pool(node);
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      Shape in = shape_of(node, x);
      std::vector<int64_t> axes;
      for (size_t d = 2; d < in.size(); ++d) axes.push_back(static_cast<int64_t>(d));
      NodeV1& n = emit(node, "reduce_mean", {ref_of(node, x).ref}, {node.output(0)});
      n.axes = axes;
      n.keepdims = true;
      return;
    }
    if (op == "ReduceMean" || op == "ReduceSum") return lower_reduce_mean(node);
    if (op == "BatchNormalization") {
      for (int k = 1; k < node.output_size(); ++k)
        if (is_used(node.output(k)) && is_active(node.output(k))) return unsupported(node, "its running statistics are used");
      emit(node, "batchnorm", {ref_of(node, x).ref}, {node.output(0)});
      for (int k = 1; k <= 2 && k < node.input_size(); ++k) add_pointwise_weight(last_node(), node.input(k), 1);  // scale, B
      return;
    }
    if (op == "LayerNormalization") {
      int64_t rank = static_cast<int64_t>(shape_of(node, x).size());
      int64_t axis = int_attribute(node, "axis", -1);
      if (axis != -1 && axis != rank - 1) return unsupported(node, "normalises more than the last axis");
      NodeV1& n = emit(node, "norm", {ref_of(node, x).ref}, {node.output(0)});
      n.axis = -1;
      for (int k = 1; k <= 2 && k < node.input_size(); ++k) add_pointwise_weight(last_node(), node.input(k), std::nullopt);
      return;
    }
    if (op == "Gemm") return lower_gemm(node);
    if (op == "MatMul") return lower_matmul(node);
    if (is_one_of(op, {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mod", "Where", "Equal", "Less", "Greater",
                       "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not"}))
      return lower_binary(node, slots);
    if (op == "Concat") return lower_concat(node);
    if (op == "Split") return lower_split(node);
    if (op == "Transpose") {
      int64_t rank = static_cast<int64_t>(shape_of(node, x).size());
      std::vector<int64_t> perm = ints_attribute(node, "perm").value_or(std::vector<int64_t>{});
      if (perm.empty())
        for (int64_t d = rank; d-- > 0;) perm.push_back(d);
      bool identity = true;
      for (int64_t d = 0; d < static_cast<int64_t>(perm.size()); ++d) identity = identity && perm[d] == d;
      if (identity) return alias(node.output(0), ref_of(node, x));
      NodeV1& n = emit(node, "transpose", {ref_of(node, x).ref}, {node.output(0)});
      n.perm = perm;
      return;
    }
    if (is_one_of(op, {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) || (op == "Expand" && slots[0] == 0)) {
      if (slots.size() != 1 || slots[0] != 0) return unsupported(node, "its target shape depends on the data");
      const Shape& out = shape_of(node, node.output(0));
      if (out == shape_of(node, x)) return alias(node.output(0), ref_of(node, x));
      if (op == "Expand") {
        NodeV1& n = emit(node, "expand", {ref_of(node, x).ref}, {node.output(0)});
        n.shape = out;
        return;
      }
      NodeV1& n = emit(node, "reshape", {ref_of(node, x).ref}, {node.output(0)});
      n.shape = out;
      return;
    }
    if (op == "Softmax" || op == "LogSoftmax") {
      NodeV1& n = emit(node, "softmax", {ref_of(node, x).ref}, {node.output(0)});
      n.axis = int_attribute(node, "axis", opset_ >= 13 ? -1 : 1);
      return;
    }
    if (op == "Gather") return lower_gather(node);
    if (op == "LSTM" || op == "GRU") return lower_rnn(node, slots);
    if (op == "Einsum") return lower_einsum(node);
    if (op == "TopK") {
      std::optional<std::vector<int64_t>> k = input_ints(node, 1);
      if (slots != std::vector<int>{0} || !k || k->size() != 1) return unsupported(node, "k is not a constant");
      NodeV1& n = emit(node, "topk", {ref_of(node, x).ref}, {node.output(0), node.output(1)});
      n.k = k->front();
      n.axis = int_attribute(node, "axis", -1);
      return;
    }
    if (op == "ScatterElements") {
      if (string_attribute(node, "reduction", "none") != "none") return unsupported(node, "a reduction");
      if (!is_active(node.input(1)) || !is_active(node.input(2)))
        return unsupported(node, "indices or updates that are constants");
      std::vector<std::string> inputs;
      if (is_active(node.input(0))) inputs.push_back(ref_of(node, node.input(0)).ref);
      inputs.push_back(ref_of(node, node.input(1)).ref);
      inputs.push_back(ref_of(node, node.input(2)).ref);
      NodeV1& n = emit(node, "scatter", inputs, {node.output(0)});
      if (inputs.size() == 2) n.shape = shape_of(node, node.output(0));
      n.axis = int_attribute(node, "axis", 0);
      return;
    }
    if (op == "ArgMax" || op == "ArgMin") {
      NodeV1& n = emit(node, "argmax", {ref_of(node, x).ref}, {node.output(0)});
      n.axis = int_attribute(node, "axis", 0);
      n.keepdims = int_attribute(node, "keepdims", 1) != 0;
      return;
    }
    if (op == "OneHot") {
      std::optional<std::vector<int64_t>> depth = input_ints(node, 1);
      if (slots != std::vector<int>{0} || !depth || depth->size() != 1)
        return unsupported(node, "its depth or values are computed from the data");
      NodeV1& n = emit(node, "one_hot", {ref_of(node, x).ref}, {node.output(0)});
      n.depth = depth->front();
      n.axis = int_attribute(node, "axis", -1);
      return;
    }
    if (op == "CumSum") {
      std::optional<std::vector<int64_t>> axis = input_ints(node, 1);
      if (slots != std::vector<int>{0} || !axis || axis->size() != 1) return unsupported(node, "its axis is not a constant");
      NodeV1& n = emit(node, "cumsum", {ref_of(node, x).ref}, {node.output(0)});
      n.axis = axis->front();
      return;
    }
    if (op == "ScatterND") {
      // Indices (and data or updates) may be constants: external tensors of their shapes.
      if (string_attribute(node, "reduction", "none") != "none") return unsupported(node, "a reduction");
      emit(node, "scatter_nd",
           {ref_of(node, node.input(0)).ref, ref_of(node, node.input(1)).ref, ref_of(node, node.input(2)).ref},
           {node.output(0)});
      return;
    }
    if (op == "Pad") return lower_pad(node);
    if (op == "Slice") {
      // Not a step-1 cut (those join a split, see find_groups): a strided
      // Slice of one axis.
      const Shape& in = shape_of(node, x);
      const Shape& out = shape_of(node, node.output(0));
      std::vector<int64_t> cut;
      for (size_t d = 0; d < in.size() && d < out.size(); ++d)
        if (in[d] != out[d]) cut.push_back(static_cast<int64_t>(d));
      if (slots != std::vector<int>{0} || in.size() != out.size() || cut.size() > 1)
        return unsupported(node, "cuts more than one axis with a step");
      if (cut.empty()) return alias(node.output(0), ref_of(node, x));
      NodeV1& n = emit(node, "slice", {ref_of(node, x).ref}, {node.output(0)});
      n.axis = cut[0];
      n.shape = out;
      return;
    }
    if (is_one_of(op, {"Loop", "If", "Scan"})) return unsupported(node, "control flow");
    unsupported(node, "");
  }

  void lower_norm(const onnx::NodeProto& node, const NormMatch& m) {
    Shape in = shape_of(node, m.input);
    int64_t rank = static_cast<int64_t>(in.size());
    if (m.axis != -1 && m.axis != rank - 1) {
      // Not a last-axis norm: lower the pieces one by one instead.
      for (int n : m.nodes) absorbed_.erase(n);
      norms_.erase(m.first);
      return lower(m.first);
    }
    NodeV1 n;
    n.name = node.name();
    emitted_names_.insert(n.name);
    n.op = "norm";
    n.inputs = {ref_of(node, m.input).ref};
    n.outputs = std::vector<Shape>{in};
    refs_[m.output] = Ref{n.name, static_cast<int>(result_.graph.nodes.size()), {}};
    result_.graph.nodes.push_back(n);
  }

  // Symmetric padding that gives ONNX's output extent with pase's floor formula.
  static std::optional<int64_t> fit_padding(int64_t in, int64_t window, int64_t stride, int64_t out, int64_t begin,
                                            int64_t end) {
    auto gives = [&](int64_t pad) { return in + 2 * pad >= window && (in + 2 * pad - window) / stride + 1 == out; };
    if (begin == end && gives(begin)) return begin;
    for (int64_t pad = std::min(begin, end); pad <= std::max(begin, end) + window; ++pad)
      if (gives(pad)) return pad;
    return std::nullopt;
  }

  // Stride, padding and window of a 2-D Conv/Pool, fitted to ONNX's output shape.
  std::optional<std::string> window_geometry(const onnx::NodeProto& node, const Shape& in, const Shape& out,
                                             const Shape& window, const HeightWidth& extra, HeightWidth& stride,
                                             HeightWidth& padding, HeightWidth* dilation = nullptr) const {
    if (in.size() != 4 || out.size() != 4 || window.size() != 2) return "only 2-D windows are supported";
    std::vector<int64_t> dilations = ints_attribute(node, "dilations").value_or(std::vector<int64_t>{1, 1});
    if (dilations.size() != 2) return "expected 2 dilations";
    for (int64_t d : dilations)
      if (d != 1 && (!dilation || d < 1 || d > (int64_t{1} << 24))) return "dilation " + std::to_string(d);
    if (dilation) *dilation = {dilations[0], dilations[1]};
    // A dilated window reaches (k − 1)·d + 1 (both at most 2^24: no overflow).
    Shape kernel = window;
    for (size_t k = 0; k < 2; ++k)
      if (kernel[k] >= 1 && kernel[k] <= (int64_t{1} << 24)) kernel[k] = (kernel[k] - 1) * dilations[k] + 1;
    std::vector<int64_t> strides = ints_attribute(node, "strides").value_or(std::vector<int64_t>{1, 1});
    std::vector<int64_t> pads = ints_attribute(node, "pads").value_or(std::vector<int64_t>{0, 0, 0, 0});
    if (strides.size() != 2 || pads.size() != 4) return "expected 2 strides and 4 pads";
    // Far beyond any real window; within it the padding search below neither
    // overflows nor runs long. A stride of 0 would divide by zero.
    constexpr int64_t kLimit = int64_t{1} << 24;
    auto within = [&](int64_t v, int64_t low) { return v >= low && v <= kLimit; };
    bool sane = within(extra.h, 0) && within(extra.w, 0) && within(kernel[0], 1) && within(kernel[1], 1) &&
                in[2] <= (int64_t{1} << 40) && in[3] <= (int64_t{1} << 40);
    for (int64_t v : strides) sane = sane && within(v, 1);
    for (int64_t v : pads) sane = sane && within(v, 0);
    if (!sane)
      return "window, stride or padding out of range (kernel " + join_shape(kernel) + ", strides " + join_shape(strides) +
             ", pads " + join_shape(pads) + ")";
    // A folded Pad: `in` is the padded tensor, the padding goes back into the window op.
    const int64_t h = in[2] - 2 * extra.h, w = in[3] - 2 * extra.w;
    std::optional<int64_t> ph = fit_padding(h, kernel[0], strides[0], out[2], pads[0] + extra.h, pads[2] + extra.h);
    std::optional<int64_t> pw = fit_padding(w, kernel[1], strides[1], out[3], pads[1] + extra.w, pads[3] + extra.w);
    if (!ph || !pw) return "padding " + join_shape(pads) + " has no symmetric equivalent";
    stride = {strides[0], strides[1]};
    padding = {*ph, *pw};
    return std::nullopt;
  }

  void lower_conv(const onnx::NodeProto& node, const std::vector<int>& slots) {
    if (slots.size() != 1 || slots[0] != 0) return unsupported(node, "its weight is computed from the data");
    const int64_t group = int_attribute(node, "group", 1);
    const Shape& in = shape_of(node, node.input(0));
    if (group < 1 || in.size() < 2 || in[1] % group != 0)
      return unsupported(node, "group " + std::to_string(group) + " does not divide the input channels");
    Ref x = ref_of(node, node.input(0));
    const Shape& weight = shape_of(node, node.input(1));
    if (weight.size() == 3 && in.size() == 3) return lower_conv1d(node, x, weight, group);
    if (weight.size() != 4) return unsupported(node, "only 1-D and 2-D convolution are supported");
    HeightWidth stride, padding, dilation;
    if (std::optional<std::string> why = window_geometry(node, in, shape_of(node, node.output(0)), {weight[2], weight[3]},
                                                         x.pad, stride, padding, &dilation))
      return unsupported(node, *why);
    NodeV1& n = emit(node, "conv2d", {x.ref}, {node.output(0)});
    n.filter = weight;
    if (stride != HeightWidth{1, 1}) n.stride = stride;
    if (padding != HeightWidth{0, 0}) n.padding = padding;
    if (dilation != HeightWidth{1, 1}) n.dilation = dilation;
    if (group != 1) n.groups = group;
    name_weight(n, node.input(1));
    if (node.input_size() > 2 && !node.input(2).empty()) add_pointwise_weight(last_node(), node.input(2), 1);
  }

  // A 1-D Conv over x [b, C, L]: a conv2d over [b, C, L, 1] with an R x 1
  // filter, between reshapes NAME/in and NAME/out.
  void lower_conv1d(const onnx::NodeProto& node, const Ref& x, const Shape& weight, int64_t group) {
    const Shape& in = shape_of(node, node.input(0));
    const Shape& out = shape_of(node, node.output(0));
    const int64_t stride = ints_attribute(node, "strides").value_or(std::vector<int64_t>{1}).at(0);
    const int64_t dilation = ints_attribute(node, "dilations").value_or(std::vector<int64_t>{1}).at(0);
    const std::vector<int64_t> pads = ints_attribute(node, "pads").value_or(std::vector<int64_t>{0, 0});
    constexpr int64_t kLimit = int64_t{1} << 24;  // as window_geometry: no overflow, a short padding search
    if (out.size() != 3 || pads.size() != 2 || x.pad != HeightWidth{0, 0} || stride < 1 || stride > kLimit ||
        dilation < 1 || dilation > kLimit || weight[2] < 1 || weight[2] > kLimit || pads[0] < 0 || pads[0] > kLimit ||
        pads[1] < 0 || pads[1] > kLimit || in[2] > (int64_t{1} << 40))
      return unsupported(node, "1-D window, stride, dilation or padding out of range");
    std::optional<int64_t> pad = fit_padding(in[2], (weight[2] - 1) * dilation + 1, stride, out[2], pads[0], pads[1]);
    if (!pad) return unsupported(node, "padding " + join_shape(pads) + " has no symmetric equivalent");
    NodeV1& lifted = push_helper(node.name() + "/in", "reshape", x.ref, {in[0], in[1], in[2], 1});
    lifted.shape = Shape{in[0], in[1], in[2], 1};
    std::string lifted_name = lifted.name;
    NodeV1 n;
    n.name = claim_name(node);
    n.op = "conv2d";
    n.inputs = {lifted_name};
    n.filter = Shape{weight[0], weight[1], weight[2], 1};
    if (stride != 1) n.stride = HeightWidth{stride, 1};
    if (*pad != 0) n.padding = HeightWidth{*pad, 0};
    if (dilation != 1) n.dilation = HeightWidth{dilation, 1};
    if (group != 1) n.groups = group;
    n.outputs = std::vector<Shape>{{out[0], out[1], out[2], 1}};
    // The filter is the weight [N, C/G, R] with a unit width, listed as held.
    name_weight(n, node.input(1));
    if (n.weights) n.weight_layout = "ncr";
    std::string conv = n.name;
    result_.graph.nodes.push_back(std::move(n));
    const int conv_index = last_node();
    if (node.input_size() > 2 && !node.input(2).empty()) add_pointwise_weight(conv_index, node.input(2), 1);
    NodeV1& flat = push_helper(conv + "/out", "reshape", conv, out);
    flat.shape = out;
    refs_[node.output(0)] = Ref{flat.name, last_node(), {}};
  }

  void lower_pool(const onnx::NodeProto& node) {
    if (node.output_size() > 1 && is_used(node.output(1))) return unsupported(node, "its indices output is used");
    Ref x = ref_of(node, node.input(0));
    std::vector<int64_t> kernel = ints_attribute(node, "kernel_shape").value_or(std::vector<int64_t>{});
    HeightWidth stride, padding;
    if (std::optional<std::string> why = window_geometry(node, shape_of(node, node.input(0)), shape_of(node, node.output(0)),
                                                         kernel, x.pad, stride, padding))
      return unsupported(node, *why);
    // A 1x1 window with stride 1 (AdaptiveAvgPool on an input already that size) is the identity.
    if (kernel == std::vector<int64_t>{1, 1} && stride == HeightWidth{1, 1} && padding == HeightWidth{0, 0})
      return alias(node.output(0), Ref{x.ref, x.node, {}});
    NodeV1& n = emit(node, "pool2d", {x.ref}, {node.output(0)});
    n.window = HeightWidth{kernel[0], kernel[1]};
    if (stride != HeightWidth{1, 1}) n.stride = stride;
    if (padding != HeightWidth{0, 0}) n.padding = padding;
  }

  void lower_pad(const onnx::NodeProto& node) {
    std::string mode = string_attribute(node, "mode", "constant");
    std::optional<std::vector<int64_t>> pads = opset_ >= 11 ? input_ints(node, 1) : ints_attribute(node, "pads");
    const Shape& in = shape_of(node, node.input(0));
    // No padding at all (Swin pads its windows to a multiple of 7, often by 0): the identity.
    if (pads && std::all_of(pads->begin(), pads->end(), [](int64_t p) { return p == 0; }))
      return alias(node.output(0), ref_of(node, node.input(0)));
    if (mode != "constant" || !pads || pads->size() != 2 * in.size() || in.size() != 4)
      return unsupported(node, "only constant padding of the last two axes of a 4-D tensor");
    const std::vector<int64_t>& p = *pads;
    if (p[0] || p[1] || p[4] || p[5] || p[2] != p[6] || p[3] != p[7] || p[2] < 0 || p[3] < 0)
      return unsupported(node, "only symmetric padding of height and width");
    for (int user : consumers_[node.output(0)])
      if (!is_one_of(graph_.node(user).op_type(), {"Conv", "MaxPool", "AveragePool"}))
        return unsupported(node, "it feeds " + graph_.node(user).op_type() + " '" + graph_.node(user).name() +
                                     "', not a Conv or Pool");
    Ref x = ref_of(node, node.input(0));
    x.pad.h += p[2];
    x.pad.w += p[3];
    x.node = -1;
    alias(node.output(0), x);
  }

  void lower_reduce_mean(const onnx::NodeProto& node) {
    const Shape& in = shape_of(node, node.input(0));
    // ReduceSum costs what ReduceMean does (the all-reduce of the partial
    // sums); it takes its axes as an input from opset 13, ReduceMean from 18.
    const bool axes_input = node.op_type() == "ReduceSum" ? opset_ >= 13 : opset_ >= 18;
    std::optional<std::vector<int64_t>> axes = axes_input ? input_ints(node, 1) : ints_attribute(node, "axes");
    std::vector<int64_t> all;
    if (!axes || axes->empty()) {
      for (size_t d = 0; d < in.size(); ++d) all.push_back(static_cast<int64_t>(d));
      axes = all;
    }
    NodeV1& n = emit(node, "reduce_mean", {ref_of(node, node.input(0)).ref}, {node.output(0)});
    n.axes = *axes;
    n.keepdims = int_attribute(node, "keepdims", 1) != 0;
  }

  // Einsum letters for a MatMul/Gemm of shapes a and b (batch dims must match exactly, no broadcasting).
  std::optional<std::string> matmul_equation(const Shape& a, const Shape& b, bool trans_a, bool trans_b) const {
    if (a.size() < 2 || b.size() < 2 || a.size() > 12 || b.size() > 12) return std::nullopt;
    size_t batch_a = a.size() - 2, batch_b = b.size() - 2, batch = std::max(batch_a, batch_b);
    std::string letters = "abcdefghij";
    std::string out_batch = letters.substr(0, batch), ta, tb;
    for (size_t d = 0; d < batch_a; ++d) {
      size_t o = batch - batch_a + d;
      if (d < batch_a && o >= batch - batch_b && a[d] != b[o - (batch - batch_b)]) return std::nullopt;
      ta += letters[o];
    }
    for (size_t d = 0; d < batch_b; ++d) {
      size_t o = batch - batch_b + d;
      if (o >= batch - batch_a && b[d] != a[o - (batch - batch_a)]) return std::nullopt;
      tb += letters[o];
    }
    ta += trans_a ? "km" : "mk";
    tb += trans_b ? "nk" : "kn";
    return ta + "," + tb + "->" + out_batch + "mn";
  }

  void lower_gemm(const onnx::NodeProto& node) {
    bool trans_a = int_attribute(node, "transA", 0) != 0, trans_b = int_attribute(node, "transB", 0) != 0;
    if (node.input_size() > 2 && is_active(node.input(2))) return unsupported(node, "its C operand is an activation");
    if (is_active(node.input(0)) && !is_active(node.input(1)) && !trans_a) {
      const Shape& b = shape_of(node, node.input(1));
      NodeV1& n = emit(node, "fc", {ref_of(node, node.input(0)).ref}, {node.output(0)});
      n.units = trans_b ? b[0] : b[1];
      name_fc_weight(n, node.input(1), /*read_nk=*/trans_b);
      if (node.input_size() > 2 && !node.input(2).empty()) add_pointwise_weight(last_node(), node.input(2), std::nullopt);
      return;
    }
    if (!lower_einsum_matmul(node, trans_a, trans_b)) return;
    if (node.input_size() > 2 && !node.input(2).empty()) add_pointwise_weight(last_node(), node.input(2), std::nullopt);
  }

  void lower_matmul(const onnx::NodeProto& node) {
    bool a_active = is_active(node.input(0)), b_active = is_active(node.input(1));
    const Shape& a = shape_of(node, node.input(0));
    const Shape& b = shape_of(node, node.input(1));
    if (a_active && !b_active && b.size() == 2 && a.size() >= 2) {
      NodeV1& n = emit(node, "fc", {ref_of(node, node.input(0)).ref}, {node.output(0)});
      n.units = b[1];
      name_fc_weight(n, node.input(1), /*read_nk=*/false);
      return;
    }
    if (a_active && b_active && a.size() == b.size() && a.size() >= 2 && std::equal(a.begin(), a.end() - 2, b.begin())) {
      emit(node, "matmul", {ref_of(node, node.input(0)).ref, ref_of(node, node.input(1)).ref}, {node.output(0)});
      return;
    }
    lower_einsum_matmul(node, false, false);
  }

  // An einsum vertex for a MatMul or Gemm; false when unsupported.
  bool lower_einsum_matmul(const onnx::NodeProto& node, bool trans_a, bool trans_b) {
    std::optional<std::string> equation =
        matmul_equation(shape_of(node, node.input(0)), shape_of(node, node.input(1)), trans_a, trans_b);
    if (!equation) {
      unsupported(node, "operands of rank < 2 or broadcast batch dimensions");
      return false;
    }
    // An operand that is a Transpose of a parameter is read as the model holds
    // the parameter, with its letters permuted: "bkn" on a view with perm
    // [0, 2, 1] reads the parameter as "bnk". The einsum computes the same.
    const size_t arrow = equation->find("->");
    std::string terms[2] = {equation->substr(0, equation->find(',')),
                            equation->substr(equation->find(',') + 1, arrow - equation->find(',') - 1)};
    std::vector<std::string> inputs;
    for (size_t j = 0; j < 2; ++j) {
      const std::string& tensor = node.input(static_cast<int>(j));
      auto parameter = parameters_.find(tensor);
      if (is_active(tensor) || parameter == parameters_.end() || parameter->second.as_held() ||
          parameter->second.perm.size() != terms[j].size()) {
        inputs.push_back(ref_of(node, tensor).ref);
        continue;
      }
      std::string held(terms[j].size(), '?');
      for (size_t i = 0; i < terms[j].size(); ++i) held[static_cast<size_t>(parameter->second.perm[i])] = terms[j][i];
      terms[j] = held;
      inputs.push_back(parameter_tensor(node, parameter->second));
    }
    NodeV1& n = emit(node, "einsum", inputs, {node.output(0)});
    n.equation = terms[0] + "," + terms[1] + equation->substr(arrow);
    return true;
  }

  void lower_binary(const onnx::NodeProto& node, const std::vector<int>& slots) {
    const Shape& out = shape_of(node, node.output(0));
    if (slots.size() == 1) {
      const std::string& x = node.input(slots[0]);
      if (shape_of(node, x) != out) {
        // A constant widens the activation (a [b, s, 1] scale times a
        // [b, s, d] constant): the broadcast, then the operation.
        return emit_expand_then_elementwise(node, ref_of(node, x), out);
      }
      // A bias, scale or constant applied to one activation: pointwise work of
      // its producer, which also lists the bias or scale among its weights.
      Ref in = ref_of(node, x);
      if (!is_one_of(node.op_type(), {"Add", "Sub", "Mul", "Div"})) return fold(node.output(0), in, 1);
      std::vector<std::string> others;
      for (int k = 0; k < node.input_size(); ++k)
        if (k != slots[0] && !node.input(k).empty()) others.push_back(node.input(k));
      if (in.node < 0) {
        // No single-output layer produces `x` (a graph input, an output of a
        // split): a bias or scale gets a vertex of its own that lists it,
        // costed as the elementwise op it is.
        auto is_weight = [&](const std::string& t) { return as_pointwise_weight(t, out, std::nullopt).has_value(); };
        if (std::any_of(others.begin(), others.end(), is_weight)) {
          emit(node, "elementwise", {in.ref}, {node.output(0)});
          for (const std::string& t : others) add_pointwise_weight(last_node(), t, std::nullopt);
          return;
        }
      }
      for (const std::string& t : others) add_pointwise_weight(in.node, t, std::nullopt);
      const bool own_affine = in.node >= 0 && prices_own_affine(result_.graph.nodes[in.node].op) &&
                              std::all_of(others.begin(), others.end(), [&](const std::string& t) {
                                return as_pointwise_weight(t, out, std::nullopt).has_value();
                              });
      return fold(node.output(0), in, own_affine ? 0 : 1);
    }
    // Activations broadcast against each other (a bias [s, d] computed from
    // the data, a squeeze-excitation scale [b, c, 1, 1]): one elementwise
    // vertex over the output. A constant operand must not widen the output.
    std::vector<std::string> inputs;
    Shape broadcast;
    for (int slot : slots) {
      const Shape& in = shape_of(node, node.input(slot));
      if (in.size() > broadcast.size()) broadcast.insert(broadcast.begin(), in.size() - broadcast.size(), 1);
      for (size_t d = 0; d < in.size(); ++d) {
        int64_t& b = broadcast[broadcast.size() - in.size() + d];
        b = b == 1 ? in[d] : b;
      }
      inputs.push_back(ref_of(node, node.input(slot)).ref);
    }
    if (broadcast != out) return unsupported(node, "a constant operand broadcasts the activations to " + join_shape(out));
    emit(node, "elementwise", inputs, {node.output(0)});
  }

  // `x` broadcast to `out` (an expand vertex NAME/expand), then the
  // elementwise operation on it (NAME).
  void emit_expand_then_elementwise(const onnx::NodeProto& node, const Ref& x, const Shape& out) {
    NodeV1 e;
    e.name = unique_name(node.name() + "/expand");
    e.op = "expand";
    e.inputs = {x.ref};
    e.shape = out;
    e.outputs = std::vector<Shape>{out};
    result_.graph.nodes.push_back(e);
    emit(node, "elementwise", {e.name}, {node.output(0)});
  }

  // A vertex the importer adds around a node's own (NAME/in, NAME/out), with its one output's shape.
  NodeV1& push_helper(const std::string& wanted, const std::string& op, const std::string& input, const Shape& out) {
    NodeV1 n;
    n.name = unique_name(wanted);
    n.op = op;
    n.inputs = {input};
    n.outputs = std::vector<Shape>{out};
    result_.graph.nodes.push_back(std::move(n));
    return result_.graph.nodes.back();
  }

  // ONNX LSTM and GRU (one node is one layer): the `lstm` op with its gate
  // count (4, 3), input size and directions. Time-major X [s, b, I]
  // (layout 0) reaches pase's (b, s, I) through a transpose NAME/in, and Y
  // [s, D, b, U] comes back through NAME/out and NAME/y; batch-major X
  // [b, s, I] (layout 1) is read as it is and Y [b, s, D, U] is a reshape
  // NAME/y. Y_h and Y_c ([D, b, U], batch-major [b, D, U]) are the lstm
  // output's last step (NAME/h, NAME/c, each from a slice NAME/h/last): the
  // backward direction's Y_h is really its first step and Y_c the cell
  // state, which the lstm vertex does not output; both have that slice's
  // shape and split, and cost the same data movement. A reverse layer costs
  // what a forward one does.
  void lower_rnn(const onnx::NodeProto& node, const std::vector<int>& slots) {
    const int64_t gates = node.op_type() == "LSTM" ? 4 : 3;
    if (slots != std::vector<int>{0}) return unsupported(node, "a weight or initial state computed from the data");
    const std::string direction = string_attribute(node, "direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      return unsupported(node, "direction '" + direction + "'");
    const int64_t directions = direction == "bidirectional" ? 2 : 1;
    const int64_t layout = int_attribute(node, "layout", 0);
    if (layout != 0 && layout != 1) return unsupported(node, "layout " + std::to_string(layout));
    const bool batch_major = layout == 1;
    const Shape& x = shape_of(node, node.input(0));
    const int64_t hidden = int_attribute(node, "hidden_size", 0);
    if (x.size() != 3) return unsupported(node, "an input of rank " + std::to_string(x.size()) + ", not 3");
    // Bounded so that D·gates·hidden and the like stay far from 2^63.
    if (hidden < 1 || hidden > (int64_t{1} << 40)) return unsupported(node, "hidden_size " + std::to_string(hidden));
    bool used = false;
    for (int k = 0; k < node.output_size() && k < 3; ++k) used = used || is_used(node.output(k));
    if (!used) return;
    const int64_t batch = batch_major ? x[0] : x[1], steps = batch_major ? x[1] : x[0], features = x[2];
    const int64_t out_features = directions * hidden;
    std::string input = ref_of(node, node.input(0)).ref;
    if (!batch_major) {
      NodeV1& in = push_helper(node.name() + "/in", "transpose", input, {batch, steps, features});
      in.perm = std::vector<int64_t>{1, 0, 2};
      input = in.name;
    }
    NodeV1 n;
    n.name = claim_name(node);
    n.op = "lstm";
    n.inputs = {input};
    n.units = hidden;
    n.layers = 1;
    if (gates != 4) n.gates = gates;
    if (features != hidden) n.input_size = features;
    if (directions != 1) n.directions = directions;
    name_rnn_weights(node, n, gates * hidden, directions, hidden, features);
    n.outputs = std::vector<Shape>{{batch, steps, out_features}};
    const std::string rnn = n.name;
    result_.graph.nodes.push_back(std::move(n));
    if (is_used(node.output(0))) {
      const Shape& y = shape_of(node, node.output(0));
      if (!batch_major && directions == 2) {
        // (b, s, 2·U) -> (b, s, 2, U) -> ONNX's (s, 2, b, U).
        NodeV1& out = push_helper(rnn + "/out", "reshape", rnn, {batch, steps, 2, hidden});
        out.shape = Shape{batch, steps, 2, hidden};
        std::string out_name = out.name;
        NodeV1& shaped = push_helper(rnn + "/y", "transpose", out_name, y);
        shaped.perm = std::vector<int64_t>{1, 2, 0, 3};
      } else {
        std::string from = rnn;
        if (!batch_major) {
          NodeV1& out = push_helper(rnn + "/out", "transpose", rnn, {steps, batch, hidden});
          out.perm = std::vector<int64_t>{1, 0, 2};
          from = out.name;
        }
        NodeV1& shaped = push_helper(rnn + "/y", "reshape", from, y);
        shaped.shape = y;
      }
      refs_[node.output(0)] = Ref{result_.graph.nodes.back().name, last_node(), {}};
    }
    for (int k = 1; k < node.output_size() && k < 3; ++k) {
      if (!is_used(node.output(k))) continue;
      const std::string state = rnn + (k == 1 ? "/h" : "/c");
      const Shape& target = shape_of(node, node.output(k));
      NodeV1& last = push_helper(state + "/last", "slice", rnn, {batch, 1, out_features});
      last.axis = 1;
      last.shape = Shape{batch, 1, out_features};
      std::string from = last.name;
      if (!batch_major && directions == 2) {
        // (b, 1, 2·U) -> (b, 2, U) -> ONNX's (2, b, U).
        NodeV1& parts = push_helper(state + "/directions", "reshape", from, {batch, 2, hidden});
        parts.shape = Shape{batch, 2, hidden};
        std::string parts_name = parts.name;
        NodeV1& shaped = push_helper(state, "transpose", parts_name, target);
        shaped.perm = std::vector<int64_t>{1, 0, 2};
      } else {
        NodeV1& shaped = push_helper(state, "reshape", from, target);
        shaped.shape = target;
      }
      refs_[node.output(k)] = Ref{result_.graph.nodes.back().name, last_node(), {}};
    }
  }

  // `weights` and `weight_layout` of an lstm vertex: the exporter's
  // parameters behind the ONNX node's W, R and B. Either ONNX's own, each a
  // parameter as held (W [D, G, I], R [D, G, U], B [D, 2·G] with G =
  // gates·U: "onnx"), or PyTorch's weight_ih [G, I], weight_hh [G, U],
  // bias_ih and bias_hh [G] per direction, which its exporter slices into
  // ONNX's gate order, concatenates and unsqueezes ("torch"). Anything else
  // keeps the default NODE/weight.
  void name_rnn_weights(const onnx::NodeProto& node, NodeV1& n, int64_t gate_units, int64_t directions, int64_t hidden,
                        int64_t features) {
    auto slot = [&](int k) { return k < node.input_size() ? node.input(k) : std::string(); };
    auto shaped = [&](const std::string& t, const Shape& shape) {
      const Shape* s = facts_.shape(t);
      return s != nullptr && *s == shape;
    };
    const std::string w = slot(1), r = slot(2), b = slot(3);
    std::optional<std::string> w_name = parameter_name(w), r_name = parameter_name(r);
    if (w_name && r_name) {
      if (!shaped(w, {directions, gate_units, features}) || !shaped(r, {directions, gate_units, hidden})) return;
      std::vector<std::string> names = {*w_name, *r_name};
      if (!b.empty()) {
        std::optional<std::string> b_name = parameter_name(b);
        if (!b_name || !shaped(b, {directions, 2 * gate_units})) return;
        names.push_back(*b_name);
      }
      n.weights = names;
      n.weight_layout = "onnx";
      return;
    }
    std::optional<std::vector<std::string>> ih = sources_of(w), hh = sources_of(r);
    std::optional<std::vector<std::string>> bias = b.empty() ? std::vector<std::string>{} : sources_of(b);
    auto all_shaped = [&](const std::vector<std::string>& names, const Shape& shape) {
      return std::all_of(names.begin(), names.end(), [&](const std::string& t) { return shaped(t, shape); });
    };
    const auto d = static_cast<size_t>(directions);
    if (!ih || !hh || !bias || ih->size() != d || hh->size() != d || (!bias->empty() && bias->size() != 2 * d) ||
        !all_shaped(*ih, {gate_units, features}) || !all_shaped(*hh, {gate_units, hidden}) ||
        !all_shaped(*bias, {gate_units}))
      return;
    std::vector<std::string> names;
    for (size_t k = 0; k < d; ++k) {
      names.push_back((*ih)[k]);
      names.push_back((*hh)[k]);
      if (!bias->empty()) {
        names.push_back((*bias)[2 * k]);
        names.push_back((*bias)[2 * k + 1]);
      }
    }
    n.weights = names;
    n.weight_layout = "torch";
  }

  // The parameters (as held) a constant tensor is built from through
  // Slice, Concat, Unsqueeze, Squeeze, Reshape, Identity and Cast, each
  // once, in the order the ops read them; nullopt when it is built
  // otherwise (or from the data).
  std::optional<std::vector<std::string>> sources_of(const std::string& tensor) {
    if (producers_.empty())
      for (int i = 0; i < graph_.node_size(); ++i)
        for (const std::string& out : graph_.node(i).output()) producers_.emplace(out, i);
    std::vector<std::string> found;
    std::vector<std::string> pending = {tensor};
    std::set<std::string> seen;
    while (!pending.empty()) {
      const std::string t = pending.back();
      pending.pop_back();
      if (!seen.insert(t).second) continue;
      if (is_active(t)) return std::nullopt;
      if (std::optional<std::string> name = parameter_name(t)) {
        if (std::find(found.begin(), found.end(), *name) == found.end()) found.push_back(*name);
        continue;
      }
      auto made = producers_.find(t);
      if (made == producers_.end()) return std::nullopt;
      const onnx::NodeProto* producer = &graph_.node(made->second);
      const std::string& op = producer->op_type();
      if (op == "Concat") {
        for (int k = producer->input_size(); k-- > 0;) pending.push_back(producer->input(k));
      } else if (is_one_of(op, {"Slice", "Unsqueeze", "Squeeze", "Reshape", "Identity", "Cast"})) {
        if (producer->input_size() > 0) pending.push_back(producer->input(0));
      } else {
        return std::nullopt;
      }
    }
    return found;
  }

  // Any Einsum numpy accepts but a diagonal (onnximport/einsum_chain.h): the
  // letters one operand alone has summed out, then pairwise contractions
  // from the left (each an einsum, or a contraction where a side is empty);
  // operands may be activations or parameters as held.
  void lower_einsum(const onnx::NodeProto& node) {
    const std::string equation = string_attribute(node, "equation", "");
    std::vector<Shape> shapes;
    std::vector<size_t> ranks;
    for (const std::string& in : node.input()) {
      shapes.push_back(shape_of(node, in));
      ranks.push_back(shapes.back().size());
    }
    std::vector<EinsumStep> steps;
    std::vector<const char*> ops;  // of each Contract step
    std::map<char, int64_t> size;
    try {
      const EinsumTerms terms = expand_einsum(equation, ranks);
      for (size_t j = 0; j < terms.operands.size(); ++j)
        for (size_t d = 0; d < terms.operands[j].size(); ++d) {
          const char c = terms.operands[j][d];
          auto [it, fresh] = size.emplace(c, shapes[j][d]);
          if (!fresh && it->second != shapes[j][d])
            return unsupported(node, "'" + equation + "': letter '" + std::string(1, c) + "' is " +
                                         std::to_string(it->second) + " in one operand and " + std::to_string(shapes[j][d]) +
                                         " in another (a broadcast size-1 dimension)");
        }
      steps = plan_einsum(terms);
      for (const EinsumStep& step : steps)
        ops.push_back(step.kind == EinsumStep::Kind::Contract ? contraction_op(step.equation) : "");
    } catch (const std::invalid_argument& error) {
      return unsupported(node, "'" + equation + "': " + error.what());
    }
    if (steps.empty()) return alias(node.output(0), ref_of(node, node.input(0)));
    // Vertices before the last: NAME/sumJ sums operand J, NAME/contractJ
    // contracts the result so far with operand J; the last is NAME.
    std::vector<std::string> names;
    for (size_t s = 0; s < steps.size(); ++s) {
      const EinsumStep& step = steps[s];
      NodeV1 n;
      for (int in : step.inputs)
        n.inputs.push_back(in >= 0 ? ref_of(node, node.input(in)).ref : names[static_cast<size_t>(-1 - in)]);
      Shape out;
      for (char c : step.term) out.push_back(size[c]);
      n.outputs = std::vector<Shape>{out};
      std::string suffix;
      if (step.kind == EinsumStep::Kind::Sum) {
        n.op = "reduce_mean";
        n.axes = step.axes;
        suffix = "/sum" + std::to_string(step.operand);
      } else if (step.kind == EinsumStep::Kind::Contract) {
        n.op = ops[s];
        n.equation = step.equation;
        suffix = "/contract" + std::to_string(step.operand);
      } else {
        n.op = "transpose";
        n.perm = step.perm;
        suffix = "/transpose";
      }
      n.name = s + 1 == steps.size() ? claim_name(node) : unique_name(node.name() + suffix);
      names.push_back(n.name);
      result_.graph.nodes.push_back(std::move(n));
    }
    refs_[node.output(0)] = Ref{names.back(), last_node(), {}};
  }

  void lower_concat(const onnx::NodeProto& node) {
    std::vector<std::string> inputs;
    for (const std::string& in : node.input()) inputs.push_back(ref_of(node, in).ref);
    if (inputs.size() == 1) return alias(node.output(0), ref_of(node, node.input(0)));
    NodeV1& n = emit(node, "concat", inputs, {node.output(0)});
    n.axis = int_attribute(node, "axis", 0);
  }

  void lower_split(const onnx::NodeProto& node) {
    const Shape& in = shape_of(node, node.input(0));
    int64_t axis = int_attribute(node, "axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(in.size());
    std::vector<int64_t> parts;
    for (const std::string& out : node.output()) parts.push_back(shape_of(node, out).at(static_cast<size_t>(axis)));
    if (parts.size() == 1) return alias(node.output(0), ref_of(node, node.input(0)));
    std::vector<std::string> outs(node.output().begin(), node.output().end());
    NodeV1& n = emit(node, "split", {ref_of(node, node.input(0)).ref}, outs);
    n.axis = axis;
    n.parts = parts;
  }

  void lower_gather(const onnx::NodeProto& node) {
    bool table_active = is_active(node.input(0));
    if (!table_active && data_inputs_.count(node.input(1))) {
      const Shape& table = shape_of(node, node.input(0));
      const Shape& ids = shape_of(node, node.input(1));
      if (table.size() != 2 || ids.size() != 2 || int_attribute(node, "axis", 0) != 0)
        return unsupported(node, "embedding needs a [vocab, dim] table and [batch, sequence] ids");
      NodeV1& n = emit(node, "embedding", {ref_of(node, node.input(1)).ref}, {node.output(0)});
      n.vocab = table[0];
      n.dim = table[1];
      name_weight(n, node.input(0));
      return;
    }
    if (!table_active) return unsupported(node, "embedding ids must be a graph input");
    unsupported(node, "gathers along a computed or multi-element index");
  }

  void add_losses() {
    if (options_.loss == "none") return;
    for (const onnx::ValueInfoProto& out : graph_.output()) {
      if (!is_active(out.name())) continue;
      auto it = refs_.find(out.name());
      std::string input = it != refs_.end() ? it->second.ref : externals_.count(out.name()) ? externals_[out.name()] : "";
      if (input.empty()) continue;
      NodeV1 n;
      n.name = unique_name("loss");
      n.op = options_.loss;
      n.inputs = {input};
      result_.graph.nodes.push_back(n);
    }
  }

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

}  // namespace

OnnxImport lower_graph(const onnx::GraphProto& graph, const TensorFacts& facts, const std::set<std::string>& data_inputs,
                       const std::map<std::string, ParameterView>& parameters, const OnnxImportOptions& options,
                       const std::string& source, int64_t opset) {
  return Lowerer(graph, facts, data_inputs, parameters, options, source, opset).run();
}

}  // namespace pase
