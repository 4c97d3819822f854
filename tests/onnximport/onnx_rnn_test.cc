// Recurrent layers and 1-D convolutions from ONNX: the exporter's parameter
// names (PyTorch's weight_ih/weight_hh/bias_ih/bias_hh, ONNX's own W/R/B, a
// Conv1d filter), and the LSTM/GRU variants (input size other than the
// hidden size, batch-major layout, both directions, Y_h/Y_c used, GRU's
// linear_before_reset = 0) lowered to `lstm` vertices and priced.
#ifdef PASE_HAVE_ONNX
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "base/error.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "onnximport/import_onnx.h"
#include "test_support.h"
#include "onnx_test_support.h"

using namespace pase;
using test::node_named;
using test::onnx_fixture;
using test::TinyModel;

namespace {

std::vector<const NodeV1*> nodes_of_op(const GraphFileV1& file, const std::string& op) {
  std::vector<const NodeV1*> found;
  for (const NodeV1& node : file.nodes)
    if (node.op == op) found.push_back(&node);
  return found;
}

// The model's graph inputs other than `data`, with their shapes: the
// exporter's parameters under export_params=False.
std::map<std::string, Shape> exporter_parameters(const std::string& path, const std::string& data) {
  onnx::ModelProto model;
  std::ifstream in(path, std::ios::binary);
  REQUIRE(model.ParseFromIstream(&in));
  std::map<std::string, Shape> parameters;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (input.name() == data) continue;
    Shape& shape = parameters[input.name()];
    for (const onnx::TensorShapeProto::Dimension& d : input.type().tensor_type().shape().dim()) shape.push_back(d.dim_value());
  }
  return parameters;
}

struct Listed {
  int count = 0;
  Shape shape;
  std::vector<std::string> dims;
};

// Every weight the strategy file of `pase solve PATH --devices P --json` lists, by name.
std::map<std::string, Listed> listed_weights(const std::string& path, int devices) {
  test::CommandResult result = test::run_pase("solve " + path + " --devices " + std::to_string(devices) + " --json");
  REQUIRE(result.status == 0);
  nlohmann::json strategy = nlohmann::json::parse(result.output);
  std::map<std::string, Listed> listed;
  for (const nlohmann::json& layer : strategy["layers"])
    for (const nlohmann::json& weight : layer["weights"]) {
      Listed& entry = listed[weight["name"].get<std::string>()];
      ++entry.count;
      entry.shape = weight["shape"].get<Shape>();
      entry.dims = weight["dims"].get<std::vector<std::string>>();
    }
  return listed;
}

// Each exporter parameter exactly once, with its exported shape, and nothing else.
void check_listed_once(const std::string& path, const std::string& data) {
  const std::map<std::string, Shape> expected = exporter_parameters(path, data);
  const std::map<std::string, Listed> listed = listed_weights(path, 8);
  for (const auto& entry : expected) {
    const std::string& name = entry.first;
    CAPTURE(name);
    auto it = listed.find(name);
    REQUIRE(it != listed.end());
    CHECK(it->second.count == 1);
    CHECK(it->second.shape == entry.second);
  }
  CHECK(listed.size() == expected.size());
}

// One LSTM or GRU node over X with W, R (and B) as graph inputs (the
// parameters of an export_params=False model), its used outputs graph outputs.
struct RnnSpec {
  std::string op = "LSTM";
  Shape x;
  int64_t hidden = 4, directions = 1, layout = 0;
  std::string direction = "forward";
  bool bias = true;
  std::optional<int64_t> linear_before_reset;
  std::vector<std::string> outputs = {"y"};  // of "y", "y_h", "y_c"
};

std::string rnn_model(const RnnSpec& spec, const std::string& file_name) {
  const int64_t gates = spec.op == "LSTM" ? 4 : 3, input = spec.x[2];
  TinyModel m;
  m.input("x", spec.x);
  m.input("W", {spec.directions, gates * spec.hidden, input});
  m.input("R", {spec.directions, gates * spec.hidden, spec.hidden});
  std::vector<std::string> inputs = {"x", "W", "R"};
  if (spec.bias) {
    m.input("B", {spec.directions, 2 * gates * spec.hidden});
    inputs.push_back("B");
  }
  std::vector<std::string> outputs;
  for (const char* name : {"y", "y_h", "y_c"})
    outputs.push_back(std::find(spec.outputs.begin(), spec.outputs.end(), name) != spec.outputs.end() ? name : "");
  if (spec.op != "LSTM") outputs.pop_back();
  while (!outputs.empty() && outputs.back().empty()) outputs.pop_back();
  onnx::NodeProto& rnn = m.node("rnn", spec.op, inputs, outputs);
  TinyModel::attribute(rnn, "hidden_size", spec.hidden);
  if (spec.direction != "forward") TinyModel::attribute(rnn, "direction", spec.direction);
  if (spec.layout != 0) TinyModel::attribute(rnn, "layout", spec.layout);
  if (spec.linear_before_reset) TinyModel::attribute(rnn, "linear_before_reset", *spec.linear_before_reset);
  for (const std::string& out : spec.outputs) m.output(out);
  return m.save(file_name);
}

OnnxImportOptions no_loss() {
  OnnxImportOptions options;
  options.loss = "none";
  return options;
}

// The total cost line `pase solve` prints for a model at p devices.
std::string total_cost(const std::string& path, int devices) {
  test::CommandResult solved = test::run_pase("solve " + path + " --devices " + std::to_string(devices) + " --no-plan");
  REQUIRE(solved.status == 0);
  const size_t at = solved.output.find("total cost ");
  REQUIRE(at != std::string::npos);
  return solved.output.substr(at, solved.output.find(", solved in", at) - at);  // without the time taken
}

}  // namespace

TEST_CASE("import_onnx: LSTM and GRU layers list PyTorch's parameters under their names") {
  for (const char* name : {"lstm_lm", "gru_lm"}) {
    CAPTURE(name);
    const int64_t gate_units = std::string(name) == "lstm_lm" ? 4 * 256 : 3 * 256;
    GraphFileV1 file = import_onnx(onnx_fixture(name), OnnxImportOptions{}).graph;
    std::vector<const NodeV1*> rnns = nodes_of_op(file, "lstm");
    REQUIRE(rnns.size() == 2);
    for (size_t layer = 0; layer < 2; ++layer) {
      const std::string l = "_l" + std::to_string(layer);
      CHECK(rnns[layer]->weight_layout == "torch");
      CHECK(*rnns[layer]->weights == std::vector<std::string>{"rnn.weight_ih" + l, "rnn.weight_hh" + l, "rnn.bias_ih" + l,
                                                              "rnn.bias_hh" + l});
      CHECK(!rnns[layer]->input_size);  // 256 features in, 256 units
      CHECK(!rnns[layer]->directions);
    }
    check_listed_once(onnx_fixture(name), "ids");
    const std::map<std::string, Listed> listed = listed_weights(onnx_fixture(name), 8);
    CHECK(listed.at("rnn.weight_ih_l0").shape == Shape{gate_units, 256});
    CHECK(listed.at("rnn.weight_ih_l0").dims == std::vector<std::string>{"n", "k"});
    CHECK(listed.at("rnn.bias_hh_l1").shape == Shape{gate_units});
    CHECK(listed.at("rnn.bias_hh_l1").dims == std::vector<std::string>{"n"});
  }
}

TEST_CASE("import_onnx: the rnn_encoder fixture (Conv1d, bidirectional LSTM, input size != hidden size, Y_h used)") {
  OnnxImport imported = import_onnx(onnx_fixture("rnn_encoder"), OnnxImportOptions{});
  CHECK(imported.notes.empty());
  const GraphFileV1& file = imported.graph;
  const NodeV1& conv = node_named(file, "/conv/Conv");
  CHECK(*conv.weights == std::vector<std::string>{"conv.weight"});
  CHECK(conv.weight_layout == "ncr");
  CHECK(*conv.filter == Shape{128, 80, 3, 1});
  std::vector<const NodeV1*> rnns = nodes_of_op(file, "lstm");
  REQUIRE(rnns.size() == 2);
  const int64_t inputs[2] = {128, 512};  // the second layer reads both directions of the first
  for (size_t layer = 0; layer < 2; ++layer) {
    CAPTURE(layer);
    const NodeV1& rnn = *rnns[layer];
    CHECK(rnn.units == 256);
    CHECK(rnn.input_size == inputs[layer]);
    CHECK(rnn.directions == 2);
    CHECK(rnn.outputs->front() == Shape{16, 128, 512});
    std::vector<std::string> names;
    for (const char* direction : {"", "_reverse"})
      for (const char* what : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"})
        names.push_back(std::string("rnn.") + what + "_l" + std::to_string(layer) + direction);
    CHECK(*rnn.weights == names);
    CHECK(rnn.weight_layout == "torch");
    // Y [s, 2, b, U] and Y_h [2, b, U] from the (b, s, 2U) output.
    CHECK(node_named(file, rnn.name + "/y").outputs->front() == Shape{128, 2, 16, 256});
    CHECK(node_named(file, rnn.name + "/h/last").outputs->front() == Shape{16, 1, 512});
    CHECK(node_named(file, rnn.name + "/h").outputs->front() == Shape{2, 16, 256});
  }
  check_listed_once(onnx_fixture("rnn_encoder"), "input");
  const std::map<std::string, Listed> listed = listed_weights(onnx_fixture("rnn_encoder"), 8);
  CHECK(listed.at("conv.weight").dims == std::vector<std::string>{"n", "c", "r"});
  CHECK(listed.at("rnn.weight_ih_l1_reverse").shape == Shape{1024, 512});
  for (int devices : {8, 64}) {
    CAPTURE(devices);
    test::CommandResult solved = test::run_pase("solve " + onnx_fixture("rnn_encoder") + " --devices " +
                                                std::to_string(devices) + " --exact --no-plan");
    CHECK(solved.status == 0);
  }
  // Its plan, weights included, passes plan-check.
  test::CommandResult solved = test::run_pase("solve " + onnx_fixture("rnn_encoder") + " --devices 8 --json");
  REQUIRE(solved.status == 0);
  const std::string plan = test::write_temp_file("rnn_encoder_plan.json", solved.output);
  test::CommandResult checked = test::run_pase("plan-check " + plan);
  CHECK(checked.status == 0);
}

TEST_CASE("import_onnx: a 1-D Conv's filter keeps the exporter's name and shape") {
  TinyModel m;
  m.input("x", {2, 4, 16});
  m.input("w", {8, 2, 3});
  onnx::NodeProto& conv = m.node("c1d", "Conv", {"x", "w"}, {"y"});
  TinyModel::attribute(conv, "group", int64_t{2});
  TinyModel::attribute(conv, "kernel_shape", std::vector<int64_t>{3});
  m.output("y");
  const std::string path = m.save("conv1d_named.onnx");
  GraphFileV1 file = import_onnx(path, OnnxImportOptions{}).graph;
  const NodeV1& c = node_named(file, "c1d");
  CHECK(*c.weights == std::vector<std::string>{"w"});
  CHECK(c.weight_layout == "ncr");
  const std::map<std::string, Listed> listed = listed_weights(path, 8);
  REQUIRE(listed.count("w"));
  CHECK(listed.at("w").shape == Shape{8, 2, 3});
  CHECK(listed.at("w").dims == std::vector<std::string>{"gn", "c", "r"});
}

TEST_CASE("import_onnx: LSTM and GRU variants") {
  SUBCASE("batch-major, input size 6 for 4 units, ONNX's own W/R/B, Y, Y_h and Y_c used") {
    RnnSpec spec;
    spec.x = {2, 5, 6};
    spec.layout = 1;
    spec.outputs = {"y", "y_h", "y_c"};
    GraphFileV1 file = import_onnx(rnn_model(spec, "lstm_layout1.onnx"), no_loss()).graph;
    const NodeV1& rnn = node_named(file, "rnn");
    CHECK(rnn.inputs == std::vector<std::string>{"x"});  // no transpose
    CHECK(rnn.input_size == 6);
    CHECK(*rnn.weights == std::vector<std::string>{"W", "R", "B"});
    CHECK(rnn.weight_layout == "onnx");
    CHECK(node_named(file, "rnn/y").op == "reshape");
    CHECK(*node_named(file, "rnn/y").shape == Shape{2, 5, 1, 4});
    CHECK(node_named(file, "rnn/h/last").op == "slice");
    CHECK(*node_named(file, "rnn/h").shape == Shape{2, 1, 4});
    CHECK(*node_named(file, "rnn/c").shape == Shape{2, 1, 4});
    Graph graph = build_graph(file, "lstm_layout1");
    const Vertex& v = graph.vertices[static_cast<size_t>(graph.find_vertex("rnn"))];
    CHECK(v.input_size == 6);
    const std::map<std::string, Listed> listed = listed_weights(rnn_model(spec, "lstm_layout1.onnx"), 8);
    CHECK(listed.at("W").shape == Shape{1, 16, 6});
    CHECK(listed.at("R").shape == Shape{1, 16, 4});
    CHECK(listed.at("B").shape == Shape{1, 32});
  }
  SUBCASE("a bidirectional time-major GRU with linear_before_reset = 0 and no B; Y and Y_h used") {
    RnnSpec spec;
    spec.op = "GRU";
    spec.x = {5, 2, 6};
    spec.directions = 2;
    spec.direction = "bidirectional";
    spec.bias = false;
    spec.linear_before_reset = 0;
    spec.outputs = {"y", "y_h"};
    GraphFileV1 file = import_onnx(rnn_model(spec, "gru_bidirectional.onnx"), no_loss()).graph;
    CHECK(node_named(file, "rnn/in").op == "transpose");
    const NodeV1& rnn = node_named(file, "rnn");
    CHECK(rnn.gates == 3);
    CHECK(rnn.directions == 2);
    CHECK(*rnn.weights == std::vector<std::string>{"W", "R"});
    CHECK(rnn.outputs->front() == Shape{2, 5, 8});
    CHECK(*node_named(file, "rnn/out").shape == Shape{2, 5, 2, 4});
    CHECK(*node_named(file, "rnn/y").perm == std::vector<int64_t>{1, 2, 0, 3});
    CHECK(node_named(file, "rnn/y").outputs->front() == Shape{5, 2, 2, 4});
    CHECK(*node_named(file, "rnn/h/directions").shape == Shape{2, 2, 4});
    CHECK(node_named(file, "rnn/h").outputs->front() == Shape{2, 2, 4});
    (void)build_graph(file, "gru_bidirectional");
  }
  SUBCASE("GRU: linear_before_reset 0 and 1 cost the same (the same GEMMs in another order); reverse costs what forward does") {
    RnnSpec spec;
    spec.op = "GRU";
    spec.x = {16, 8, 32};
    spec.hidden = 32;
    spec.linear_before_reset = 1;
    const std::string after = total_cost(rnn_model(spec, "gru_lbr1.onnx"), 8);
    spec.linear_before_reset = 0;
    CHECK(total_cost(rnn_model(spec, "gru_lbr0.onnx"), 8) == after);
    spec.direction = "reverse";
    CHECK(total_cost(rnn_model(spec, "gru_reverse.onnx"), 8) == after);
  }
}

TEST_CASE("import_onnx: LSTM and GRU nodes it refuses, with the reason") {
  auto refusal = [](const std::string& path) {
    test::CommandResult result = test::run_pase("import " + path);
    CHECK(result.status == 1);
    return result.error;
  };
  SUBCASE("a layout ONNX does not define") {
    RnnSpec spec;
    spec.x = {2, 5, 4};
    spec.layout = 2;
    const std::string path = rnn_model(spec, "lstm_layout2.onnx");
    CHECK(refusal(path) == "error: " + path + ": node 'rnn': unsupported LSTM (layout 2); 1 unsupported node(s): LSTM x1 "
                                              "('rnn'); --lenient imports them as zero-cost pass-through vertices\n");
  }
  SUBCASE("a weight computed from the data") {
    TinyModel m;
    m.input("x", {5, 2, 4});
    m.input("R", {1, 16, 4});
    m.node("w", "Reshape", {"x", "w_shape"}, {"W"});
    m.initializer_ints("w_shape", {1, 10, 4});
    onnx::NodeProto& rnn = m.node("rnn", "LSTM", {"x", "W", "R"}, {"y"});
    TinyModel::attribute(rnn, "hidden_size", int64_t{4});
    m.output("y");
    const std::string path = m.save("lstm_data_weight.onnx");
    CHECK(refusal(path).find("node 'rnn': unsupported LSTM (a weight or initial state computed from the data)") !=
          std::string::npos);
  }
}

TEST_CASE("lstm: input_size, directions and weight_layout in a pase-graph file") {
  auto graph_text = [](const std::string& node) {
    return R"({"format": "pase-graph", "version": 1, "name": "t", "cutoff": 1, "tensors": {"x": [8, 5, 6], "img": [8, 8, 6, 6]},
               "nodes": [)" + node + "]}";
  };
  auto build_error = [](const std::string& text) -> std::string {
    try {
      (void)test::graph_from_json(text, "g.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string lstm = R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": 4, "layers": 1, "input_size": 6)";
  SUBCASE("the weights as each layout holds them") {
    Graph graph = test::graph_from_json(
        graph_text(lstm + R"(, "directions": 2, "weights": ["ih", "hh", "bi", "bh", "ih_r", "hh_r", "bi_r", "bh_r"],
                      "weight_layout": "torch"})"),
        "g.json");
    const Vertex& v = graph.vertices.at(static_cast<size_t>(graph.find_vertex("l")));
    CHECK(v.outputs[0] == Shape{8, 5, 8});
    CHECK(v.weight_bias);
    CHECK(v.weight_names.size() == 8);
    Graph stacked = test::graph_from_json(graph_text(lstm + R"(, "gates": 3, "directions": 2})"), "g.json");
    CHECK(stacked.vertices.at(0).outputs[0] == Shape{8, 5, 8});
  }
  SUBCASE("the fields round-trip through write_graph_file") {
    const std::string text = graph_text(lstm + R"(, "directions": 2, "weights": ["W", "R"], "weight_layout": "onnx"})");
    GraphFileV1 file = parse_graph_file(text, "g.json");
    GraphFileV1 again = parse_graph_file(write_graph_file(file), "g.json");
    const NodeV1& n = again.nodes.at(0);
    CHECK(n.input_size == 6);
    CHECK(n.directions == 2);
    CHECK(n.weight_layout == "onnx");
    CHECK(*n.weights == std::vector<std::string>{"W", "R"});
  }
  struct Case {
    std::string what, node, message;
  };
  const Case cases[] = {
      {"three directions", lstm + R"(, "directions": 3})", "g.json: node 'l': field 'directions': expected 1 or 2, got 3"},
      {"input_size against the input", R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": 4, "layers": 1, "input_size": 5})",
       "g.json: node 'l': field 'input_size': shape mismatch: input_size 5 but 'x' has 6 features (shape [8, 5, 6])"},
      {"stacked layers over another input size", R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": 4, "layers": 2, "input_size": 6})",
       "g.json: node 'l': field 'layers': expected 1 with an input_size other than units, 2 directions or the weight_layout "
       "\"onnx\" or \"torch\" (one layer per node), got 2"},
      {"an unknown layout", lstm + R"(, "weight_layout": "kn"})",
       "g.json: node 'l': field 'weight_layout': expected \"stacked\", \"onnx\" or \"torch\", got \"kn\""},
      {"a torch listing of three names", lstm + R"(, "weight_layout": "torch", "weights": ["a", "b", "c"]})",
       "g.json: node 'l': field 'weights': op 'lstm' owns 2 weight(s), got 3 name(s)"},
      {"a 1-D filter layout on a 3x3 filter",
       R"({"name": "c", "op": "conv2d", "inputs": ["img"], "filter": [2, 8, 3, 3], "weight_layout": "ncr"})",
       "g.json: node 'c': field 'weight_layout': \"ncr\" (a 1-D convolution's filter) needs a filter of width 1, got [2, 8, 3, 3]"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(build_error(graph_text(c.node)) == c.message);
  }
}
#endif
