#include "onnximport/newer_opsets.h"

#include <optional>
#include <set>
#include <vector>

#include <onnx/defs/schema.h>

#include "base/error.h"
#include "onnximport/constant_value.h"
#include "onnximport/onnx_model.h"

namespace pase {
namespace {

// Reductions whose axes became input 1 at opset 18 (ReduceSum did at 13, which the library knows).
bool takes_axes_input_since_18(const std::string& op) {
  static const std::set<std::string> ops = {"ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
                                            "ReduceL1",   "ReduceL2",     "ReduceLogSum",    "ReduceLogSumExp",
                                            "ReduceSumSquare"};
  return ops.count(op) > 0;
}

// The integer values of a graph constant: an initializer or a Constant node's output.
std::optional<std::vector<int64_t>> constant_ints(const onnx::GraphProto& graph, const std::string& name) {
  const onnx::TensorProto* tensor = nullptr;
  for (const onnx::TensorProto& init : graph.initializer())
    if (init.name() == name) tensor = &init;
  for (const onnx::NodeProto& node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1 && node.output(0) == name)
      for (const onnx::AttributeProto& attribute : node.attribute())
        if (attribute.name() == "value" && attribute.has_t()) tensor = &attribute.t();
  if (tensor == nullptr) return std::nullopt;
  std::optional<ConstantValue> value = constant_from_tensor(*tensor);
  if (!value) return std::nullopt;
  std::vector<int64_t> ints;
  for (double v : value->data) ints.push_back(static_cast<int64_t>(v));
  return ints;
}

void set_ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& ints) {
  onnx::AttributeProto& attribute = *node.add_attribute();
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : ints) attribute.add_ints(v);
}

bool has_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute())
    if (attribute.name() == name) return true;
  return false;
}

void remove_attribute(onnx::NodeProto& node, const std::string& name) {
  auto& attributes = *node.mutable_attribute();
  for (int k = attributes.size(); k-- > 0;)
    if (attributes.Get(k).name() == name) attributes.DeleteSubrange(k, 1);
}

// ReduceX(data, axes) → ReduceX(data) with the axes attribute.
void axes_to_attribute(const onnx::GraphProto& graph, onnx::NodeProto& node) {
  if (node.input_size() < 2) return;
  if (node.input(1).empty()) {  // no axes given: the older form's default (every axis)
    node.mutable_input()->RemoveLast();
    return;
  }
  std::optional<std::vector<int64_t>> axes = constant_ints(graph, node.input(1));
  if (!axes || (axes->empty() && int_attribute(node, "noop_with_empty_axes", 0) != 0)) return;
  node.mutable_input()->RemoveLast();
  remove_attribute(node, "noop_with_empty_axes");
  if (!axes->empty()) set_ints(node, "axes", *axes);
}

}  // namespace

int known_opset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(onnx::ONNX_DOMAIN);
  return it == ranges.end() ? 0 : it->second.second;
}

void rewrite_newer_forms(onnx::GraphProto& graph, const std::string& source) {
  const bool split_knows_num_outputs = known_opset() >= 18;
  const bool reductions_know_axes_input = known_opset() >= 18;
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    if (!node.domain().empty() && node.domain() != onnx::ONNX_DOMAIN) continue;
    if (!reductions_know_axes_input && takes_axes_input_since_18(node.op_type())) axes_to_attribute(graph, node);
    if (split_knows_num_outputs || node.op_type() != "Split" || !has_attribute(node, "num_outputs")) continue;
    // Split(x, num_outputs = n): the older form splits evenly into as many
    // parts as the node has outputs, as this one does where the axis divides
    // evenly (where it does not, ONNX's inference of the older form refuses it).
    if (int_attribute(node, "num_outputs", 0) != node.output_size())
      throw InputError(source + ": node '" + node.name() + "' (Split): attribute 'num_outputs' is " +
                       std::to_string(int_attribute(node, "num_outputs", 0)) + " but the node has " +
                       std::to_string(node.output_size()) + " outputs");
    remove_attribute(node, "num_outputs");
  }
}

}  // namespace pase
