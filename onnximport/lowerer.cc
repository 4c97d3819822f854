#include "onnximport/lowerer.h"

#include <algorithm>

#include "graphs/op_registry.h"
#include "onnximport/lower_graph.h"
#include "onnximport/lowering_helpers.h"
#include "onnximport/lowering_table.h"
#include "onnximport/onnx_model.h"

namespace pase {

Lowerer::Lowerer(const onnx::GraphProto& graph, const TensorFacts& facts, const std::set<std::string>& data_inputs,
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

OnnxImport Lowerer::run() {
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

void Lowerer::fail(const onnx::NodeProto& node, const std::string& message) const {
  throw InputError(source_ + ": node '" + node.name() + "': " + message);
}

const Shape& Lowerer::shape_of(const onnx::NodeProto& node, const std::string& tensor) const {
  const Shape* shape = facts_.shape(tensor);
  if (!shape) fail(node, "cannot infer the shape of '" + tensor + "' (ONNX shape inference and the constant evaluator left it unknown)");
  return *shape;
}

std::string Lowerer::claim_name(const onnx::NodeProto& node) {
  std::string name = emitted_names_.count(node.name()) ? unique_name(node.name()) : node.name();
  emitted_names_.insert(name);
  return name;
}

std::string Lowerer::unique_name(const std::string& wanted) {
  std::string name = wanted;
  for (int k = 2; used_names_.count(name); ++k) name = wanted + "_" + std::to_string(k);
  used_names_.insert(name);
  return name;
}

bool Lowerer::data_input_behind(const std::string& tensor) const {
  if (data_inputs_.count(tensor)) return true;
  auto alias = refs_.find(tensor);
  if (alias == refs_.end() || alias->second.node != -1) return false;
  for (const std::string& input : data_inputs_) {
    auto ext = externals_.find(input);
    if (ext != externals_.end() && ext->second == alias->second.ref) return true;
  }
  return false;
}

Ref Lowerer::ref_of(const onnx::NodeProto& node, const std::string& tensor) {
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

std::string Lowerer::parameter_tensor(const onnx::NodeProto& node, const ParameterView& parameter) {
  auto named = parameter_tensors_.find(parameter.name);
  if (named == parameter_tensors_.end()) {
    std::string name = unique_name(pase_name(parameter.name, "weight"));
    result_.graph.tensors.emplace_back(name, shape_of(node, parameter.name));
    result_.graph.parameters.push_back(name);
    named = parameter_tensors_.emplace(parameter.name, name).first;
  }
  return named->second;
}

std::optional<std::string> Lowerer::parameter_name(const std::string& tensor) const {
  auto it = parameters_.find(tensor);
  if (it == parameters_.end() || !it->second.as_held()) return std::nullopt;
  return it->second.name;
}

void Lowerer::name_weight(NodeV1& n, const std::string& tensor) const {
  if (std::optional<std::string> name = parameter_name(tensor)) n.weights = std::vector<std::string>{*name};
}

void Lowerer::name_fc_weight(NodeV1& n, const std::string& tensor, bool read_nk) const {
  auto it = parameters_.find(tensor);
  if (it == parameters_.end() || it->second.perm.size() != 2) return;
  // Operand dimension i is the parameter's dimension perm[i]; N is operand dimension 0 or 1.
  const int64_t n_of_parameter = it->second.perm[read_nk ? 0 : 1];
  n.weights = std::vector<std::string>{it->second.name};
  if (n_of_parameter == 1) n.weight_layout = "kn";
}

std::optional<PointwiseWeightV1> Lowerer::as_pointwise_weight(const std::string& tensor, const Shape& out,
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

void Lowerer::add_pointwise_weight(int index, const std::string& tensor, std::optional<int64_t> axis) {
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

void Lowerer::fold(const std::string& out, const Ref& in, int pointwise) {
  if (in.node >= 0 && pointwise > 0 && takes_pointwise(result_.graph.nodes[in.node].op)) {
    NodeV1& producer = result_.graph.nodes[in.node];
    producer.pointwise = producer.pointwise.value_or(0) + pointwise;
  }
  alias(out, in);
}

NodeV1& Lowerer::emit(const onnx::NodeProto& node, const std::string& op, std::vector<std::string> inputs,
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

std::vector<int> Lowerer::active_inputs(const onnx::NodeProto& node) const {
  std::vector<int> slots;
  for (int k = 0; k < node.input_size(); ++k)
    if (is_active(node.input(k))) slots.push_back(k);
  return slots;
}

std::optional<std::vector<int64_t>> Lowerer::input_ints(const onnx::NodeProto& node, int k) const {
  if (k >= node.input_size() || node.input(k).empty()) return std::nullopt;
  const ConstantValue* v = facts_.value(node.input(k));
  if (!v) return std::nullopt;
  std::vector<int64_t> out;
  for (double x : v->data)
    out.push_back(x > 9e18 ? INT64_MAX : x < -9e18 ? INT64_MIN : static_cast<int64_t>(x));
  return out;
}

void Lowerer::unsupported(const onnx::NodeProto& node, const std::string& reason) {
  unsupported_.push_back({node.op_type(), node.name(), reason, node_index(node)});
  if (options_.lenient) pass_through(node, reason);
  else
    for (const std::string& out : node.output()) refs_[out] = Ref{node.name(), -1, {}};  // keeps later nodes mappable
}

int Lowerer::node_index(const onnx::NodeProto& node) const {
  for (int i = 0; i < graph_.node_size(); ++i)
    if (&graph_.node(i) == &node) return i;
  return -1;
}

NodeV1& Lowerer::push_helper(const std::string& wanted, const std::string& op, const std::string& input, const Shape& out) {
  NodeV1 n;
  n.name = unique_name(wanted);
  n.op = op;
  n.inputs = {input};
  n.outputs = std::vector<Shape>{out};
  result_.graph.nodes.push_back(std::move(n));
  return result_.graph.nodes.back();
}

void Lowerer::add_losses() {
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

void Lowerer::lower(int i) {
  const onnx::NodeProto& node = graph_.node(i);
  bool any_active = false;
  for (const std::string& out : node.output()) any_active = any_active || is_active(out);
  if (!any_active) return;
  if (auto it = norms_.find(i); it != norms_.end()) return lower_norm(node, it->second);
  if (absorbed_.count(i)) return;
  for (const std::string& out : node.output())
    if (is_active(out) && is_used(out) && !facts_.shape(out))
      fail(node, "cannot infer the shape of output '" + out + "' (" + node.op_type() +
                     "; ONNX shape inference and the constant evaluator left it unknown)");
  if (!node.domain().empty() && node.domain() != "ai.onnx") return unsupported(node, "domain " + node.domain());
  if (group_of_.count(i)) return lower_group_member(i);
  const std::vector<int> slots = active_inputs(node);
  if (slots.empty()) return;  // only Shape-like outputs
  if (const Lowering* lowering = find_lowering(node.op_type())) return (this->**lowering)(node, slots);
  unsupported(node, "");
}

OnnxImport lower_graph(const onnx::GraphProto& graph, const TensorFacts& facts, const std::set<std::string>& data_inputs,
                       const std::map<std::string, ParameterView>& parameters, const OnnxImportOptions& options,
                       const std::string& source, int64_t opset) {
  return Lowerer(graph, facts, data_inputs, parameters, options, source, opset).run();
}

}  // namespace pase
