#include "graphs/graph_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_document.h"
#include "base/json_reader.h"
#include "graphs/op_registry.h"
#include "base/text_file.h"
#include "base/closest_name.h"

namespace pase {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kCommonNodeFields = {"name", "op", "inputs", "cutoff", "outputs", "pointwise_weights"};
const std::vector<std::string> kTopFields = {"format", "version", "name", "cutoff", "tensors", "parameters",
                                           "checkpoint_shapes", "nodes", "replaced"};

HeightWidth get_height_width(const JsonReader& field, bool allow_zero) {
  auto one = [&](const JsonReader& v) { return allow_zero ? v.as_non_negative() : v.as_positive(); };
  if (field.value().is_array()) {
    if (field.value().size() != 2)
      field.fail("expected one number or an [h, w] pair, got " + std::to_string(field.value().size()) + " numbers");
    std::vector<JsonReader> pair = field.items();
    return {one(pair[0]), one(pair[1])};
  }
  int64_t v = one(field);
  return {v, v};
}

// A weight or parameter name: a non-empty string.
std::string get_weight_name(const JsonReader& field) {
  std::string name = field.as_string();
  if (name.empty()) field.fail("empty name");
  return name;
}

std::vector<PointwiseWeightV1> get_pointwise_weights(const JsonReader& field) {
  std::vector<PointwiseWeightV1> weights;
  for (const JsonReader& item : field.items("objects {name, shape, axis}")) {
    item.expect_object("an object {name, shape, axis}");
    item.check_known_fields({"name", "shape", "axis"}, "a pointwise weight");
    PointwiseWeightV1 weight;
    weight.name = get_weight_name(item.required("name"));
    weight.shape = item.required("shape").as_shape();
    if (auto axis = item.optional("axis")) weight.axis = axis->as_int();
    weights.push_back(std::move(weight));
  }
  return weights;
}

NodeV1 parse_node(const JsonReader& item, size_t index) {
  JsonReader node = item.as_subject("nodes[" + std::to_string(index) + "]");
  node.expect_object();
  NodeV1 out;
  JsonReader name = node.required("name");
  out.name = name.as_string();
  if (out.name.empty()) name.fail("empty name");
  if (out.name.find(':') != std::string::npos)
    name.fail("node name '" + out.name + "' contains ':', which marks output indices");
  node = node.as_subject("node '" + out.name + "'");

  JsonReader op_field = node.required("op");
  out.op = op_field.as_string();
  const OpDefinition* op = find_op(out.op);
  if (op == nullptr) {
    std::string hint = closest_name(out.op, known_ops());
    op_field.fail("unknown op '" + out.op + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  std::vector<std::string> allowed = kCommonNodeFields;
  for (const auto& f : op->required_fields) allowed.push_back(f);
  for (const auto& f : op->optional_fields) allowed.push_back(f);
  node.check_known_fields(allowed, "op '" + out.op + "'");
  for (const auto& f : op->required_fields) (void)node.required(f, "required by op '" + out.op + "'");

  for (const JsonReader& input : node.required("inputs").items("tensor names")) out.inputs.push_back(input.as_string());
  if (auto f = node.optional("cutoff")) out.cutoff = f->as_positive();
  if (auto f = node.optional("outputs")) {
    std::vector<Shape> shapes;
    for (const JsonReader& shape : f->items("shapes")) shapes.push_back(shape.as_shape());
    out.outputs = shapes;
  }
  if (auto f = node.optional("pointwise")) out.pointwise = f->as_non_negative();
  if (auto f = node.optional("units")) out.units = f->as_positive();
  if (auto f = node.optional("vocab")) out.vocab = f->as_positive();
  if (auto f = node.optional("dim")) out.dim = f->as_positive();
  if (auto f = node.optional("layers")) out.layers = f->as_positive();
  if (auto f = node.optional("groups")) out.groups = f->as_positive();
  if (auto f = node.optional("gates")) out.gates = f->as_positive();
  if (auto f = node.optional("input_size")) out.input_size = f->as_positive();
  if (auto f = node.optional("directions")) out.directions = f->as_positive();
  if (auto f = node.optional("k")) out.k = f->as_positive();
  if (auto f = node.optional("depth")) out.depth = f->as_positive();
  if (auto f = node.optional("axis")) out.axis = f->as_int();
  if (auto f = node.optional("equation")) out.equation = f->as_string();
  if (auto f = node.optional("filter")) out.filter = f->as_shape();
  if (auto f = node.optional("shape")) out.shape = f->as_shape(/*allow_minus_one=*/true);
  if (auto f = node.optional("stride")) out.stride = get_height_width(*f, false);
  if (auto f = node.optional("padding")) out.padding = get_height_width(*f, true);
  if (auto f = node.optional("window")) out.window = get_height_width(*f, false);
  if (auto f = node.optional("dilation")) out.dilation = get_height_width(*f, false);
  if (auto f = node.optional("axes")) out.axes = f->as_int_list();
  if (auto f = node.optional("perm")) out.perm = f->as_int_list();
  if (auto f = node.optional("keepdims")) out.keepdims = f->as_bool();
  if (auto f = node.optional("weights")) {
    std::vector<std::string> names;
    for (const JsonReader& entry : f->items("weight names")) names.push_back(get_weight_name(entry));
    out.weights = names;
  }
  if (auto f = node.optional("weight_layout")) {
    out.weight_layout = f->as_string();
    const std::vector<std::string> layouts = out.op == "conv2d" ? std::vector<std::string>{"ncrs", "ncr"}
                                             : out.op == "lstm" ? std::vector<std::string>{"stacked", "onnx", "torch"}
                                                                : std::vector<std::string>{"nk", "kn"};
    if (std::find(layouts.begin(), layouts.end(), *out.weight_layout) == layouts.end()) {
      std::string expected;
      for (size_t k = 0; k < layouts.size(); ++k)
        expected += (k == 0 ? "" : k + 1 == layouts.size() ? " or " : ", ") + json(layouts[k]).dump();
      f->fail("expected " + expected + ", got " + json(*out.weight_layout).dump());
    }
  }
  if (auto f = node.optional("pointwise_weights")) out.pointwise_weights = get_pointwise_weights(*f);
  if (auto f = node.optional("parts")) {
    if (f->value().is_array()) {
      std::vector<int64_t> sizes;
      std::vector<JsonReader> parts = f->items();
      if (parts.empty()) f->fail("expected a count or a list of sizes, got []");
      for (const JsonReader& part : parts) sizes.push_back(part.as_positive());
      out.parts = sizes;
    } else {
      out.parts = std::vector<int64_t>{f->as_positive()};
      out.parts_is_count = true;
    }
  }
  return out;
}

json height_width_json(const HeightWidth& hw) {
  if (hw.h == hw.w) return hw.h;
  return json::array({hw.h, hw.w});
}

// [{"name": ..., "shape": [...], "axis": k}, ...] with the keys in that order.
std::string pointwise_weights_text(const std::vector<PointwiseWeightV1>& weights) {
  std::string text = "[";
  for (size_t k = 0; k < weights.size(); ++k) {
    const PointwiseWeightV1& w = weights[k];
    text += (k ? ", {\"name\": " : "{\"name\": ") + json(w.name).dump() + ", \"shape\": " + json(w.shape).dump();
    if (w.axis) text += ", \"axis\": " + std::to_string(*w.axis);
    text += "}";
  }
  return text + "]";
}

}  // namespace

GraphFileV1 parse_graph_file(const std::string& text, const std::string& source) {
  json document = parse_json_document(text, source);
  JsonReader root(document, source);
  root.expect_object("a JSON object at the top level");
  root.check_header("pase-graph", 1);  // first: another kind of file is named as such
  root.check_known_fields(kTopFields, "a pase-graph file");

  GraphFileV1 graph;
  if (auto f = root.optional("name")) graph.name = f->as_string();
  if (auto f = root.optional("cutoff")) graph.cutoff = f->as_positive();
  if (auto f = root.optional("tensors"))
    for (const auto& [name, shape] : f->members("an object of name: shape"))
      graph.tensors.emplace_back(name, shape.as_subject("tensor '" + name + "'").as_shape());
  if (auto f = root.optional("parameters"))
    for (const JsonReader& name : f->items("tensor names")) graph.parameters.push_back(get_weight_name(name));
  if (auto f = root.optional("checkpoint_shapes"))
    for (const auto& [name, shape] : f->members("an object of weight name: shape"))
      graph.checkpoint_shapes.emplace_back(name, shape.as_subject("checkpoint shape of '" + name + "'").as_shape());
  if (auto f = root.optional("replaced"))
    for (const JsonReader& entry : f->items("replaced nodes")) {
      ReplacedNodeV1 r;
      r.op = entry.required("op").as_string();
      r.name = entry.required("name").as_string();
      r.flop_share = entry.required("flop_share").as_number();
      graph.replaced.push_back(std::move(r));
    }
  JsonReader nodes = root.required("nodes");
  std::vector<JsonReader> items = nodes.items("nodes");
  if (items.empty()) nodes.fail("the graph has no nodes");
  for (size_t i = 0; i < items.size(); ++i) graph.nodes.push_back(parse_node(items[i], i));
  return graph;
}

GraphFileV1 read_graph_file(const std::string& path) { return parse_graph_file(read_text_file(path), path); }

std::string write_graph_file(const GraphFileV1& graph) {
  std::ostringstream out;
  out << "{\n";
  out << "  \"format\": \"pase-graph\", \"version\": 1,\n";
  out << "  \"name\": " << json(graph.name).dump() << ",\n";
  out << "  \"cutoff\": " << graph.cutoff << ",\n";
  out << "  \"tensors\": {";
  for (size_t i = 0; i < graph.tensors.size(); ++i)
    out << (i ? ",\n    " : "\n    ") << json(graph.tensors[i].first).dump() << ": " << json(graph.tensors[i].second).dump();
  out << (graph.tensors.empty() ? "},\n" : "\n  },\n");
  if (!graph.parameters.empty()) {
    out << "  \"parameters\": [";
    for (size_t i = 0; i < graph.parameters.size(); ++i) out << (i ? ",\n    " : "\n    ") << json(graph.parameters[i]).dump();
    out << "\n  ],\n";
  }
  if (!graph.checkpoint_shapes.empty()) {
    // By name, the order a JSON object reads back in.
    std::map<std::string, Shape> by_name(graph.checkpoint_shapes.begin(), graph.checkpoint_shapes.end());
    out << "  \"checkpoint_shapes\": {";
    const char* separator = "\n    ";
    for (const auto& [name, shape] : by_name) {
      out << separator << json(name).dump() << ": " << json(shape).dump();
      separator = ",\n    ";
    }
    out << "\n  },\n";
  }
  if (!graph.replaced.empty()) {
    out << "  \"replaced\": [";
    for (size_t i = 0; i < graph.replaced.size(); ++i) {
      const ReplacedNodeV1& r = graph.replaced[i];
      out << (i ? ",\n    " : "\n    ") << "{\"op\": " << json(r.op).dump() << ", \"name\": " << json(r.name).dump()
          << ", \"flop_share\": " << json(r.flop_share).dump() << "}";
    }
    out << "\n  ],\n";
  }
  out << "  \"nodes\": [";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const NodeV1& n = graph.nodes[i];
    // nlohmann's default object sorts keys; build the line by hand to keep a readable order.
    std::vector<std::pair<std::string, std::string>> fields;
    auto add = [&fields](const char* key, const json& value) { fields.emplace_back(key, value.dump()); };
    add("name", n.name);
    add("op", n.op);
    add("inputs", n.inputs);
    if (n.equation) add("equation", *n.equation);
    if (n.filter) add("filter", *n.filter);
    if (n.window) add("window", height_width_json(*n.window));
    if (n.stride) add("stride", height_width_json(*n.stride));
    if (n.padding) add("padding", height_width_json(*n.padding));
    if (n.dilation) add("dilation", height_width_json(*n.dilation));
    if (n.groups) add("groups", *n.groups);
    if (n.units) add("units", *n.units);
    if (n.vocab) add("vocab", *n.vocab);
    if (n.dim) add("dim", *n.dim);
    if (n.layers) add("layers", *n.layers);
    if (n.gates) add("gates", *n.gates);
    if (n.input_size) add("input_size", *n.input_size);
    if (n.directions) add("directions", *n.directions);
    if (n.k) add("k", *n.k);
    if (n.depth) add("depth", *n.depth);
    if (n.shape) add("shape", *n.shape);
    if (n.perm) add("perm", *n.perm);
    if (n.axes) add("axes", *n.axes);
    if (n.keepdims) add("keepdims", *n.keepdims);
    if (n.parts) add("parts", n.parts_is_count ? json(n.parts->front()) : json(*n.parts));
    if (n.axis) add("axis", *n.axis);
    if (n.pointwise) add("pointwise", *n.pointwise);
    if (n.weights) add("weights", *n.weights);
    if (n.weight_layout) add("weight_layout", *n.weight_layout);
    if (n.pointwise_weights) fields.emplace_back("pointwise_weights", pointwise_weights_text(*n.pointwise_weights));
    if (n.cutoff) add("cutoff", *n.cutoff);
    if (n.outputs) add("outputs", *n.outputs);
    out << (i ? ",\n    {" : "\n    {");
    for (size_t f = 0; f < fields.size(); ++f)
      out << (f ? ", " : " ") << json(fields[f].first).dump() << ": " << fields[f].second;
    out << " }";
  }
  out << "\n  ]\n}\n";
  return out.str();
}

}  // namespace pase
