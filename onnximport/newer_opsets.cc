#include "onnximport/newer_opsets.h"

#include <set>

#include <onnx/defs/schema.h>

#include "onnximport/onnx_model.h"

namespace pase {
namespace {

// A domain no schema has: ONNX's inference leaves the node's outputs unknown.
constexpr const char* kHeldOut = "ai.pase.held_out";

// Reductions whose axes became input 1 at opset 18 (ReduceSum did at 13, which the library knows).
bool takes_axes_input_since_18(const std::string& op) {
  static const std::set<std::string> ops = {"ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
                                            "ReduceL1",   "ReduceL2",     "ReduceLogSum",    "ReduceLogSumExp",
                                            "ReduceSumSquare"};
  return ops.count(op) > 0;
}

void remove_attribute(onnx::NodeProto& node, const std::string& name) {
  auto& attributes = *node.mutable_attribute();
  for (int k = attributes.size(); k-- > 0;)
    if (attributes.Get(k).name() == name) attributes.DeleteSubrange(k, 1);
}

void set_ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& ints) {
  onnx::AttributeProto& attribute = *node.add_attribute();
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : ints) attribute.add_ints(v);
}

// ReduceX(data, axes) → ReduceX(data) with the axes attribute, where the axes
// are known; else held out. Returns whether it rewrote the node.
bool axes_to_attribute(onnx::NodeProto& node, const ConstantInts& constant) {
  std::optional<std::vector<int64_t>> axes;
  if (!node.input(1).empty()) axes = constant(node.input(1));
  if (!node.input(1).empty() && !axes) {
    node.set_domain(kHeldOut);
    return false;
  }
  const bool noop = int_attribute(node, "noop_with_empty_axes", 0) != 0;
  if ((!axes || axes->empty()) && noop) {  // the identity, which the older form cannot say: left to the arity check
    node.clear_domain();
    return false;
  }
  node.mutable_input()->RemoveLast();
  node.clear_domain();
  remove_attribute(node, "noop_with_empty_axes");
  if (axes && !axes->empty()) set_ints(node, "axes", *axes);  // none or empty: every axis, the older default
  return true;
}

}  // namespace

int known_opset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(onnx::ONNX_DOMAIN);
  return it == ranges.end() ? 0 : it->second.second;
}

bool rewrite_newer_forms(onnx::ModelProto& model, const ConstantInts& constant) {
  if (known_opset() >= 18) return false;
  bool imported = false;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) imported = imported || opset.domain() == kHeldOut;
  if (!imported) {
    onnx::OperatorSetIdProto& opset = *model.add_opset_import();
    opset.set_domain(kHeldOut);
    opset.set_version(1);
  }
  bool rewrote = false;
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    const bool default_domain = node.domain().empty() || node.domain() == onnx::ONNX_DOMAIN;
    if (!default_domain && node.domain() != kHeldOut) continue;
    if (takes_axes_input_since_18(node.op_type()) && node.input_size() == 2) {
      rewrote = axes_to_attribute(node, constant) || rewrote;
    } else if (node.op_type() == "Split" && find_attribute(node, "num_outputs") != nullptr) {
      remove_attribute(node, "num_outputs");
      rewrote = true;
    }
  }
  return rewrote;
}

void restore_held_out(onnx::ModelProto& model) {
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node())
    if (node.domain() == kHeldOut) node.clear_domain();
  auto& opsets = *model.mutable_opset_import();
  for (int k = opsets.size(); k-- > 0;)
    if (opsets.Get(k).domain() == kHeldOut) opsets.DeleteSubrange(k, 1);
}

}  // namespace pase
