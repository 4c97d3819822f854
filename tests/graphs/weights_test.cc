// Trainable parameters with their model's names: a graph file's `weights`,
// `pointwise_weights` and `parameters`, and every strategy file's per-layer
// `weights` list (docs/formats.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "graphs/graph_file.h"
#include "graphs/layer_weights.h"
#include "graphs/op_registry.h"
#include "graphs/zoo.h"
#include "strategy/config_lookup.h"
#include "strategy/strategy_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

std::string graph_text(const std::string& tensors, const std::string& nodes, const std::string& extra = "") {
  return R"({"format": "pase-graph", "version": 1, "name": "t", "cutoff": 1, "tensors": {)" + tensors + "}, " + extra +
         R"("nodes": [)" + nodes + "]}";
}

// The message of the InputError that reading and building `text` throws ("" if none).
std::string build_error(const std::string& text) {
  try {
    (void)test::graph_from_json(text, "g.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<LayerWeight> weights_of(const Graph& graph, const std::string& vertex) {
  const Vertex& v = graph.vertices.at(static_cast<size_t>(graph.find_vertex(vertex)));
  return layer_weights(v, build_vertex_model(v));
}

std::vector<std::string> names_of(const std::vector<LayerWeight>& weights) {
  std::vector<std::string> names;
  for (const LayerWeight& w : weights) names.push_back(w.name);
  return names;
}

const std::string kVector = R"("v": [8, 32])";

}  // namespace

TEST_CASE("weights: reader and builder errors are one line naming file, node and field") {
  const std::string fc = R"({"name": "f", "op": "fc", "inputs": ["v"], "units": 4)";
  struct Case {
    std::string what, text, message;
  };
  std::vector<Case> cases = {
      {"two names for fc's one weight", graph_text(kVector, fc + R"(, "weights": ["a", "b"]})"),
       "g.json: node 'f': field 'weights': op 'fc' owns 1 weight(s), got 2 name(s)"},
      {"no name", graph_text(kVector, fc + R"(, "weights": []})"),
       "g.json: node 'f': field 'weights': op 'fc' owns 1 weight(s), got 0 name(s)"},
      {"a number", graph_text(kVector, fc + R"(, "weights": [3]})"),
       "g.json: node 'f': field 'weights[0]': expected a string, got an integer"},
      {"not a list", graph_text(kVector, fc + R"(, "weights": "w"})"),
       "g.json: node 'f': field 'weights': expected an array of weight names, got a string"},
      {"empty name", graph_text(kVector, fc + R"(, "weights": [""]})"), "g.json: node 'f': field 'weights[0]': empty name"},
      {"an op that owns no weight", graph_text(kVector, R"({"name": "s", "op": "softmax", "inputs": ["v"], "weights": ["w"]})"),
       "g.json: node 's': field 'weights': unknown field for op 'softmax'"},
      {"one name, two shapes", graph_text(kVector, fc + R"(, "weights": ["w"]},
           {"name": "g", "op": "fc", "inputs": ["f"], "units": 4, "weights": ["w"]})"),
       "g.json: node 'g': field 'weights[0]': 'w' also names a weight of node 'f' with shape [4, 32], not [4, 4] "
       "(a weight read by several layers has one shape)"},
      {"a default name taken", graph_text(kVector, fc + R"(},
           {"name": "g", "op": "fc", "inputs": ["f"], "units": 4, "weights": ["f/weight"]})"),
       "g.json: node 'g': field 'weights[0]': 'f/weight' also names a weight of node 'f' with shape [4, 32], not [4, 4] "
       "(a weight read by several layers has one shape)"},
      {"one name twice on a node", graph_text(kVector, fc + R"(, "weights": ["w"], "pointwise_weights": [{"name": "w", "shape": [4]}]})"),
       "g.json: node 'f': field 'pointwise_weights[0].name': 'w' names two weights of this node"},
      {"a bias that does not broadcast", graph_text(kVector, fc + R"(, "pointwise_weights": [{"name": "b", "shape": [5]}]})"),
       "g.json: node 'f': field 'pointwise_weights[0].shape': shape [5] does not broadcast against output 0 of shape [8, 4] "
       "from axis 1 (each size must be 1 or the output's)"},
      {"a bias past the last axis", graph_text(kVector, fc + R"(, "pointwise_weights": [{"name": "b", "shape": [4], "axis": 2}]})"),
       "g.json: node 'f': field 'pointwise_weights[0].axis': shape [4] from axis 2 does not fit in output 0 of shape [8, 4]"},
      {"a bias of too many dims", graph_text(kVector, fc + R"(, "pointwise_weights": [{"name": "b", "shape": [1, 8, 4]}]})"),
       "g.json: node 'f': field 'pointwise_weights[0].shape': shape [1, 8, 4] does not fit in output 0 of shape [8, 4]"},
      {"a bias without a name", graph_text(kVector, fc + R"(, "pointwise_weights": [{"shape": [4]}]})"),
       "g.json: node 'f': field 'pointwise_weights[0].name': missing"},
      {"a bias with a stray key", graph_text(kVector, fc + R"(, "pointwise_weights": [{"name": "b", "shape": [4], "axes": 1}]})"),
       "g.json: node 'f': field 'pointwise_weights[0].axes': unknown field for a pointwise weight (did you mean 'axis'?)"},
      {"a weight layout that is neither", graph_text(kVector, fc + R"(, "weight_layout": "kN"})"),
       "g.json: node 'f': field 'weight_layout': expected \"nk\" or \"kn\", got \"kN\""},
      {"a weight layout not a string", graph_text(kVector, fc + R"(, "weight_layout": true})"),
       "g.json: node 'f': field 'weight_layout': expected a string, got a boolean"},
      {"a weight layout on an op without one", graph_text(kVector, R"({"name": "s", "op": "softmax", "inputs": ["v"], "weight_layout": "kn"})"),
       "g.json: node 's': field 'weight_layout': unknown field for op 'softmax'"},
      {"a weight held [K, N] tied to one held [N, K]", graph_text(kVector, fc + R"(, "weights": ["w"], "weight_layout": "kn"},
           {"name": "g", "op": "fc", "inputs": ["v"], "units": 4, "weights": ["w"]})"),
       "g.json: node 'g': field 'weights[0]': 'w' also names a weight of node 'f' with shape [32, 4], not [4, 32] "
       "(a weight read by several layers has one shape)"},
      {"a parameter that is no tensor", graph_text(kVector, fc + "}", R"("parameters": ["w"], )"),
       "g.json: field 'parameters[0]': 'w' names no external tensor (did you mean 'v'?)"},
      {"a parameter listed twice", graph_text(kVector, fc + "}", R"("parameters": ["v", "v"], )"),
       "g.json: field 'parameters[1]': 'v' is listed twice"},
      {"a parameter not a string", graph_text(kVector, fc + "}", R"("parameters": [1], )"),
       "g.json: field 'parameters[0]': expected a string, got an integer"},
      {"a parameter tensor's name on a weight of another shape", graph_text(kVector, fc + R"(, "weights": ["v"]})", R"("parameters": ["v"], )"),
       "g.json: node 'f': field 'weights[0]': 'v' also names the parameter tensor 'v' with shape [8, 32], not [4, 32] "
       "(a weight read by several layers has one shape)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(build_error(c.text) == c.message);
  }
}

TEST_CASE("weights: names, biases and parameters round-trip through write_graph_file") {
  std::string text = graph_text(R"("img": [8, 4, 8, 8], "w": [6, 5])",
                                R"({"name": "conv", "op": "conv2d", "inputs": ["img"], "filter": [6, 4, 3, 3], "padding": 1,
                                    "weights": ["features.0.weight"],
                                    "pointwise_weights": [{"name": "features.0.bias", "shape": [6], "axis": 1}]},
                                   {"name": "pool", "op": "reduce_mean", "inputs": ["conv"], "axes": [2, 3]},
                                   {"name": "proj", "op": "einsum", "inputs": ["pool", "w"], "equation": "bk,kn->bn",
                                    "pointwise_weights": [{"name": "proj.bias", "shape": [5]}]})",
                                R"("parameters": ["w"], )");
  GraphFileV1 file = parse_graph_file(text, "g.json");
  std::string written = write_graph_file(file);
  CHECK(written.find(R"("parameters": [)" "\n" R"(    "w")" "\n  ],") != std::string::npos);
  CHECK(written.find(R"("weights": ["features.0.weight"], "pointwise_weights": [{"name": "features.0.bias", "shape": [6], "axis": 1}])") !=
        std::string::npos);
  CHECK(written.find(R"("pointwise_weights": [{"name": "proj.bias", "shape": [5]}])") != std::string::npos);
  GraphFileV1 again = parse_graph_file(written, "g.json");
  CHECK(again.parameters == file.parameters);
  REQUIRE(again.nodes.size() == file.nodes.size());
  for (size_t i = 0; i < file.nodes.size(); ++i) {
    CHECK(again.nodes[i].weights == file.nodes[i].weights);
    CHECK(again.nodes[i].pointwise_weights == file.nodes[i].pointwise_weights);
  }
  CHECK(write_graph_file(again) == written);
  // A graph without any of them is written as before: no new field appears.
  GraphFileV1 plain = parse_graph_file(graph_text(kVector, R"({"name": "f", "op": "fc", "inputs": ["v"], "units": 4})"), "g.json");
  std::string plain_text = write_graph_file(plain);
  CHECK(plain_text.find("weights") == std::string::npos);
  CHECK(plain_text.find("parameters") == std::string::npos);
}

TEST_CASE("weights: default names, shapes as the model holds them, and tied names") {
  Graph graph = test::graph_from_json(graph_text(
      R"("img": [8, 4, 8, 8], "ids": [2, 3])",
      R"({"name": "conv", "op": "conv2d", "inputs": ["img"], "filter": [6, 4, 3, 3]},
         {"name": "flat", "op": "reshape", "inputs": ["conv"], "shape": [8, -1]},
         {"name": "fc", "op": "fc", "inputs": ["flat"], "units": 10},
         {"name": "emb", "op": "embedding", "inputs": ["ids"], "vocab": 7, "dim": 4, "weights": ["tok"]},
         {"name": "rnn", "op": "lstm", "inputs": ["emb"], "units": 4, "layers": 2, "weights": ["rnn.weight"]},
         {"name": "out", "op": "fc", "inputs": ["rnn"], "units": 7, "weights": ["tok"]})"));
  std::vector<LayerWeight> conv = weights_of(graph, "conv");
  REQUIRE(conv.size() == 1);
  CHECK(conv[0].name == "conv/weight");
  CHECK(conv[0].shape == Shape{6, 4, 3, 3});  // [N, c, R, S]
  std::vector<LayerWeight> fc = weights_of(graph, "fc");
  REQUIRE(fc.size() == 1);
  CHECK(fc[0].name == "fc/weight");
  CHECK(fc[0].shape == Shape{10, 6 * 6 * 6});  // [N, K]
  CHECK(weights_of(graph, "flat").empty());
  CHECK(weights_of(graph, "flat/ravel").empty());
  // Tied embeddings: the table [V, D] and the output projection [N, K] = [V, D] keep one name.
  std::vector<LayerWeight> emb = weights_of(graph, "emb"), out = weights_of(graph, "out");
  REQUIRE(emb.size() == 1);
  REQUIRE(out.size() == 1);
  CHECK(emb[0].name == "tok");
  CHECK(out[0].name == "tok");
  CHECK(emb[0].shape == out[0].shape);
  std::vector<LayerWeight> rnn = weights_of(graph, "rnn");
  REQUIRE(rnn.size() == 1);
  CHECK(rnn[0].name == "rnn.weight");
  CHECK(rnn[0].shape == Shape{2, 8, 16});  // (layers, 2U, 4U)
}

TEST_CASE("weights: external tensors are weights only when listed under parameters") {
  const std::string tensors = R"("x": [8, 16], "w": [16, 4], "pos": [8, 4])";
  const std::string nodes = R"({"name": "proj", "op": "einsum", "inputs": ["x", "w"], "equation": "bk,kn->bn"},
                               {"name": "add", "op": "elementwise", "inputs": ["proj", "pos"]},
                               {"name": "again", "op": "einsum", "inputs": ["add", "w2"], "equation": "bn,nm->bm"})";
  Graph data = test::graph_from_json(graph_text(tensors + R"(, "w2": [4, 4])", nodes));
  CHECK(weights_of(data, "proj").empty());
  CHECK(data.parameters.empty());
  Graph trained = test::graph_from_json(graph_text(tensors + R"(, "w2": [4, 4])", nodes, R"("parameters": ["w", "w2"], )"));
  CHECK(trained.parameters == std::vector<std::string>{"w", "w2"});
  std::vector<LayerWeight> proj = weights_of(trained, "proj");
  REQUIRE(proj.size() == 1);
  CHECK(proj[0].name == "w");
  CHECK(proj[0].shape == Shape{16, 4});
  CHECK(split_letters(proj[0].split, "bnk") == std::vector<std::string>{"k", "n"});
  CHECK(weights_of(trained, "add").empty());  // pos is data
  CHECK(names_of(weights_of(trained, "again")) == std::vector<std::string>{"w2"});
}

TEST_CASE("weights: an fc weight held [K, N] (weight_layout \"kn\") keeps that shape; its GEMM is the same") {
  const std::string nodes = R"({"name": "tf", "op": "fc", "inputs": ["v"], "units": 4, "weights": ["dense/kernel"], "weight_layout": "kn"},
                               {"name": "pt", "op": "fc", "inputs": ["v"], "units": 4, "weight_layout": "nk"},
                               {"name": "plain", "op": "fc", "inputs": ["v"], "units": 4})";
  Graph graph = test::graph_from_json(graph_text(kVector, nodes));
  std::vector<LayerWeight> tf = weights_of(graph, "tf"), pt = weights_of(graph, "pt"), plain = weights_of(graph, "plain");
  REQUIRE(tf.size() == 1);
  REQUIRE(pt.size() == 1);
  REQUIRE(plain.size() == 1);
  CHECK(tf[0].name == "dense/kernel");
  CHECK(tf[0].shape == Shape{32, 4});  // [K, N]
  CHECK(split_letters(tf[0].split, "bnk") == std::vector<std::string>{"k", "n"});
  CHECK(pt[0].shape == Shape{4, 32});  // [N, K], the default
  CHECK(split_letters(pt[0].split, "bnk") == std::vector<std::string>{"n", "k"});
  CHECK(plain[0].shape == pt[0].shape);
  CHECK(plain[0].split == pt[0].split);
  // Only the weight's layout differs: domain, letters, tensors and work are those of the default.
  VertexModel kn = build_vertex_model(graph.vertices[static_cast<size_t>(graph.find_vertex("tf"))]);
  VertexModel nk = build_vertex_model(graph.vertices[static_cast<size_t>(graph.find_vertex("plain"))]);
  CHECK(kn.letters == nk.letters);
  CHECK(kn.domain == nk.domain);
  CHECK(kn.inputs == nk.inputs);
  CHECK(kn.outputs == nk.outputs);
  CHECK(kn.work.m == nk.work.m);
  CHECK(kn.work.n == nk.work.n);
  CHECK(kn.work.k == nk.work.k);
  // Written back only where the file has it, after `weights`.
  std::string written = write_graph_file(parse_graph_file(graph_text(kVector, nodes), "g.json"));
  CHECK(written.find(R"("weights": ["dense/kernel"], "weight_layout": "kn")") != std::string::npos);
  CHECK(written.find(R"("units": 4, "weight_layout": "nk")") != std::string::npos);
  CHECK(written.find(R"({ "name": "plain", "op": "fc", "inputs": ["v"], "units": 4 })") != std::string::npos);
}

TEST_CASE("weights: split_letters concatenates a dimension's letters, major first") {
  CHECK(split_letters({{6}, {1}, {}, {0, 2}}, "bchwrsn") == std::vector<std::string>{"n", "c", "", "bh"});
}

TEST_CASE("strategy file: each layer's weights with dims and split, by hand") {
  // conv (bchwrsn) split c=2, n=2; head (bnk) split b=2, n=2; proj (bnk) split n=2, k=2.
  Graph graph = test::graph_from_json(graph_text(
      R"("img": [8, 4, 8, 8], "w": [10, 6])",
      R"({"name": "conv", "op": "conv2d", "inputs": ["img"], "filter": [6, 4, 3, 3], "padding": 1,
          "weights": ["features.0.weight"], "pointwise_weights": [{"name": "features.0.bias", "shape": [6], "axis": 1}]},
         {"name": "flat", "op": "reshape", "inputs": ["conv"], "shape": [8, 384]},
         {"name": "head", "op": "fc", "inputs": ["flat"], "units": 10, "pointwise_weights": [{"name": "head.bias", "shape": [1, 10]}]},
         {"name": "proj", "op": "einsum", "inputs": ["head", "w"], "equation": "bk,kn->bn"})",
      R"("parameters": ["w"], )"));
  Machine machine;
  machine.devices = 4;
  CostTables tables = build_cost_tables(graph, machine);
  std::vector<int32_t> choice(graph.vertices.size(), 0);  // configuration 0: nothing split
  auto pick = [&](const std::string& vertex, std::vector<int32_t> config) {
    int v = graph.find_vertex(vertex);
    REQUIRE(v >= 0);
    CAPTURE(vertex);
    int32_t index = find_config(tables.configs[static_cast<size_t>(v)], config.data());
    REQUIRE(index >= 0);
    choice[static_cast<size_t>(v)] = index;
  };
  pick("conv", {1, 2, 1, 1, 1, 1, 2});
  pick("head", {2, 2, 1});
  pick("proj", {1, 2, 2});
  json document = json::parse(write_strategy_file(graph, tables, choice, 0.0, nullptr));
  auto layer = [&](const std::string& name) {
    for (const json& l : document["layers"])
      if (l["name"] == name) return l;
    FAIL("no layer " << name);
    return json();
  };
  CHECK(layer("conv")["weights"] == json::parse(R"([
      {"name": "features.0.weight", "shape": [6, 4, 3, 3], "dims": ["n", "c", "r", "s"], "split": [2, 2, 1, 1]},
      {"name": "features.0.bias", "shape": [6], "dims": ["n"], "split": [2]}])"));
  CHECK(layer("flat/ravel")["weights"] == json::array());
  CHECK(layer("flat")["weights"] == json::array());
  CHECK(layer("head")["weights"] == json::parse(R"([
      {"name": "head/weight", "shape": [10, 384], "dims": ["n", "k"], "split": [2, 1]},
      {"name": "head.bias", "shape": [1, 10], "dims": ["", "n"], "split": [1, 2]}])"));
  CHECK(layer("proj")["weights"] == json::parse(R"([
      {"name": "w", "shape": [10, 6], "dims": ["k", "n"], "split": [2, 2]}])"));
  // After the outputs, on the layer's one line.
  std::string text = write_strategy_file(graph, tables, choice, 0.0, nullptr);
  CHECK(text.find(R"("outputs":[{"shape":[8,6],"split":[1,2]}],"weights":[{"name":"w","shape":[10,6],"dims":["k","n"],"split":[2,2]}]})") !=
        std::string::npos);
}

TEST_CASE("zoo: every weight has a PyTorch-style name, once, and the Transformer lists its parameters") {
  for (const ZooEntry& entry : zoo_entries()) {
    CAPTURE(entry.name);
    GraphFileV1 file = build_zoo_graph(entry.name, 8);
    Graph graph = build_graph(file, entry.name);
    std::set<std::string> names;
    size_t owners = 0, listed = 0;
    for (const Vertex& vertex : graph.vertices) {
      std::vector<LayerWeight> weights = layer_weights(vertex, build_vertex_model(vertex));
      if (!build_vertex_model(vertex).weights.empty()) {
        ++owners;
        REQUIRE(!weights.empty());
        std::string dotted = vertex.name;
        std::replace(dotted.begin(), dotted.end(), '/', '.');
        CHECK(weights[0].name == dotted + ".weight");
      }
      for (const LayerWeight& w : weights) {
        CHECK(w.name.find('/') == std::string::npos);
        names.insert(w.name);
        ++listed;
      }
    }
    CHECK(owners > 0);
    CHECK(listed == names.size());  // no weight is shared in the zoo
    if (entry.name == "transformer") {
      // Every external tensor but the ids and the fixed position encodings is a weight.
      CHECK(file.parameters.size() == file.tensors.size() - 3);
      for (const std::string& parameter : file.parameters) CHECK(names.count(parameter) == 1);
      CHECK(names.count("encoder.layer0.self.w_qkv") == 1);
      CHECK(names.count("decoder.w_vocab") == 1);
      CHECK(names.count("decoder.embedding.weight") == 1);
    } else {
      CHECK(file.parameters.empty());
    }
  }
  Graph resnet = build_graph(build_zoo_graph("resnet101", 8), "resnet101");
  CHECK(weights_of(resnet, "layer1.0/conv1").at(0).name == "layer1.0.conv1.weight");  // torchvision's name
}
