#include "onnximport/onnx_model.h"

#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "base/error.h"

namespace pase {
namespace {

// Protobuf accepts many byte strings as some message; a model without a
// graph or an opset is as unusable as one that failed to parse.
bool usable_model(const onnx::ModelProto& model) { return model.has_graph() && model.opset_import_size() > 0; }

InputError not_a_model(const std::string& source) {
  return InputError(source + ": not an ONNX model (the file does not parse as an ONNX ModelProto with a graph)");
}

}  // namespace

onnx::ModelProto read_onnx_model(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path + ": cannot open file");
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&file) || !usable_model(model)) throw not_a_model(path);
  return model;
}

onnx::ModelProto parse_onnx_model(const std::string& bytes, const std::string& source) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !usable_model(model))
    throw not_a_model(source);
  return model;
}

std::string pase_name(const std::string& name, const std::string& fallback) {
  if (name.empty()) return fallback;
  std::string out = name;
  for (char& c : out)
    if (c == ':') c = '_';
  return out;
}

void sanitize_node_names(onnx::GraphProto& graph) {
  std::set<std::string> used;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    std::string name = node.name();
    // Deterministic: a replacement depends only on the node's op and index.
    if (name.empty() || name.find(':') != std::string::npos) name = node.op_type() + "_" + std::to_string(i);
    if (used.count(name)) name += "_" + std::to_string(i);
    used.insert(name);
    node.set_name(name);
  }
}

bool is_one_of(const std::string& op, std::initializer_list<const char*> ops) {
  for (const char* candidate : ops)
    if (op == candidate) return true;
  return false;
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute())
    if (attribute.name() == name) return &attribute;
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* attribute = find_attribute(node, name);
  return attribute ? attribute->i() : fallback;
}

std::optional<std::vector<int64_t>> ints_attribute(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* attribute = find_attribute(node, name);
  if (!attribute) return std::nullopt;
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

std::string string_attribute(const onnx::NodeProto& node, const std::string& name, const std::string& fallback) {
  const onnx::AttributeProto* attribute = find_attribute(node, name);
  return attribute ? attribute->s() : fallback;
}

std::optional<Shape> static_shape(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  Shape shape;
  for (const onnx::TensorShapeProto::Dimension& dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

int64_t default_opset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  return 0;
}

}  // namespace pase
