#include "onnximport/fold_constants.h"

#include <set>
#include <unordered_map>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "graphs/error.h"
#include "onnximport/onnx_model.h"

namespace pase {
namespace {

// Enough for the deepest chain of shape arithmetic seen in exports (each
// round folds everything whose inputs became known in the previous one).
constexpr int kMaxRounds = 32;

void collect_shapes(const onnx::GraphProto& graph, TensorFacts& facts) {
  auto take = [&](const onnx::ValueInfoProto& info) {
    if (std::optional<Shape> shape = static_shape(info.type())) facts.shapes[info.name()] = *shape;
  };
  for (const onnx::ValueInfoProto& info : graph.input()) take(info);
  for (const onnx::ValueInfoProto& info : graph.value_info()) take(info);
  for (const onnx::ValueInfoProto& info : graph.output()) take(info);
}

// Data propagation gives the values of 1-D int64 shape tensors (or scalars).
void collect_propagated(const std::unordered_map<std::string, onnx::TensorShapeProto>& data, TensorFacts& facts) {
  for (const auto& [name, dims] : data) {
    if (facts.values.count(name)) continue;
    ConstantValue value;
    value.type = onnx::TensorProto::INT64;
    bool known = true;
    for (const onnx::TensorShapeProto::Dimension& dim : dims.dim()) {
      if (!dim.has_dim_value()) known = false;
      value.data.push_back(static_cast<double>(dim.dim_value()));
    }
    if (!known) continue;
    const Shape* shape = facts.shape(name);
    if (!shape) continue;
    if (shape->size() > 1 || (shape->size() == 1 && (*shape)[0] != static_cast<int64_t>(value.data.size()))) continue;
    if (shape->empty() && value.data.size() != 1) continue;
    value.dims = *shape;
    facts.values[name] = std::move(value);
  }
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

}  // namespace

const Shape* TensorFacts::shape(const std::string& name) const {
  auto it = shapes.find(name);
  return it == shapes.end() ? nullptr : &it->second;
}

const ConstantValue* TensorFacts::value(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

TensorFacts infer_shapes_and_constants(onnx::ModelProto& model, const std::string& source) {
  TensorFacts facts;
  onnx::GraphProto& graph = *model.mutable_graph();
  for (const onnx::TensorProto& init : graph.initializer()) {
    facts.shapes[init.name()] = Shape(init.dims().begin(), init.dims().end());
    if (std::optional<ConstantValue> value = constant_from_tensor(init)) facts.values[init.name()] = std::move(*value);
  }
  int64_t opset = default_opset(model);
  ConstantLookup lookup{[&](const std::string& name) { return facts.value(name); },
                        [&](const std::string& name) { return facts.shape(name); }};
  for (int round = 0; round < kMaxRounds; ++round) {
    graph.clear_value_info();
    std::unordered_map<std::string, onnx::TensorShapeProto> propagated;
    try {
      onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0, /*data_prop_val=*/true);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options, &propagated);
    } catch (const std::exception& error) {
      throw InputError(source + ": ONNX shape inference failed: " + first_line(error.what()));
    }
    collect_shapes(graph, facts);
    collect_propagated(propagated, facts);

    std::set<int> folded;
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& node = graph.node(i);
      bool known = node.output_size() > 0;
      for (const std::string& out : node.output())
        if (!out.empty() && !facts.values.count(out)) known = false;
      if (known) {
        folded.insert(i);
        continue;
      }
      std::optional<std::vector<ConstantValue>> outputs;
      try {
        outputs = evaluate_constant_node(node, lookup, opset);
      } catch (const InvalidConstantNode& error) {
        throw InputError(source + ": node '" + node.name() + "': " + error.what());
      }
      if (!outputs || static_cast<int>(outputs->size()) != node.output_size()) continue;
      for (int k = 0; k < node.output_size(); ++k) {
        facts.shapes[node.output(k)] = (*outputs)[k].dims;
        facts.values[node.output(k)] = std::move((*outputs)[k]);
      }
      folded.insert(i);
    }
    if (folded.empty()) break;
    // Replace the folded nodes by initializers so that the next inference
    // round reads their values as constants.
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (!folded.count(i)) {
        *kept.Add() = graph.node(i);
        continue;
      }
      for (const std::string& out : graph.node(i).output())
        if (!out.empty()) *graph.add_initializer() = constant_to_tensor(facts.values.at(out), out);
    }
    graph.mutable_node()->Swap(&kept);
  }
  return facts;
}

}  // namespace pase
