#include "graphs/graph_file.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "graphs/error.h"
#include "graphs/json_document.h"
#include "graphs/op_registry.h"

namespace pase {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kCommonNodeFields = {"name", "op", "inputs", "cutoff", "outputs"};
const std::vector<std::string> kTopFields = {"format", "version", "name", "cutoff", "tensors", "nodes"};

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  throw InputError(where + ": " + message);
}

std::string type_name(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a non-integer number";
  return std::string("a") + (value.is_array() || value.is_object() ? "n " : " ") + value.type_name();
}

int64_t get_int(const json& value, const std::string& where) {
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    fail(where, "integer " + value.dump() + " does not fit in 64 bits");
  if (!value.is_number_integer()) {
    if (value.is_number_float()) {
      double d = value.get<double>();
      if (d > 9.2e18 || d < -9.2e18) fail(where, "number " + value.dump() + " does not fit in 64 bits");
    }
    fail(where, "expected an integer, got " + type_name(value) + " " + value.dump());
  }
  return value.get<int64_t>();
}

int64_t get_positive(const json& value, const std::string& where) {
  int64_t v = get_int(value, where);
  if (v <= 0) fail(where, "expected a positive size, got " + std::to_string(v));
  return v;
}

int64_t get_non_negative(const json& value, const std::string& where) {
  int64_t v = get_int(value, where);
  if (v < 0) fail(where, "expected a non-negative integer, got " + std::to_string(v));
  return v;
}

std::string get_string(const json& value, const std::string& where) {
  if (!value.is_string()) fail(where, "expected a string, got " + type_name(value));
  return value.get<std::string>();
}

Shape get_shape(const json& value, const std::string& where, bool allow_minus_one = false) {
  if (!value.is_array()) fail(where, "expected an array of sizes, got " + type_name(value));
  if (value.empty()) fail(where, "expected at least one size, got []");
  Shape shape;
  for (size_t i = 0; i < value.size(); ++i) {
    std::string at = where + "[" + std::to_string(i) + "]";
    if (allow_minus_one && value[i].is_number_integer() && value[i].get<int64_t>() == -1) {
      shape.push_back(-1);
      continue;
    }
    shape.push_back(get_positive(value[i], at));
  }
  if (!allow_minus_one && !checked_product(shape))
    fail(where, "sizes " + shape_to_string(shape) + " multiply to more than 2^63");
  return shape;
}

std::vector<int64_t> get_int_list(const json& value, const std::string& where) {
  if (!value.is_array()) fail(where, "expected an array of integers, got " + type_name(value));
  std::vector<int64_t> list;
  for (size_t i = 0; i < value.size(); ++i) list.push_back(get_int(value[i], where + "[" + std::to_string(i) + "]"));
  return list;
}

HeightWidth get_height_width(const json& value, const std::string& where, bool allow_zero) {
  auto one = [&](const json& v, const std::string& at) {
    return allow_zero ? get_non_negative(v, at) : get_positive(v, at);
  };
  if (value.is_array()) {
    if (value.size() != 2) fail(where, "expected one number or an [h, w] pair, got " + std::to_string(value.size()) + " numbers");
    return {one(value[0], where + "[0]"), one(value[1], where + "[1]")};
  }
  int64_t v = one(value, where);
  return {v, v};
}

void check_fields(const json& object, const std::vector<std::string>& allowed, const std::string& where,
                  const std::string& what) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
    std::string hint = closest_name(it.key(), allowed);
    fail(where + ": field '" + it.key() + "'",
         "unknown field for " + what + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
}

NodeV1 parse_node(const json& node, size_t index, const std::string& source) {
  std::string where = source + ": nodes[" + std::to_string(index) + "]";
  if (!node.is_object()) fail(where, "expected an object, got " + type_name(node));
  if (!node.contains("name")) fail(where + ": field 'name'", "missing");
  NodeV1 out;
  out.name = get_string(node["name"], where + ": field 'name'");
  if (out.name.empty()) fail(where + ": field 'name'", "empty name");
  if (out.name.find(':') != std::string::npos)
    fail(where + ": field 'name'", "node name '" + out.name + "' contains ':', which marks output indices");
  where = source + ": node '" + out.name + "'";
  auto field = [&](const std::string& f) { return where + ": field '" + f + "'"; };

  if (!node.contains("op")) fail(field("op"), "missing");
  out.op = get_string(node["op"], field("op"));
  const OpDefinition* op = find_op(out.op);
  if (op == nullptr) {
    std::string hint = closest_name(out.op, known_ops());
    fail(field("op"), "unknown op '" + out.op + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  std::vector<std::string> allowed = kCommonNodeFields;
  for (const auto& f : op->required_fields) allowed.push_back(f);
  for (const auto& f : op->optional_fields) allowed.push_back(f);
  check_fields(node, allowed, where, "op '" + out.op + "'");
  for (const auto& f : op->required_fields)
    if (!node.contains(f)) fail(field(f), "missing (required by op '" + out.op + "')");

  if (!node.contains("inputs")) fail(field("inputs"), "missing");
  const json& inputs = node["inputs"];
  if (!inputs.is_array()) fail(field("inputs"), "expected an array of tensor names, got " + type_name(inputs));
  for (size_t i = 0; i < inputs.size(); ++i)
    out.inputs.push_back(get_string(inputs[i], field("inputs") + "[" + std::to_string(i) + "]"));

  if (node.contains("cutoff")) out.cutoff = get_positive(node["cutoff"], field("cutoff"));
  if (node.contains("outputs")) {
    const json& outputs = node["outputs"];
    if (!outputs.is_array()) fail(field("outputs"), "expected an array of shapes, got " + type_name(outputs));
    std::vector<Shape> shapes;
    for (size_t i = 0; i < outputs.size(); ++i)
      shapes.push_back(get_shape(outputs[i], field("outputs") + "[" + std::to_string(i) + "]"));
    out.outputs = shapes;
  }
  if (node.contains("pointwise")) out.pointwise = get_non_negative(node["pointwise"], field("pointwise"));
  if (node.contains("units")) out.units = get_positive(node["units"], field("units"));
  if (node.contains("vocab")) out.vocab = get_positive(node["vocab"], field("vocab"));
  if (node.contains("dim")) out.dim = get_positive(node["dim"], field("dim"));
  if (node.contains("layers")) out.layers = get_positive(node["layers"], field("layers"));
  if (node.contains("axis")) out.axis = get_int(node["axis"], field("axis"));
  if (node.contains("equation")) out.equation = get_string(node["equation"], field("equation"));
  if (node.contains("filter")) out.filter = get_shape(node["filter"], field("filter"));
  if (node.contains("shape")) out.shape = get_shape(node["shape"], field("shape"), /*allow_minus_one=*/true);
  if (node.contains("stride")) out.stride = get_height_width(node["stride"], field("stride"), false);
  if (node.contains("padding")) out.padding = get_height_width(node["padding"], field("padding"), true);
  if (node.contains("window")) out.window = get_height_width(node["window"], field("window"), false);
  if (node.contains("axes")) out.axes = get_int_list(node["axes"], field("axes"));
  if (node.contains("perm")) out.perm = get_int_list(node["perm"], field("perm"));
  if (node.contains("keepdims")) {
    if (!node["keepdims"].is_boolean()) fail(field("keepdims"), "expected true or false, got " + type_name(node["keepdims"]));
    out.keepdims = node["keepdims"].get<bool>();
  }
  if (node.contains("parts")) {
    const json& parts = node["parts"];
    if (parts.is_array()) {
      std::vector<int64_t> sizes;
      if (parts.empty()) fail(field("parts"), "expected a count or a list of sizes, got []");
      for (size_t i = 0; i < parts.size(); ++i)
        sizes.push_back(get_positive(parts[i], field("parts") + "[" + std::to_string(i) + "]"));
      out.parts = sizes;
    } else {
      out.parts = std::vector<int64_t>{get_positive(parts, field("parts"))};
      out.parts_is_count = true;
    }
  }
  return out;
}

json height_width_json(const HeightWidth& hw) {
  if (hw.h == hw.w) return hw.h;
  return json::array({hw.h, hw.w});
}

}  // namespace

std::string closest_name(const std::string& word, const std::vector<std::string>& names) {
  // Levenshtein distance; suggest only when at most a third of the word differs.
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& name : names) {
    std::vector<size_t> row(name.size() + 1);
    for (size_t j = 0; j <= name.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= name.size(); ++j) {
        size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] == name[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    if (row[name.size()] < best_distance) {
      best_distance = row[name.size()];
      best = name;
    }
  }
  return best;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read file");
  return buffer.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!(out << text) || !out.flush()) throw InputError(path + ": cannot write file");
}

GraphFileV1 parse_graph_file(const std::string& text, const std::string& source) {
  json root = parse_json_document(text, source);
  if (!root.is_object()) fail(source, "expected a JSON object at the top level, got " + type_name(root));
  auto field = [&](const std::string& f) { return source + ": field '" + f + "'"; };
  check_fields(root, kTopFields, source, "a pase-graph file");
  if (!root.contains("format")) fail(field("format"), "missing (expected \"pase-graph\")");
  if (get_string(root["format"], field("format")) != "pase-graph")
    fail(field("format"), "expected \"pase-graph\", got " + root["format"].dump());
  if (!root.contains("version")) fail(field("version"), "missing (expected 1)");
  if (get_int(root["version"], field("version")) != 1)
    fail(field("version"), "unsupported version " + root["version"].dump() + " (this pase reads version 1)");

  GraphFileV1 graph;
  if (root.contains("name")) graph.name = get_string(root["name"], field("name"));
  if (root.contains("cutoff")) graph.cutoff = get_positive(root["cutoff"], field("cutoff"));
  if (root.contains("tensors")) {
    const json& tensors = root["tensors"];
    if (!tensors.is_object()) fail(field("tensors"), "expected an object of name: shape, got " + type_name(tensors));
    for (auto it = tensors.begin(); it != tensors.end(); ++it)
      graph.tensors.emplace_back(it.key(), get_shape(it.value(), source + ": tensor '" + it.key() + "'"));
  }
  if (!root.contains("nodes")) fail(field("nodes"), "missing");
  const json& nodes = root["nodes"];
  if (!nodes.is_array()) fail(field("nodes"), "expected an array of nodes, got " + type_name(nodes));
  if (nodes.empty()) fail(field("nodes"), "the graph has no nodes");
  for (size_t i = 0; i < nodes.size(); ++i) graph.nodes.push_back(parse_node(nodes[i], i, source));
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
  out << "  \"nodes\": [";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const NodeV1& n = graph.nodes[i];
    // nlohmann's default object sorts keys; build the line by hand to keep a readable order.
    std::vector<std::pair<std::string, json>> fields = {{"name", n.name}, {"op", n.op}, {"inputs", n.inputs}};
    if (n.equation) fields.emplace_back("equation", *n.equation);
    if (n.filter) fields.emplace_back("filter", *n.filter);
    if (n.window) fields.emplace_back("window", height_width_json(*n.window));
    if (n.stride) fields.emplace_back("stride", height_width_json(*n.stride));
    if (n.padding) fields.emplace_back("padding", height_width_json(*n.padding));
    if (n.units) fields.emplace_back("units", *n.units);
    if (n.vocab) fields.emplace_back("vocab", *n.vocab);
    if (n.dim) fields.emplace_back("dim", *n.dim);
    if (n.layers) fields.emplace_back("layers", *n.layers);
    if (n.shape) fields.emplace_back("shape", *n.shape);
    if (n.perm) fields.emplace_back("perm", *n.perm);
    if (n.axes) fields.emplace_back("axes", *n.axes);
    if (n.keepdims) fields.emplace_back("keepdims", *n.keepdims);
    if (n.parts) fields.emplace_back("parts", n.parts_is_count ? json(n.parts->front()) : json(*n.parts));
    if (n.axis) fields.emplace_back("axis", *n.axis);
    if (n.pointwise) fields.emplace_back("pointwise", *n.pointwise);
    if (n.cutoff) fields.emplace_back("cutoff", *n.cutoff);
    if (n.outputs) fields.emplace_back("outputs", *n.outputs);
    out << (i ? ",\n    {" : "\n    {");
    for (size_t f = 0; f < fields.size(); ++f)
      out << (f ? ", " : " ") << json(fields[f].first).dump() << ": " << fields[f].second.dump();
    out << " }";
  }
  out << "\n  ]\n}\n";
  return out.str();
}

}  // namespace pase
