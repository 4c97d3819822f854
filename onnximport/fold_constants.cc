#include "onnximport/fold_constants.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <unordered_map>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "base/error.h"
#include "onnximport/einsum_shape.h"
#include "onnximport/newer_opsets.h"
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

// A OneHot's output: its indices' shape with the depth inserted at the axis.
// ONNX 1.12 leaves the depth dimension unknown when the depth is a Constant
// node's output rather than an initializer. nullopt while an input is unknown.
std::optional<Shape> one_hot_shape(const onnx::NodeProto& node, const TensorFacts& facts) {
  const Shape* indices = node.input_size() > 1 ? facts.shape(node.input(0)) : nullptr;
  const ConstantValue* depth = node.input_size() > 1 ? facts.value(node.input(1)) : nullptr;
  if (!indices || !depth || depth->data.size() != 1 || !(depth->data[0] >= 1 && depth->data[0] <= 9e18)) return std::nullopt;
  const auto rank = static_cast<int64_t>(indices->size());
  int64_t axis = int_attribute(node, "axis", -1);
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) return std::nullopt;
  Shape shape = *indices;
  shape.insert(shape.begin() + axis, static_cast<int64_t>(depth->data[0]));
  return shape;
}

// Outputs whose shape ONNX left at a rank or unknown (an Einsum's, a
// OneHot's): ours, as value_info that later rounds keep, so that the shapes
// after them are inferred too. Returns whether it learned one.
bool infer_own_shapes(onnx::GraphProto& graph, TensorFacts& facts, std::map<std::string, onnx::ValueInfoProto>& own,
                      const std::string& source) {
  bool learned = false;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.output_size() != 1 || facts.shape(node.output(0))) continue;
    Shape shape;
    if (node.op_type() == "OneHot") {
      std::optional<Shape> inferred = one_hot_shape(node, facts);
      if (!inferred) continue;
      shape = *inferred;
    } else if (node.op_type() == "Einsum") {
      std::vector<Shape> inputs;
      for (const std::string& in : node.input()) {
        const Shape* known = facts.shape(in);
        if (!known) break;
        inputs.push_back(*known);
      }
      if (static_cast<int>(inputs.size()) != node.input_size()) continue;
      try {
        shape = einsum_output_shape(string_attribute(node, "equation", ""), inputs);
      } catch (const std::invalid_argument& error) {
        throw InputError(source + ": node '" + node.name() + "': field 'equation': " + error.what());
      }
    } else if (is_one_of(node.op_type(), {"Gelu", "Mish"}) && node.input_size() >= 1 && facts.shape(node.input(0))) {
      // Elementwise ops of opsets newer than the linked library (Gelu 20, Mish 18): their input's shape.
      shape = *facts.shape(node.input(0));
    } else {
      continue;
    }
    onnx::ValueInfoProto info;
    for (const onnx::ValueInfoProto& inferred : graph.value_info())
      if (inferred.name() == node.output(0)) info = inferred;
    info.set_name(node.output(0));
    onnx::TypeProto::Tensor& tensor = *info.mutable_type()->mutable_tensor_type();
    if (!tensor.has_elem_type()) tensor.set_elem_type(onnx::TensorProto::FLOAT);
    onnx::TensorShapeProto& dims = *tensor.mutable_shape();
    dims.clear_dim();
    for (int64_t d : shape) dims.add_dim()->set_dim_value(d);
    own[node.output(0)] = info;
    facts.shapes[node.output(0)] = shape;
    learned = true;
  }
  return learned;
}

// Reshape and Expand targets the trace baked the exported batch into:
// rewritten to the new batch where that makes the element counts agree (a
// Reshape) or the leading sizes (an Expand). Returns whether it rewrote one.
bool rebatch_reshapes(onnx::GraphProto& graph, TensorFacts& facts, const BatchChange& batch, const std::string& source) {
  bool rewrote = false;
  for (const onnx::NodeProto& node : graph.node()) {
    const bool expand = node.op_type() == "Expand";
    if ((node.op_type() != "Reshape" && !expand) || node.input_size() < 2) continue;
    const Shape* in = facts.shape(node.input(0));
    auto target = facts.values.find(node.input(1));
    if (!in || target == facts.values.end() || in->empty() || target->second.data.empty()) continue;
    std::vector<double>& t = target->second.data;
    if (expand) {
      // Broadcasting the new batch to the old one fails; an Expand whose
      // target leads with the old batch where its input leads with the new
      // one (of the same rank) was traced from `x.expand(b, ...)`.
      if (t.size() != in->size() || (*in)[0] != batch.to || t[0] != static_cast<double>(batch.from)) continue;
      t[0] = static_cast<double>(batch.to);
      for (onnx::TensorProto& init : *graph.mutable_initializer())
        if (init.name() == node.input(1)) init = constant_to_tensor(target->second, init.name());
      rewrote = true;
      continue;
    }
    // The element counts, in doubles: a mismatch is what matters, and a
    // target with 0 or -1 entries is ONNX's to resolve.
    double want = 1, have = 1;
    bool plain = true;
    for (int64_t d : *in) want *= static_cast<double>(d);
    for (double d : t) {
      plain = plain && d >= 1;
      have *= d;
    }
    if (!plain || want == have) continue;
    // The input leads with the new batch or w times it (batch·windows after
    // Swin's window partition), and the target with the old batch or v times
    // it, v = w where both are multiples (x.view(b, ...), x.view(b·w, ...),
    // the window partition and its reverse): its leading size scales by
    // new/old.
    const auto from = static_cast<double>(batch.from), to = static_cast<double>(batch.to);
    const double lead = static_cast<double>((*in)[0]);
    const bool multiples = std::fmod(lead, to) == 0 && std::fmod(t[0], from) == 0;
    const bool scales = multiples && (lead == to || t[0] == from || lead / to == t[0] / from);
    if (!scales || have / from * to != want)
      throw InputError(source + ": node '" + node.name() + "': Reshape target [" + [&] {
        std::string text;
        for (size_t k = 0; k < t.size(); ++k) text += (k ? ", " : "") + std::to_string(static_cast<int64_t>(t[k]));
        return text;
      }() + "] does not hold the " + std::to_string(static_cast<int64_t>(want)) + " elements of its input " +
                       shape_to_string(*in) + " at batch " + std::to_string(batch.to) +
                       ": the export baked a size into it that re-batching cannot rewrite; export with a dynamic batch axis (dynamic_axes)");
    t[0] = t[0] / from * to;
    for (onnx::TensorProto& init : *graph.mutable_initializer())
      if (init.name() == node.input(1)) init = constant_to_tensor(target->second, init.name());
    rewrote = true;
  }
  return rewrote;
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

namespace {

// ONNX's own shape inference divides by strides and multiplies by dilations
// and kernel sizes without checking them (a stride of 0 is a division by
// zero inside libonnx, found by fuzzing), so the attributes it reads are
// checked first, in every graph and subgraph.
void check_window_attributes(const onnx::GraphProto& graph, const std::string& source) {
  static const std::set<std::string> windowed = {"Conv",        "ConvTranspose", "ConvInteger", "QLinearConv",
                                                 "MaxPool",     "AveragePool",   "LpPool",      "MaxUnpool",
                                                 "MaxRoiPool",  "DeformConv"};
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) check_window_attributes(attribute.g(), source);
      for (const onnx::GraphProto& sub : attribute.graphs()) check_window_attributes(sub, source);
    }
    if (!windowed.count(node.op_type())) continue;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      const std::string& name = attribute.name();
      const bool positive = name == "strides" || name == "dilations" || name == "kernel_shape";
      const bool non_negative = name == "pads" || name == "output_padding";
      if (positive || non_negative) {
        for (int64_t value : attribute.ints())
          if (positive ? value <= 0 : value < 0)
            throw InputError(source + ": node '" + node.name() + "' (" + node.op_type() + "): attribute '" + name +
                             "' must be " + (positive ? "positive" : "non-negative") + ", got " +
                             std::to_string(value));
      } else if (name == "group" && attribute.i() <= 0) {
        throw InputError(source + ": node '" + node.name() + "' (" + node.op_type() +
                         "): attribute 'group' must be positive, got " + std::to_string(attribute.i()));
      }
    }
  }
}

// Every node has as many inputs and outputs as its ONNX schema allows: the
// constant evaluator and the lowering read inputs by position (a Gemm with
// one input read past the end of its list, found by fuzzing). Ops without a
// schema at this opset are left to the lowering, which refuses them by name.
void check_arity(const onnx::GraphProto& graph, int64_t opset, const std::string& source) {
  for (const onnx::NodeProto& node : graph.node()) {
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), node.domain());
    if (!schema) continue;
    auto check = [&](const char* what, int count, int least, int most) {
      if (count >= least && count <= most) return;
      std::string range = least == most ? std::to_string(least)
                                        : most == std::numeric_limits<int>::max()
                                              ? "at least " + std::to_string(least)
                                              : std::to_string(least) + " to " + std::to_string(most);
      throw InputError(source + ": node '" + node.name() + "' (" + node.op_type() + "): " + std::to_string(count) +
                       " " + what + ", its ONNX schema takes " + range);
    };
    check("inputs", node.input_size(), schema->min_input(), schema->max_input());
    check("outputs", node.output_size(), schema->min_output(), schema->max_output());
  }
}

}  // namespace

TensorFacts infer_shapes_and_constants(onnx::ModelProto& model, const std::string& source,
                                       std::optional<BatchChange> batch) {
  TensorFacts facts;
  onnx::GraphProto& graph = *model.mutable_graph();
  for (const onnx::TensorProto& init : graph.initializer()) {
    facts.shapes[init.name()] = Shape(init.dims().begin(), init.dims().end());
    if (std::optional<ConstantValue> value = constant_from_tensor(init)) facts.values[init.name()] = std::move(*value);
  }
  check_window_attributes(graph, source);
  int64_t opset = default_opset(model);
  ConstantInts known_ints = [&](const std::string& name) -> std::optional<std::vector<int64_t>> {
    const ConstantValue* value = facts.value(name);
    if (!value) return std::nullopt;
    return std::vector<int64_t>(value->data.begin(), value->data.end());
  };
  rewrite_newer_forms(model, known_ints);
  check_arity(graph, opset, source);
  ConstantLookup lookup{[&](const std::string& name) { return facts.value(name); },
                        [&](const std::string& name) { return facts.shape(name); }};
  std::map<std::string, onnx::ValueInfoProto> own_shapes;
  for (int round = 0; round < kMaxRounds; ++round) {
    graph.clear_value_info();
    for (const auto& [name, info] : own_shapes) *graph.add_value_info() = info;
    std::unordered_map<std::string, onnx::TensorShapeProto> propagated;
    try {
      onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0, /*data_prop_val=*/true);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options, &propagated);
    } catch (const std::exception& error) {
      throw InputError(source + ": ONNX shape inference failed: " + first_line(error.what()));
    }
    collect_shapes(graph, facts);
    collect_propagated(propagated, facts);
    bool learned = infer_own_shapes(graph, facts, own_shapes, source);
    if (batch && batch->from != batch->to && rebatch_reshapes(graph, facts, *batch, source)) {
      learned = true;
      // Shapes inferred from the old targets are stale: ONNX recomputes them.
      for (const onnx::NodeProto& node : graph.node())
        for (const std::string& out : node.output())
          if (!facts.values.count(out)) facts.shapes.erase(out);
      own_shapes.clear();
    }

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
    if (rewrite_newer_forms(model, known_ints)) learned = true;
    if (folded.empty() && !learned) break;
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
  restore_held_out(model);
  return facts;
}

}  // namespace pase
