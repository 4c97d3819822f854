// The ONNX importer: committed torchvision/PyTorch fixtures import, validate
// and solve; tiny hand-built models check the one-line error messages.
#ifdef PASE_HAVE_ONNX
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "graphs/layer_weights.h"
#include "graphs/vertex_model.h"
#include "onnximport/constant_value.h"
#include "onnximport/einsum_shape.h"
#include "onnximport/import_onnx.h"
#include "plans/build_plan.h"
#include "strategy/config_lookup.h"
#include "plans/mesh.h"
#include "plans/plan_check.h"
#include "plans/plan_reader.h"
#include "strategy/strategy_file.h"
#include "test_support.h"
#include "onnx_test_support.h"

using namespace pase;
using test::node_named;
using test::onnx_fixture;
using test::TinyModel;

namespace {

const char* const kFixtures[] = {"alexnet", "vgg16", "resnet50", "inception_v3", "densenet121", "transformer_encoder"};


// x [2,4,8,8] -> Hardmax (no pase op) -> Relu -> y
std::string unsupported_op_model() {
  TinyModel m;
  m.input("x", {2, 4, 8, 8});
  m.node("hardmax", "Hardmax", {"x"}, {"h"});
  m.node("relu", "Relu", {"h"}, {"y"});
  m.output("y");
  return m.save("unsupported.onnx");
}

// x [2,4,8,8] -> Conv(group 2) -> Relu -> y
std::string grouped_conv_model() {
  TinyModel m;
  m.input("x", {2, 4, 8, 8});
  m.input("w", {4, 2, 3, 3});
  onnx::NodeProto& conv = m.node("depthwise", "Conv", {"x", "w"}, {"c"});
  TinyModel::attribute(conv, "group", int64_t{2});
  TinyModel::attribute(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  TinyModel::attribute(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("relu", "Relu", {"c"}, {"y"});
  m.output("y");
  return m.save("grouped.onnx");
}

}  // namespace

TEST_CASE("import_onnx: every fixture imports and validates") {
  for (const char* name : kFixtures) {
    CAPTURE(name);
    OnnxImport result = import_onnx(onnx_fixture(name), OnnxImportOptions{});
    Graph graph = build_graph(result.graph, name);
    CHECK(result.graph.name == name);
    CHECK(result.notes.empty());
    REQUIRE(!graph.vertices.empty());
    CHECK(graph.vertices.back().op == "softmax_xent");
    REQUIRE(result.graph.tensors.size() == 1);  // the data input; weights fold into the ops
    CHECK(result.graph.tensors[0].second[0] == 128);
  }
}

TEST_CASE("import_onnx: alexnet matches torchvision's layers and the zoo's spatial shapes") {
  GraphFileV1 result = import_onnx(onnx_fixture("alexnet"), OnnxImportOptions{}).graph;
  Graph imported = build_graph(result, "alexnet.onnx");
  Graph zoo = load_graph(test::source_path("data/graphs/alexnet.json"));
  // torchvision: 64/192/384/256/256 channels on 224x224 with padding 2 in conv1;
  // the paper's zoo: 96/256/384/384/256 on 227x227 without. Spatial sizes agree.
  const std::vector<std::string> convs = {"/features/features.0/Conv", "/features/features.3/Conv", "/features/features.6/Conv",
                                          "/features/features.8/Conv", "/features/features.10/Conv"};
  const std::vector<std::string> zoo_convs = {"conv1", "conv2", "conv3", "conv4", "conv5"};
  const std::vector<Shape> filters = {{64, 3, 11, 11}, {192, 64, 5, 5}, {384, 192, 3, 3}, {256, 384, 3, 3}, {256, 256, 3, 3}};
  for (size_t k = 0; k < convs.size(); ++k) {
    CAPTURE(convs[k]);
    const Vertex& v = imported.vertices[imported.find_vertex(convs[k])];
    const Vertex& z = zoo.vertices[zoo.find_vertex(zoo_convs[k])];
    CHECK(v.filter == filters[k]);
    CHECK(v.filter[2] == z.filter[2]);
    CHECK(v.stride == z.stride);
    CHECK(v.outputs[0][2] == z.outputs[0][2]);
    CHECK(v.outputs[0][3] == z.outputs[0][3]);
  }
  CHECK(imported.vertices[imported.find_vertex("/features/features.12/MaxPool")].outputs[0] == Shape{128, 256, 6, 6});
  // The adaptive avgpool is a 1x1 identity on 6x6 and leaves no vertex.
  CHECK(imported.find_vertex("/avgpool/AveragePool") < 0);
  const std::vector<std::string> fcs = {"/classifier/classifier.1/Gemm", "/classifier/classifier.4/Gemm",
                                        "/classifier/classifier.6/Gemm"};
  const std::vector<int64_t> units = {4096, 4096, 1000};  // the zoo's fc8 has 1024
  const std::vector<std::string> zoo_fcs = {"fc6", "fc7", "fc8"};
  for (size_t k = 0; k < fcs.size(); ++k) {
    const Vertex& v = imported.vertices[imported.find_vertex(fcs[k])];
    const Vertex& z = zoo.vertices[zoo.find_vertex(zoo_fcs[k])];
    CHECK(v.units == units[k]);
    CHECK(v.inputs[0].shape == z.inputs[0].shape);  // [128, 9216], [128, 4096], [128, 4096]
  }
  // ReLU and Dropout fold into the producer's pointwise count.
  CHECK(node_named(result, "/features/features.0/Conv").pointwise == 1);
  CHECK(node_named(result, "/classifier/classifier.1/Gemm").pointwise == 2);
  CHECK(imported.vertices.size() == zoo.vertices.size());
}

TEST_CASE("import_onnx: an activation after a normalization folds into it; the norm's own scale and bias do not") {
  GraphFileV1 resnet = import_onnx(onnx_fixture("resnet50"), OnnxImportOptions{}).graph;
  // conv -> bn -> relu: the ReLU is the batchnorm's pointwise op, not the convolution's.
  CHECK(node_named(resnet, "/layer1/layer1.0/bn1/BatchNormalization").pointwise == 1);
  CHECK(node_named(resnet, "/layer1/layer1.0/bn2/BatchNormalization").pointwise == 1);
  CHECK(!node_named(resnet, "/layer1/layer1.0/conv1/Conv").pointwise);
  // bn3 -> Add -> ReLU: the ReLU follows the residual add.
  CHECK(!node_named(resnet, "/layer1/layer1.0/bn3/BatchNormalization").pointwise);
  CHECK(node_named(resnet, "/layer1/layer1.0/Add").pointwise == 1);
  int batchnorms = 0, with_relu = 0;
  for (const NodeV1& node : resnet.nodes)
    if (node.op == "batchnorm") ++batchnorms, with_relu += node.pointwise.value_or(0) == 1;
  CHECK(batchnorms == 53);
  CHECK(with_relu == 33);  // the stem's and two in each of the 16 bottlenecks
  // A decomposed LayerNorm's Mul by γ and Add of β are the norm's parameters,
  // priced by its own formula: listed, not counted again.
  GraphFileV1 encoder = import_onnx(onnx_fixture("transformer_encoder"), OnnxImportOptions{}).graph;
  const NodeV1& norm = node_named(encoder, "/encoder/layers.0/norm1/ReduceMean");
  CHECK(norm.op == "norm");
  CHECK(!norm.pointwise);
  REQUIRE(norm.pointwise_weights);
  CHECK(norm.pointwise_weights->size() == 2);
  // The attention's Dropout (ratio 0.1, exported in training mode) is the softmax's pointwise op.
  CHECK(node_named(encoder, "/encoder/layers.0/self_attn/Softmax").pointwise == 1);
}

TEST_CASE("import_onnx: a Dropout of ratio 0 adds nothing") {
  // torchvision's Swin-T exports its attention and projection dropouts with ratio 0.0.
  GraphFileV1 swin = import_onnx(onnx_fixture("swin_t"), OnnxImportOptions{}).graph;
  CHECK(!node_named(swin, "/features/features.1/features.1.0/attn/Softmax").pointwise);
  CHECK(node_named(swin, "/features/features.1/features.1.0/attn/MatMul_3").pointwise == 1);  // its bias only
  // A Dropout with ratio 0.5 counts, one with ratio 0 does not.
  for (const float ratio : {0.5f, 0.0f}) {
    CAPTURE(ratio);
    TinyModel m;
    m.input("x", {4, 16});
    m.initializer("w", {16, 8});
    m.float_initializer("ratio", {}, {ratio});
    m.node("fc", "MatMul", {"x", "w"}, {"h"});
    m.node("drop", "Dropout", {"h", "ratio"}, {"y"});
    m.output("y");
    GraphFileV1 graph = import_onnx(m.save("dropout.onnx"), OnnxImportOptions{}).graph;
    CHECK(node_named(graph, "fc").pointwise.value_or(0) == (ratio > 0 ? 1 : 0));
  }
}

TEST_CASE("import_onnx: transformer shape arithmetic") {
  GraphFileV1 result = import_onnx(onnx_fixture("transformer_encoder"), OnnxImportOptions{}).graph;
  std::map<std::string, int> ops;
  for (const NodeV1& node : result.nodes) ++ops[node.op];
  CHECK(ops["norm"] == 12);    // two decomposed LayerNorms per layer
  CHECK(ops["split"] == 6);    // q, k, v Slices with computed bounds, one split per layer
  CHECK(ops["matmul"] == 12);  // q.k^T and attention.v
  CHECK(ops["fc"] == 24);
  const NodeV1& qkv = node_named(result, "/encoder/layers.0/self_attn/Slice");
  CHECK(*qkv.parts == std::vector<int64_t>{512, 512, 512});
  CHECK(node_named(result, "/encoder/layers.0/self_attn/MatMul_1").outputs->at(0) == Shape{1024, 128, 128});
}

TEST_CASE("import_onnx: --batch and --loss") {
  SUBCASE("batch re-sizes the data input") {
    OnnxImportOptions options;
    options.batch = 32;
    GraphFileV1 result = import_onnx(onnx_fixture("resnet50"), options).graph;
    CHECK(result.tensors[0].second == Shape{32, 3, 224, 224});
    CHECK(node_named(result, "/fc/Gemm").outputs->at(0) == Shape{32, 1000});
  }
  SUBCASE("no loss") {
    OnnxImportOptions options;
    options.loss = "none";
    GraphFileV1 result = import_onnx(onnx_fixture("alexnet"), options).graph;
    CHECK(result.nodes.back().name == "/classifier/classifier.6/Gemm");
  }
}

TEST_CASE("pase solve: onnx fixtures at p = 8") {
  for (const char* name : kFixtures) {
    CAPTURE(name);
    if (std::string(name) == "densenet121") {
      // Dense joins keep up to 25 concats alive at once: the exact tables are
      // refused (a bounded solve answers without --exact: bounded_cli_test.cc).
      test::CommandResult result = test::run_pase("solve " + onnx_fixture(name) + " --devices 8 --exact");
      CHECK(result.status == 3);
      CHECK(result.error.rfind("error: refused: the DP tables would need more than 2^64 bytes", 0) == 0);
      continue;
    }
    test::CommandResult result = test::run_pase("solve " + onnx_fixture(name) + " --devices 8");
    CHECK(result.status == 0);
    CHECK(result.output.find("total cost ") != std::string::npos);
  }
  test::CommandResult resnet = test::run_pase("solve " + onnx_fixture("resnet50") + " --devices 8 --json");
  REQUIRE(resnet.status == 0);
  for (const char* layer : {"\"/conv1/Conv\"", "\"/layer1/layer1.0/conv1/Conv\"", "\"/layer4/layer4.2/Add\"", "\"/fc/Gemm\""})
    CHECK(resnet.output.find(std::string("\"name\":") + layer) != std::string::npos);
}

TEST_CASE("pase import: writes a pase-graph file") {
  std::string out = test::write_temp_file("alexnet-import.json", "");
  test::CommandResult result = test::run_pase("import " + onnx_fixture("alexnet") + " -o " + out + " --batch 64");
  CHECK(result.status == 0);
  Graph graph = load_graph(out);
  CHECK(graph.vertices.front().inputs[0].shape == Shape{64, 3, 224, 224});
}

TEST_CASE("import_onnx: errors") {
  SUBCASE("corrupt file") {
    std::string path = test::write_temp_file("corrupt.onnx", "this is not a protobuf \xff\xff\xff");
    test::CommandResult result = test::run_pase("import " + path);
    CHECK(result.status == 1);
    CHECK(result.error ==
          "error: " + path + ": not an ONNX model (the file does not parse as an ONNX ModelProto with a graph)\n");
  }
  SUBCASE("unsupported op") {
    std::string path = unsupported_op_model();
    test::CommandResult result = test::run_pase("import " + path);
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + path +
                              ": node 'hardmax': unsupported Hardmax; 1 unsupported node(s): "
                              "Hardmax x1 ('hardmax'); --lenient imports them as zero-cost pass-through vertices\n");
  }
  SUBCASE("unsupported op, solved directly: solve takes the import options") {
    std::string path = unsupported_op_model();
    test::CommandResult result = test::run_pase("solve " + path + " --devices 2");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + path +
                              ": node 'hardmax': unsupported Hardmax; 1 unsupported node(s): "
                              "Hardmax x1 ('hardmax'); --lenient imports them as zero-cost pass-through vertices\n");
    // The Hardmax is half the model's estimated FLOP (the Relu the other half).
    test::CommandResult refused = test::run_pase("solve " + path + " --devices 2 --lenient");
    CHECK(refused.status == 1);
    CHECK(refused.error == "error: " + path +
                               ": 1 node(s) imported as pass-throughs hold 50.00% of the model's estimated FLOP (more than "
                               "5%): the solution would price a different model; --lenient=force imports them anyway\n");
    test::CommandResult forced = test::run_pase("solve " + path + " --devices 2 --lenient=force --no-plan --json");
    CHECK(forced.status == 0);
    CHECK(forced.error ==
          "note: lenient: node 'hardmax' (Hardmax) output 0 imported as an elementwise vertex with pointwise 0\n"
          "note: lenient: node 'hardmax' (Hardmax) holds 50.00% of the model's estimated FLOP\n"
          "note: lenient: 1 node(s) imported as pass-throughs hold 50.00% of the model's estimated FLOP\n");
    nlohmann::json strategy = nlohmann::json::parse(forced.output);
    CHECK(strategy["replaced"] == nlohmann::json::parse(R"([{"op": "Hardmax", "name": "hardmax", "flop_share": 0.5}])"));
    test::CommandResult bad = test::run_pase("solve " + path + " --devices 2 --lenient=maybe");
    CHECK(bad.status == 2);
    CHECK(bad.error == "error: --lenient: expected no value or 'force', got 'maybe'\n");
  }
  SUBCASE("unsupported op, evaluated: the option is pase import's") {
    std::string path = unsupported_op_model();
    test::CommandResult result = test::run_pase("frontier " + path + " --devices 2");
    CHECK(result.status == 1);
    CHECK(result.error.find("`pase import --lenient` imports them") != std::string::npos);
  }
  SUBCASE("unsupported op, library words") {
    try {
      (void)import_onnx(unsupported_op_model(), OnnxImportOptions{});
      FAIL("import_onnx accepted an unsupported op");
    } catch (const OptionError& error) {
      CHECK(error.words().option == "lenient");
      CHECK(std::string(error.what()).find("; the import option 'lenient' imports them as zero-cost pass-through vertices") !=
            std::string::npos);
    }
  }
  SUBCASE("unsupported op, lenient: listed with its FLOP share, refused above 5% unless forced") {
    std::string path = unsupported_op_model();
    test::CommandResult refused = test::run_pase("import " + path + " --lenient");
    CHECK(refused.status == 1);
    CHECK(refused.error.find("hold 50.00% of the model's estimated FLOP (more than 5%)") != std::string::npos);
    test::CommandResult result = test::run_pase("import " + path + " --lenient=force");
    CHECK(result.status == 0);
    GraphFileV1 file = parse_graph_file(result.output, "lenient.json");
    CHECK(node_named(file, "hardmax").op == "elementwise");
    CHECK(node_named(file, "hardmax").pointwise == 1);  // the Relu
    REQUIRE(file.replaced.size() == 1);
    CHECK(file.replaced[0].name == "hardmax");
    CHECK(file.replaced[0].flop_share == 0.5);
  }
  SUBCASE("unsupported op, lenient: another shape stays connected") {
    // ReduceMax (no pase op) changes the element count: [2, 6] -> [2, 1].
    TinyModel m;
    m.input("x", {2, 6});
    onnx::NodeProto& max = m.node("tile", "ReduceMax", {"x"}, {"t"});
    TinyModel::attribute(max, "axes", std::vector<int64_t>{1});
    m.node("relu", "Relu", {"t"}, {"y"});
    m.output("y");
    OnnxImportOptions options;
    options.lenient = true;
    options.lenient_force = true;
    OnnxImport result = import_onnx(m.save("tile.onnx"), options);
    Graph graph = build_graph(result.graph, "tile.onnx");
    CHECK(graph.component_count() == 1);
    CHECK(node_named(result.graph, "tile/flat").op == "reshape");
    CHECK(node_named(result.graph, "tile/one").op == "slice");
    CHECK(node_named(result.graph, "tile").op == "expand");
    CHECK(result.notes.front() == "lenient: node 'tile' (ReduceMax) output 0 imported as an expand of one entry of its first "
                                  "activation input");
  }
  SUBCASE("unsupported op, lenient: a small share is imported") {
    // x [2, 64] @ w [64, 64]: 2·2·64·64 = 16384 FLOP; the Hardmax 128 (one per
    // element), the Relu 128: the Hardmax holds 128 / 16640 = 0.77%.
    TinyModel m;
    m.input("x", {2, 64});
    m.input("w", {64, 64});
    m.node("mm", "MatMul", {"x", "w"}, {"h"});
    m.node("hardmax", "Hardmax", {"h"}, {"s"});
    m.node("relu", "Relu", {"s"}, {"y"});
    m.output("y");
    OnnxImportOptions options;
    options.lenient = true;
    OnnxImport result = import_onnx(m.save("small_share.onnx"), options);
    REQUIRE(result.replaced.size() == 1);
    CHECK(result.replaced[0].flop_share == doctest::Approx(128.0 / 16640.0));
    CHECK(result.notes.back() == "lenient: 1 node(s) imported as pass-throughs hold 0.77% of the model's estimated FLOP");
  }
  SUBCASE("unknown shape") {
    TinyModel m;
    m.input("x", {2, 6});
    m.input("target", {2}, onnx::TensorProto::INT64);  // a shape only known at run time
    m.node("reshape", "Reshape", {"x", "target"}, {"r"});
    m.node("relu", "Relu", {"r"}, {"y"});
    m.output("y");
    std::string path = m.save("unknown.onnx");
    test::CommandResult result = test::run_pase("solve " + path + " --devices 2");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + path +
                              ": node 'reshape': cannot infer the shape of output 'r' (Reshape; ONNX shape inference and the "
                              "constant evaluator left it unknown)\n");
  }
  SUBCASE("bad loss") {
    OnnxImportOptions options;
    options.loss = "mse";
    CHECK_THROWS_WITH_AS((void)import_onnx(onnx_fixture("alexnet"), options),
                         "import option 'loss': unknown loss 'mse' (choose softmax_xent or none)", InputError);
  }
}

TEST_CASE("import_onnx: weights keep the exporter's names; biases and scales are their layer's; buffers are not weights") {
  TinyModel m;
  m.input("x", {2, 8});
  m.input("img", {2, 3, 8, 8});
  for (const auto& [name, dims] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"fc.weight", {4, 8}}, {"fc.bias", {4}}, {"raw", {4, 4}}, {"proj.weight", {4, 4}},
           {"conv.weight", {4, 3, 3, 3}}, {"conv.bias", {4}}, {"bn.weight", {4}}, {"bn.bias", {4}},
           {"bn.running_mean", {4}}, {"bn.running_var", {4}}})
    m.input(name, dims);
  m.initializer("left", {3, 2});  // a graph input there would be data (MatMul's left operand)
  m.initializer("mask", {8, 8});
  TinyModel::attribute(m.node("gemm", "Gemm", {"x", "fc.weight", "fc.bias"}, {"g"}), "transB", int64_t{1});
  m.node("plain", "MatMul", {"g", "raw"}, {"h"});  // a weight held [K, N]
  TinyModel::attribute(m.node("t", "Transpose", {"proj.weight"}, {"proj_t"}), "perm", std::vector<int64_t>{1, 0});
  m.node("proj", "MatMul", {"h", "proj_t"}, {"k"});
  m.node("lefty", "MatMul", {"left", "k"}, {"l"});  // weight on the left: an einsum reading an external weight
  onnx::NodeProto& conv = m.node("conv", "Conv", {"img", "conv.weight", "conv.bias"}, {"c"});
  TinyModel::attribute(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  TinyModel::attribute(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("bn", "BatchNormalization", {"c", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"n"});
  m.node("masked", "Add", {"n", "mask"}, {"y"});
  m.output("l");
  m.output("y");
  GraphFileV1 file = import_onnx(m.save("weights.onnx"), OnnxImportOptions{}).graph;
  (void)build_graph(file, "weights.onnx");
  auto weights = [](const NodeV1& node) { return node.weights.value_or(std::vector<std::string>{}); };
  auto pointwise = [](const NodeV1& node) { return node.pointwise_weights.value_or(std::vector<PointwiseWeightV1>{}); };
  CHECK(node_named(file, "gemm").op == "fc");
  CHECK(weights(node_named(file, "gemm")) == std::vector<std::string>{"fc.weight"});
  CHECK(pointwise(node_named(file, "gemm")) == std::vector<PointwiseWeightV1>{{"fc.bias", {4}, std::nullopt}});
  CHECK(node_named(file, "plain").op == "fc");
  CHECK(weights(node_named(file, "plain")) == std::vector<std::string>{"raw"});
  CHECK(node_named(file, "plain").weight_layout == "kn");
  CHECK(!node_named(file, "gemm").weight_layout);  // [N, K]: the default
  CHECK(weights(node_named(file, "proj")) == std::vector<std::string>{"proj.weight"});
  CHECK(node_named(file, "lefty").op == "einsum");
  CHECK(node_named(file, "lefty").inputs[0] == "left");
  CHECK(file.parameters == std::vector<std::string>{"left"});
  CHECK(weights(node_named(file, "conv")) == std::vector<std::string>{"conv.weight"});
  CHECK(pointwise(node_named(file, "conv")) == std::vector<PointwiseWeightV1>{{"conv.bias", {4}, 1}});
  // The running statistics and the [8, 8] mask are buffers: neither data
  // (external tensors of the graph) nor weights of any node.
  CHECK(pointwise(node_named(file, "bn")) ==
        std::vector<PointwiseWeightV1>{{"bn.weight", {4}, 1}, {"bn.bias", {4}, 1}});
  std::vector<std::string> tensors;
  for (const auto& [name, shape] : file.tensors) tensors.push_back(name);
  CHECK(tensors == std::vector<std::string>{"x", "left", "img"});
  for (const NodeV1& node : file.nodes)
    for (const PointwiseWeightV1& w : pointwise(node))
      CHECK((w.name != "mask" && w.name != "bn.running_mean" && w.name != "bn.running_var"));
}

TEST_CASE("import_onnx: weights held [K, N], transposed einsum operands and biases on inputs keep the exporter's names") {
  TinyModel m;
  m.input("x", {4, 8});
  m.input("z", {2, 3, 5});
  // Graph inputs in parameter slots (export_params=False), and initializers
  // where a graph input would be data (an einsum's operands).
  m.input("kn", {8, 6});
  m.input("g.weight", {6, 5});
  m.input("gt.weight", {5, 7});
  m.input("zb", {5});
  m.input("sb", {3});
  m.initializer("mix", {4, 3});
  m.initializer("w3", {2, 7, 5});
  m.node("matmul", "MatMul", {"x", "kn"}, {"h"});          // fc reading [K, N] as held
  m.node("gemm", "Gemm", {"h", "g.weight"}, {"g"});        // transB = 0: [K, N] as held
  TinyModel::attribute(m.node("gt", "Transpose", {"gt.weight"}, {"gt_t"}), "perm", std::vector<int64_t>{1, 0});
  // [K, N] read through a Transpose as transB = 1's [N, K]:
  TinyModel::attribute(m.node("gemm_t", "Gemm", {"g", "gt_t"}, {"k"}), "transB", int64_t{1});
  TinyModel::attribute(m.node("mt", "Transpose", {"mix"}, {"mix_t"}), "perm", std::vector<int64_t>{1, 0});
  m.node("left", "MatMul", {"mix_t", "h"}, {"l"});         // [3, 4] x [4, 6]: the Transpose of mix on the left
  m.node("shift", "Add", {"z", "zb"}, {"zs"});             // a bias on a graph input
  TinyModel::attribute(m.node("wt", "Transpose", {"w3"}, {"w3_t"}), "perm", std::vector<int64_t>{0, 2, 1});
  m.node("batched", "MatMul", {"zs", "w3_t"}, {"b"});      // [2, 3, 5] x [2, 5, 7]
  TinyModel::attribute(m.node("halves", "Split", {"h"}, {"h0", "h1"}), "axis", int64_t{1});
  m.node("split_bias", "Add", {"h1", "sb"}, {"s"});        // a bias on the second output of a split
  m.node("join", "Add", {"h0", "s"}, {"j"});
  for (const char* out : {"k", "l", "b", "j"}) m.output(out);
  GraphFileV1 file = import_onnx(m.save("layouts.onnx"), OnnxImportOptions{}).graph;

  CHECK(node_named(file, "matmul").op == "fc");
  CHECK(node_named(file, "matmul").weights == std::vector<std::string>{"kn"});
  CHECK(node_named(file, "matmul").weight_layout == "kn");
  CHECK(node_named(file, "gemm").weights == std::vector<std::string>{"g.weight"});
  CHECK(node_named(file, "gemm").weight_layout == "kn");
  CHECK(node_named(file, "gemm_t").weights == std::vector<std::string>{"gt.weight"});
  CHECK(node_named(file, "gemm_t").weight_layout == "kn");
  // The einsums read the parameters as held, their letters permuted.
  CHECK(node_named(file, "left").op == "einsum");
  CHECK(node_named(file, "left").inputs == std::vector<std::string>{"mix", "matmul"});
  CHECK(node_named(file, "left").equation == "km,kn->mn");
  CHECK(node_named(file, "batched").inputs == std::vector<std::string>{"shift", "w3"});
  CHECK(node_named(file, "batched").equation == "amk,ank->amn");
  CHECK(file.parameters == std::vector<std::string>{"mix", "w3"});
  // A bias with no single-output layer to fold into gets an elementwise vertex.
  CHECK(node_named(file, "shift").op == "elementwise");
  CHECK(node_named(file, "shift").inputs == std::vector<std::string>{"z"});
  CHECK(node_named(file, "shift").pointwise_weights == std::vector<PointwiseWeightV1>{{"zb", {5}, std::nullopt}});
  CHECK(node_named(file, "split_bias").inputs == std::vector<std::string>{"halves:1"});
  CHECK(node_named(file, "split_bias").pointwise_weights == std::vector<PointwiseWeightV1>{{"sb", {3}, std::nullopt}});

  // Every parameter once, with the exporter's shape, among the layers' weights.
  Graph graph = build_graph(file, "layouts.onnx");
  std::map<std::string, std::vector<Shape>> listed;
  std::map<std::string, std::vector<std::string>> letters;
  for (const Vertex& vertex : graph.vertices) {
    VertexModel model = build_vertex_model(vertex);
    for (const LayerWeight& w : layer_weights(vertex, model)) {
      listed[w.name].push_back(w.shape);
      letters[w.name] = split_letters(w.split, model.letters);
    }
  }
  const std::map<std::string, std::vector<Shape>> correct = {
      {"kn", {{8, 6}}}, {"g.weight", {{6, 5}}}, {"gt.weight", {{5, 7}}}, {"mix", {{4, 3}}},
      {"w3", {{2, 7, 5}}}, {"zb", {{5}}},    {"sb", {{3}}}};
  CHECK(listed == correct);
  CHECK(letters["kn"] == std::vector<std::string>{"k", "n"});  // fc (b n k): K rows, N columns
  CHECK(letters["mix"] == std::vector<std::string>{"k", "m"});
  CHECK(letters["w3"] == std::vector<std::string>{"a", "n", "k"});
}

TEST_CASE("pase solve: every trainable parameter of the fixtures is in the strategy file, once") {
  // torchvision's CNNs (conv and fc weights and biases, BatchNorm scales and
  // shifts), the Transformer encoder (in_proj, out_proj, LayerNorm) and the
  // parameter_layouts model (a bias on the input, fc weights held [K, N], a
  // transposed einsum operand; exported with its values and a mask buffer).
  for (const char* name : {"alexnet", "vgg16", "resnet50", "inception_v3", "transformer_encoder", "parameter_layouts"}) {
    CAPTURE(name);
    onnx::ModelProto model;
    std::ifstream in(onnx_fixture(name), std::ios::binary);
    REQUIRE(model.ParseFromIstream(&in));
    // The exporter's parameters (graph inputs with export_params=False,
    // initializers otherwise) with their shapes, without the data input and
    // the buffers: BatchNormalization's running statistics, the mask.
    std::set<std::string> buffers = {"mask"};
    for (const onnx::NodeProto& node : model.graph().node())
      if (node.op_type() == "BatchNormalization")
        for (int k = 3; k < node.input_size(); ++k) buffers.insert(node.input(k));
    std::map<std::string, Shape> expected;
    for (const onnx::ValueInfoProto& input : model.graph().input())
      if (input.name() != "input" && !buffers.count(input.name())) {
        Shape& shape = expected[input.name()];
        for (const onnx::TensorShapeProto::Dimension& d : input.type().tensor_type().shape().dim()) shape.push_back(d.dim_value());
      }
    for (const onnx::TensorProto& init : model.graph().initializer())
      if (init.data_type() == onnx::TensorProto::FLOAT && !buffers.count(init.name()))
        expected[init.name()] = Shape(init.dims().begin(), init.dims().end());
    CHECK(expected.size() >= 9);  // parameter_layouts' 9; alexnet's 8 weights and 8 biases, and more elsewhere

    test::CommandResult result = test::run_pase("solve " + onnx_fixture(name) + " --devices 8 --json");
    REQUIRE(result.status == 0);
    nlohmann::json strategy = nlohmann::json::parse(result.output);
    std::map<std::string, int> listed;
    for (const nlohmann::json& layer : strategy["layers"])
      for (const nlohmann::json& weight : layer["weights"]) {
        const std::string weight_name = weight["name"].get<std::string>();
        ++listed[weight_name];
        CAPTURE(weight_name);
        if (expected.count(weight_name)) CHECK(weight["shape"].get<Shape>() == expected[weight_name]);
      }
    for (const auto& [parameter, shape] : expected) {
      CAPTURE_BOUND(parameter);
      CHECK(listed[parameter] == 1);
    }
    CHECK(listed.size() == expected.size());  // nothing else: no buffer, no NODE/weight
  }
}

TEST_CASE("build_plan: the parameter_layouts fixture with its weights split passes plan-check") {
  // Configurations picked by hand so that every weight held [K, N] and the
  // transposed einsum operand are split along both their dimensions.
  GraphFileV1 file = import_onnx(onnx_fixture("parameter_layouts"), OnnxImportOptions{}).graph;
  file.cutoff = 1;  // the model is tiny: let every dimension be split
  Graph graph = build_graph(file, "parameter_layouts");
  Machine machine;
  machine.devices = 8;
  PaseCostModel model(machine);
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
  pick("/Add", {2, 1, 4});              // a b c: the bias follows c
  pick("/MatMul", {2, 1, 2, 2});        // b s n k, weight "kn" [K, N]
  pick("/linear/MatMul", {2, 1, 2, 2});  // weight [N, K] through a Transpose
  pick("/MatMul_1", {2, 2, 1, 2});      // a m n k: "km,akn->amn", mix [4, 6] follows (k, m)
  pick("/Gemm", {2, 2, 2});             // b n k, head [96, 10] follows (k, n)
  Mesh mesh = default_mesh(8, 0);
  REQUIRE(unrealizable_reason(graph, tables, choice, mesh).empty());
  PlanResult planned = build_plan(graph, tables, choice, mesh, model, PlanOptions{});
  std::string text = write_strategy_file(graph, tables, choice, 0.0, nullptr, &planned.plan);
  nlohmann::json document = nlohmann::json::parse(text);
  std::map<std::string, nlohmann::json> weights;
  for (const nlohmann::json& layer : document["layers"])
    for (const nlohmann::json& w : layer["weights"]) weights[w["name"].get<std::string>()] = w;
  auto summary = [&](const std::string& name) {
    const nlohmann::json& w = weights[name];
    return nlohmann::json{{"shape", w["shape"]}, {"dims", w["dims"]}, {"split", w["split"]}};
  };
  CHECK(summary("shift") == nlohmann::json::parse(R"({"shape": [16], "dims": ["c"], "split": [4]})"));
  CHECK(summary("kn") == nlohmann::json::parse(R"({"shape": [16, 24], "dims": ["k", "n"], "split": [2, 2]})"));
  CHECK(summary("linear.weight") == nlohmann::json::parse(R"({"shape": [16, 24], "dims": ["n", "k"], "split": [2, 2]})"));
  CHECK(summary("mix") == nlohmann::json::parse(R"({"shape": [4, 6], "dims": ["k", "m"], "split": [2, 2]})"));
  CHECK(summary("head") == nlohmann::json::parse(R"({"shape": [96, 10], "dims": ["k", "n"], "split": [2, 2]})"));
  std::optional<PlanFile> plan = read_plan(text, "plan.json");
  REQUIRE(plan);
  PlanCheckReport report = check_plan(*plan);
  CHECK(report.problems == std::vector<std::string>{});
  CHECK(report.layers_computed >= 4);  // the fcs and the einsum, computed with their weights on a shrunk problem
}
// Today's architectures (scripts/export_onnx_fixtures.py): each imports
// without --lenient and the exact DP solves it at 8 and 64 devices.
const char* const kTodayFixtures[] = {"gpt2",         "llama",        "seq2seq",         "lstm_lm",
                                      "gru_lm",       "mobilenet_v2", "efficientnet_b0", "convnext_tiny",
                                      "moe",          "swin_t",       "scatter_tokens"};

TEST_CASE("import_onnx: today's fixtures import strictly and solve exactly at p = 8 and 64") {
  for (const char* name : kTodayFixtures) {
    CAPTURE(name);
    OnnxImport result = import_onnx(onnx_fixture(name), OnnxImportOptions{});
    CHECK(result.notes.empty());
    Graph graph = build_graph(result.graph, name);
    CHECK(graph.component_count() == 1);
    for (int devices : {8, 64}) {
      CAPTURE(devices);
      test::CommandResult solved =
          test::run_pase("solve " + onnx_fixture(name) + " --devices " + std::to_string(devices) + " --exact --no-plan");
      CHECK(solved.status == 0);
      CHECK(solved.output.find("total cost ") != std::string::npos);
    }
  }
}

TEST_CASE("import_onnx: ArgMax, OneHot, CumSum and ScatterND on activations") {
  // x [4, 6] -> ArgMax(axis 1, keepdims) [4, 1] -> OneHot(depth 5, axis 0) [5, 4, 1] -> CumSum(axis 1) -> y;
  // and x with rows 0 and 2 replaced by the rows of u: ScatterND(x, [[0], [2]], u [2, 6]) -> z.
  TinyModel m;
  m.input("x", {4, 6});
  m.input("u", {2, 6});
  m.int_initializer("depth", {}, {5});
  m.initializer("values", {2});  // off and on values (their numbers do not matter)
  m.int_initializer("axis", {}, {1});
  m.int_initializer("rows", {2, 1}, {0, 2});
  TinyModel::attribute(m.node("top", "ArgMax", {"x"}, {"i"}), "axis", int64_t{1});
  TinyModel::attribute(m.node("hot", "OneHot", {"i", "depth", "values"}, {"h"}), "axis", int64_t{0});
  m.node("queue", "CumSum", {"h", "axis"}, {"y"});
  m.node("write", "ScatterND", {"x", "rows", "u"}, {"z"});
  m.output("y");
  m.output("z");
  OnnxImportOptions options;
  options.loss = "none";
  GraphFileV1 file = import_onnx(m.save("index_ops.onnx"), options).graph;
  const NodeV1& top = node_named(file, "top");
  CHECK(top.op == "argmax");
  CHECK(top.axis == 1);
  CHECK(top.keepdims == true);  // ONNX's default
  CHECK(*top.outputs == std::vector<Shape>{{4, 1}});
  const NodeV1& hot = node_named(file, "hot");
  CHECK(hot.op == "one_hot");
  CHECK(hot.depth == 5);
  CHECK(hot.axis == 0);
  CHECK(*hot.outputs == std::vector<Shape>{{5, 4, 1}});  // the depth dimension inferred by pase
  const NodeV1& queue = node_named(file, "queue");
  CHECK(queue.op == "cumsum");
  CHECK(queue.axis == 1);
  const NodeV1& write = node_named(file, "write");
  CHECK(write.op == "scatter_nd");
  CHECK(write.inputs == std::vector<std::string>{"x", "rows", "u"});
  CHECK(*write.outputs == std::vector<Shape>{{4, 6}});
  Graph graph = build_graph(file, "index_ops.onnx");
  CHECK(graph.vertices.size() == 4);
}

TEST_CASE("import_onnx: the MoE's contractions are all einsums, and its optima are unchanged") {
  // Every Einsum of the fixture (gate x slot se,sc->sec without a reduction letter, dispatch sec,sm->ecm,
  // the experts, combine sec,ecm->sm) has a letter only in either operand: the graph format's einsum
  // carries each, so none becomes a contraction.
  GraphFileV1 file = import_onnx(onnx_fixture("moe"), OnnxImportOptions{}).graph;
  int einsums = 0;
  for (const NodeV1& node : file.nodes) {
    CAPTURE(node.name);
    CHECK(node.op != "contraction");
    if (node.op == "einsum") ++einsums;
  }
  CHECK(einsums == 6);
  // The optima at p = 8 and 64, pinned.
  for (const auto& [devices, total] : {std::pair<int, std::string>{8, "18362626048"}, {64, "10941213824"}}) {
    CAPTURE_BOUND(devices);
    test::CommandResult solved = test::run_pase("solve " + onnx_fixture("moe") + " --devices " + std::to_string(devices) +
                                                " --no-plan");
    CHECK(solved.status == 0);
    CHECK(solved.output.find("total cost " + total + " flop") != std::string::npos);
  }
}

TEST_CASE("import_onnx: the MoE's experts are priced by capacity, e·c·m·h") {
  Graph graph = build_graph(import_onnx(onnx_fixture("moe"), OnnxImportOptions{}).graph, "moe");
  const int v = graph.find_vertex("/Einsum_3");  // ecm,emh->ech, then relu
  REQUIRE(v >= 0);
  VertexModel model = build_vertex_model(graph.vertices[static_cast<size_t>(v)]);
  CHECK(model.letters == "echm");
  CHECK(model.domain == Shape{8, 512, 512, 256});
  Machine machine;
  machine.devices = 1;
  CostTables tables = build_cost_tables(graph, machine);
  // Bpp = e = 8 GEMMs of c x h x m = 512 x 512 x 256 slots (three each: forward, two backward) and the
  // fused relu (pw 1) on each c x h output: 8 · (3 · 512 · 512 · 256 + 3 · 512 · 512) = 1616904192 FLOP.
  // A dense dispatch (every expert computing all 2048 tokens) would price 2048 where c is 512.
  CHECK(tables.objective.vertex_cost[static_cast<size_t>(v)][0] == 1616904192.0);
}

TEST_CASE("import_onnx: what today's models lower to") {
  auto ops_of = [](const char* name) {
    std::map<std::string, int> count;
    for (const NodeV1& n : import_onnx(onnx_fixture(name), OnnxImportOptions{}).graph.nodes) ++count[n.op];
    return count;
  };
  SUBCASE("LSTM and GRU become lstm vertices with 4 and 3 gates, not pass-throughs") {
    for (const char* name : {"lstm_lm", "gru_lm"}) {
      CAPTURE(name);
      GraphFileV1 file = import_onnx(onnx_fixture(name), OnnxImportOptions{}).graph;
      int rnns = 0;
      for (const NodeV1& n : file.nodes) {
        if (n.op != "lstm") continue;
        ++rnns;
        CHECK(n.units == 256);
        CHECK(n.layers == 1);
        CHECK(n.gates.value_or(4) == (std::string(name) == "gru_lm" ? 3 : 4));
      }
      CHECK(rnns == 2);
    }
  }
  SUBCASE("depthwise convolutions keep their groups; squeeze-excitation scales broadcast") {
    GraphFileV1 file = import_onnx(onnx_fixture("efficientnet_b0"), OnnxImportOptions{}).graph;
    const NodeV1& dw = node_named(file, "/features/features.1/features.1.0/block/block.0/block.0.0/Conv");
    CHECK(dw.op == "conv2d");
    CHECK(dw.groups == 32);
    CHECK(*dw.filter == Shape{32, 1, 3, 3});
    const NodeV1& se = node_named(file, "/features/features.1/features.1.0/block/block.1/Mul");
    CHECK(se.op == "elementwise");
    CHECK(se.outputs->front() == Shape{128, 32, 112, 112});
  }
  SUBCASE("masks and rotary tables are buffers, not data; grouped-query heads are expanded") {
    OnnxImport llama = import_onnx(onnx_fixture("llama"), OnnxImportOptions{});
    REQUIRE(llama.graph.tensors.size() == 1);
    CHECK(llama.graph.tensors[0].first == "ids");
    CHECK(ops_of("llama")["expand"] == 4);
    OnnxImportOptions batch4;
    batch4.batch = 4;
    OnnxImport gpt2 = import_onnx(onnx_fixture("gpt2"), batch4);  // the [1, 1, 128, 128] mask keeps its shape
    REQUIRE(gpt2.graph.tensors.size() == 1);
    CHECK(gpt2.graph.tensors[0].second == Shape{4, 128});
  }
  SUBCASE("--batch rewrites Reshape targets the trace baked the batch into") {
    OnnxImportOptions batch4;
    batch4.batch = 4;
    for (const char* name : {"gpt2", "llama"}) {
      CAPTURE(name);
      GraphFileV1 file = import_onnx(onnx_fixture(name), batch4).graph;
      CHECK(file.tensors[0].second[0] == 4);
      for (const NodeV1& n : file.nodes)
        if (n.op == "reshape" && n.shape->size() == 4) CHECK(n.shape->front() == 4);
    }
    // nn.MultiheadAttention folds batch and heads into one dimension (16·4 = 64): not rewritable.
    CHECK_THROWS_WITH_AS((void)import_onnx(onnx_fixture("seq2seq"), batch4),
                         (onnx_fixture("seq2seq") + ": node '/transformer/encoder/layers.0/self_attn/Reshape': Reshape target "
                                               "[128, 64, 64] does not hold the 131072 elements of its input [128, 4, 256] at "
                                               "batch 4: the export baked a size into it that re-batching cannot rewrite; "
                                               "export with a dynamic batch axis (dynamic_axes)")
                             .c_str(),
                         InputError);
  }
  SUBCASE("the capacity-based top-2 MoE: router masks, dispatch, experts over e x c slots, combine") {
    GraphFileV1 file = import_onnx(onnx_fixture("moe"), OnnxImportOptions{}).graph;
    const NodeV1& top1 = node_named(file, "/ArgMax");
    CHECK(top1.op == "argmax");
    CHECK(top1.axis == 1);
    CHECK(*top1.outputs == std::vector<Shape>{{2048}});
    const NodeV1& mask = node_named(file, "/OneHot");
    CHECK(mask.op == "one_hot");
    CHECK(mask.depth == 8);
    CHECK(node_named(file, "/ArgMax_1").inputs == std::vector<std::string>{"/Where"});  // the top-2 among the rest
    const NodeV1& queue = node_named(file, "/CumSum");
    CHECK(queue.op == "cumsum");
    CHECK(queue.axis == 0);
    // Each token's slot in its expert: one-hot over the capacity 2 · 2048 tokens / 8 experts = 512.
    const NodeV1& slot = node_named(file, "/OneHot_2");
    CHECK(slot.depth == 512);
    CHECK(*slot.outputs == std::vector<Shape>{{2048, 512}});
    CHECK(node_named(file, "/Einsum").equation == "se,sc->sec");
    CHECK(node_named(file, "/Einsum_2").equation == "sec,sm->ecm");
    CHECK(*node_named(file, "/Einsum_2").outputs == std::vector<Shape>{{8, 512, 256}});
    CHECK(node_named(file, "/Einsum_3").equation == "ecm,emh->ech");
    CHECK(node_named(file, "/Einsum_3").inputs[1] == "w_in");
    CHECK(node_named(file, "/Einsum_5").equation == "sec,ecm->sm");
    CHECK(std::count(file.parameters.begin(), file.parameters.end(), "w_out") == 1);
  }
  SUBCASE("ScatterND on activations: h[:, slots] = summary") {
    GraphFileV1 file = import_onnx(onnx_fixture("scatter_tokens"), OnnxImportOptions{}).graph;
    const NodeV1& scatter = node_named(file, "/ScatterND");
    CHECK(scatter.op == "scatter_nd");
    // data, the constant (batch, position) index pairs as an external tensor, the summary broadcast to 4 slots.
    CHECK(scatter.inputs == std::vector<std::string>{"/proj/MatMul", "/Concat_output_0", "/Expand"});
    CHECK(*scatter.outputs == std::vector<Shape>{{16, 128, 256}});
    Graph graph = build_graph(file, "scatter_tokens");
    VertexModel model = build_vertex_model(graph.vertices[static_cast<size_t>(graph.find_vertex("/ScatterND"))]);
    CHECK(model.splittable == std::vector<char>{0, 0, 1});  // the two addressed dimensions stay whole
  }
  SUBCASE("a 1-D Conv is a conv2d over a unit width") {
    // x [2, 4, 16], w [8, 2, 3], 2 groups, stride 2, pads 1: L = (16 + 2 − 3) / 2 + 1 = 8.
    TinyModel m;
    m.input("x", {2, 4, 16});
    m.input("w", {8, 2, 3});
    onnx::NodeProto& conv = m.node("c1d", "Conv", {"x", "w"}, {"y"});
    TinyModel::attribute(conv, "group", int64_t{2});
    TinyModel::attribute(conv, "kernel_shape", std::vector<int64_t>{3});
    TinyModel::attribute(conv, "strides", std::vector<int64_t>{2});
    TinyModel::attribute(conv, "pads", std::vector<int64_t>{1, 1});
    m.output("y");
    GraphFileV1 file = import_onnx(m.save("conv1d.onnx"), OnnxImportOptions{}).graph;
    CHECK(*node_named(file, "c1d/in").shape == Shape{2, 4, 16, 1});
    const NodeV1& c = node_named(file, "c1d");
    CHECK(c.op == "conv2d");
    CHECK(*c.filter == Shape{8, 2, 3, 1});
    CHECK(c.groups == 2);
    CHECK(*c.stride == HeightWidth{2, 1});
    CHECK(*c.padding == HeightWidth{1, 0});
    CHECK(*node_named(file, "c1d/out").shape == Shape{2, 8, 8});
  }
  SUBCASE("Swin: the relative-position index is a buffer; patch merging slices with a step") {
    OnnxImport swin = import_onnx(onnx_fixture("swin_t"), OnnxImportOptions{});
    REQUIRE(swin.graph.tensors.size() == 1);
    CHECK(swin.graph.tensors[0].first == "input");
    // x[..., 0::2, 0::2, :] of [2, 56, 56, 96]: rows, then columns.
    const NodeV1& rows = node_named(swin.graph, "/features/features.2/Slice_1");
    CHECK(rows.op == "slice");
    CHECK(rows.axis == 1);
    CHECK(*rows.shape == Shape{2, 28, 56, 96});
    const NodeV1& columns = node_named(swin.graph, "/features/features.2/Slice_2");
    CHECK(columns.inputs == std::vector<std::string>{"/features/features.2/Slice_1"});
    CHECK(columns.axis == 2);
    CHECK(*columns.shape == Shape{2, 28, 28, 96});
    CHECK(node_named(swin.graph, "/features/features.2/Concat_3").op == "concat");
    // Swin-T's depth, 2-2-6-2: the third stage's sixth block.
    CHECK(node_named(swin.graph, "/features/features.5/features.5.5/mlp/mlp.3/MatMul").op == "fc");
    int blocks = 0;
    for (const NodeV1& n : swin.graph.nodes) blocks += n.op == "softmax" ? 1 : 0;  // one attention per block
    CHECK(blocks == 12);
    // --batch rewrites the window partition's [batch·windows, ...] targets and their reverse.
    OnnxImportOptions batch8;
    batch8.batch = 8;
    OnnxImport rebatched = import_onnx(onnx_fixture("swin_t"), batch8);
    CHECK(rebatched.graph.tensors[0].second == Shape{8, 3, 224, 224});
    CHECK(node_named(rebatched.graph, "/features/features.1/features.1.0/attn/Reshape_4").shape == Shape{512, 49, 96});
    CHECK(node_named(rebatched.graph, "/head/Gemm").outputs->front() == Shape{8, 1000});
  }
  SUBCASE("a grouped Conv") {
    GraphFileV1 file = import_onnx(grouped_conv_model(), OnnxImportOptions{}).graph;
    CHECK(node_named(file, "depthwise").op == "conv2d");
    CHECK(node_named(file, "depthwise").groups == 2);
    CHECK(node_named(file, "depthwise").pointwise == 1);  // the Relu
  }
}

TEST_CASE("pase solve X.onnx: the import options; pase batch: .onnx models in a folder") {
  test::CommandResult solved = test::run_pase("solve " + onnx_fixture("gpt2") + " --devices 8 --batch 4 --loss none --json --no-plan");
  REQUIRE(solved.status == 0);
  nlohmann::json strategy = nlohmann::json::parse(solved.output);
  bool has_loss = false;
  for (const auto& layer : strategy["layers"]) {
    has_loss = has_loss || layer["name"] == "loss";
    if (layer["name"] == "/wte/Gather") CHECK(layer["inputs"][0]["shape"] == nlohmann::json::array({4, 128}));
  }
  CHECK(!has_loss);
  test::CommandResult not_onnx =
      test::run_pase("solve " + test::source_path("data/graphs/alexnet.json") + " --devices 8 --batch 4");
  CHECK(not_onnx.status == 2);
  CHECK(not_onnx.error == "error: --batch, --loss and --lenient apply to an ONNX model (.onnx); '" +
                              test::source_path("data/graphs/alexnet.json") + "' is read as a pase-graph file\n");
  const std::string dir = std::filesystem::path(test::write_temp_file("onnx_batch.marker", "")).parent_path().string() +
                          "/onnx_batch";
  std::filesystem::create_directories(dir);
  for (const char* name : {"lstm_lm", "gru_lm"})
    std::filesystem::copy_file(onnx_fixture(name), dir + "/" + name + ".onnx", std::filesystem::copy_options::overwrite_existing);
  test::CommandResult batch = test::run_pase("batch " + dir + " --devices 8");
  CHECK(batch.status == 0);
  CHECK(batch.output.find("batch: 2 ok, 0 failed") != std::string::npos);
}

TEST_CASE("evaluate_constant_node: Split and Tile") {
  std::map<std::string, ConstantValue> values;
  values["x"] = ConstantValue{onnx::TensorProto::INT64, {2, 3}, {1, 2, 3, 4, 5, 6}};
  values["sizes"] = ConstantValue{onnx::TensorProto::INT64, {2}, {1, 2}};
  values["repeats"] = ConstantValue{onnx::TensorProto::INT64, {2}, {2, 1}};
  ConstantLookup lookup{[&](const std::string& n) -> const ConstantValue* {
                          auto it = values.find(n);
                          return it == values.end() ? nullptr : &it->second;
                        },
                        [](const std::string&) -> const Shape* { return nullptr; }};
  auto node = [](const std::string& op, std::vector<std::string> inputs, int outputs, int64_t axis) {
    onnx::NodeProto n;
    n.set_op_type(op);
    for (const std::string& in : inputs) n.add_input(in);
    for (int k = 0; k < outputs; ++k) n.add_output("o" + std::to_string(k));
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(axis);
    return n;
  };
  SUBCASE("Split by sizes along axis 1: [[1], [4]] and [[2, 3], [5, 6]]") {
    std::optional<std::vector<ConstantValue>> parts = evaluate_constant_node(node("Split", {"x", "sizes"}, 2, 1), lookup, 14);
    REQUIRE(parts.has_value());
    CHECK((*parts)[0].dims == Shape{2, 1});
    CHECK((*parts)[0].data == std::vector<double>{1, 4});
    CHECK((*parts)[1].data == std::vector<double>{2, 3, 5, 6});
  }
  SUBCASE("Split into equal parts along axis 0") {
    std::optional<std::vector<ConstantValue>> parts = evaluate_constant_node(node("Split", {"x"}, 2, 0), lookup, 14);
    REQUIRE(parts.has_value());
    CHECK((*parts)[1].data == std::vector<double>{4, 5, 6});
  }
  SUBCASE("Split that does not add up") {
    CHECK_THROWS_WITH_AS((void)evaluate_constant_node(node("Split", {"x", "sizes"}, 2, 0), lookup, 14),
                         "Split sizes [1, 2] do not cut 2 entries into 2 outputs", InvalidConstantNode);
  }
  SUBCASE("Tile rows twice") {
    std::optional<std::vector<ConstantValue>> tiled = evaluate_constant_node(node("Tile", {"x", "repeats"}, 1, 0), lookup, 14);
    REQUIRE(tiled.has_value());
    CHECK((*tiled)[0].dims == Shape{4, 3});
    CHECK((*tiled)[0].data == std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  }
}

TEST_CASE("einsum_output_shape") {
  CHECK(einsum_output_shape("td,edf->etf", {{6, 4}, {3, 4, 5}}) == Shape{3, 6, 5});
  CHECK(einsum_output_shape("ij, jk", {{2, 3}, {3, 4}}) == Shape{2, 4});  // implicit: letters used once, sorted
  CHECK(einsum_output_shape("bij,bjk->bik", {{1, 2, 3}, {5, 3, 4}}) == Shape{5, 2, 4});  // size 1 broadcasts
  CHECK(einsum_output_shape("te,etd->td", {{6, 4}, {4, 6, 10}}) == Shape{6, 10});
  CHECK(einsum_output_shape("ab,bc,cd->ad", {{2, 3}, {3, 4}, {4, 5}}) == Shape{2, 5});
  CHECK(einsum_output_shape("ij->ji", {{2, 3}}) == Shape{3, 2});
  CHECK(einsum_output_shape("ij,ij->i", {{2, 3}, {2, 3}}) == Shape{2});
  CHECK_THROWS_WITH_AS((void)einsum_output_shape("ij,jk->ik", {{2, 3}, {4, 5}}),
                       "equation 'ij,jk->ik': letter 'j' is 3 and 4", std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)einsum_output_shape("ij,jk->iz", {{2, 3}, {3, 5}}),
                       "equation 'ij,jk->iz': output letter 'z' is in no operand or repeated", std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)einsum_output_shape("ijk,jk->i", {{2, 3}, {3, 5}}),
                       "equation 'ijk,jk->i': operand 0 'ijk' has 3 letters but rank 2", std::invalid_argument);
  SUBCASE("an ellipsis covers the dimensions its operand has beyond its letters, lined up from the right") {
    CHECK(einsum_output_shape("...ij,...jk->...ik", {{2, 3}, {3, 4}}) == Shape{2, 4});
    CHECK(einsum_output_shape("...ij,...jk->...ik", {{7, 2, 3}, {5, 7, 3, 4}}) == Shape{5, 7, 2, 4});
    CHECK(einsum_output_shape("...ij,...jk", {{7, 2, 3}, {7, 3, 4}}) == Shape{7, 2, 4});  // implicit: the ellipsis first
    CHECK(einsum_output_shape("b...d->bd", {{2, 3, 4, 5}}) == Shape{2, 5});
    CHECK_THROWS_WITH_AS((void)einsum_output_shape("...i...,i->i", {{2, 3}, {3}}),
                         "equation '...i...,i->i': '...i...' has more than one '...'", std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)einsum_output_shape("abc...,c->c", {{2, 3}, {3}}),
                         "equation 'abc...,c->c': operand 0 'abc...' has 3 letters but rank 2", std::invalid_argument);
  }
  SUBCASE("expand_einsum names the ellipsis dimensions with letters the equation leaves free") {
    EinsumTerms terms = expand_einsum("...ij,...jk->...ik", {4, 3});
    CHECK(terms.operands == std::vector<std::string>{"ABij", "Bjk"});
    CHECK(terms.output == "ABik");
    CHECK(expand_einsum("ba,ac", {2, 2}).output == "bc");
  }
}

namespace {

// One Einsum `e` of `equation` over inputs x0, x1, ... of `shapes`, output y.
GraphFileV1 import_einsum(const std::string& equation, const std::vector<Shape>& shapes) {
  TinyModel m;
  std::vector<std::string> inputs;
  for (size_t j = 0; j < shapes.size(); ++j) {
    inputs.push_back("x" + std::to_string(j));
    m.input(inputs.back(), shapes[j]);
  }
  TinyModel::attribute(m.node("e", "Einsum", inputs, {"y"}), "equation", equation);
  m.output("y");
  OnnxImportOptions options;
  options.loss = "none";
  return import_onnx(m.save("einsum.onnx"), options).graph;
}

}  // namespace

TEST_CASE("import_onnx: every Einsum numpy accepts but diagonals") {
  SUBCASE("no letter only in the first operand: one contraction vertex (the format's einsum refuses it)") {
    GraphFileV1 file = import_einsum("te,etd->td", {{6, 4}, {4, 6, 10}});
    REQUIRE(file.nodes.size() == 1);
    CHECK(file.nodes[0].op == "contraction");
    CHECK(file.nodes[0].equation == "te,etd->td");
    CHECK(*file.nodes[0].outputs == std::vector<Shape>{{6, 10}});
  }
  SUBCASE("a letter one operand alone has is summed out first") {
    GraphFileV1 file = import_einsum("abc,cd->ad", {{2, 3, 4}, {4, 5}});
    REQUIRE(file.nodes.size() == 2);
    CHECK(file.nodes[0].name == "e/sum0");
    CHECK(file.nodes[0].op == "reduce_mean");
    CHECK(*file.nodes[0].axes == std::vector<int64_t>{1});
    CHECK(*file.nodes[0].outputs == std::vector<Shape>{{2, 4}});
    CHECK(file.nodes[1].name == "e");
    CHECK(file.nodes[1].equation == "ac,cd->ad");
    CHECK(file.nodes[1].inputs == std::vector<std::string>{"e/sum0", "x1"});
  }
  SUBCASE("three operands: pairwise from the left, keeping the letters still needed") {
    GraphFileV1 file = import_einsum("ab,bc,cd->ad", {{2, 3}, {3, 4}, {4, 5}});
    REQUIRE(file.nodes.size() == 2);
    CHECK(file.nodes[0].name == "e/contract1");
    CHECK(file.nodes[0].equation == "ab,bc->ac");
    CHECK(file.nodes[1].equation == "ac,cd->ad");
    CHECK(file.nodes[1].inputs == std::vector<std::string>{"e/contract1", "x2"});
    CHECK(*file.nodes[1].outputs == std::vector<Shape>{{2, 5}});
    // A letter the second contraction needs stays: ab,cd,bd->ac keeps b and d after the outer product.
    GraphFileV1 outer = import_einsum("ab,cd,bd->ac", {{2, 3}, {4, 5}, {3, 5}});
    CHECK(outer.nodes[0].equation == "ab,cd->abcd");
    CHECK(outer.nodes[0].op == "einsum");
    CHECK(outer.nodes[1].equation == "abcd,bd->ac");
    CHECK(outer.nodes[1].op == "contraction");  // no letter only in bd
  }
  SUBCASE("an ellipsis and an implicit output") {
    GraphFileV1 file = import_einsum("...ij,...jk->...ik", {{2, 3, 4, 5}, {3, 5, 6}});
    REQUIRE(file.nodes.size() == 1);
    CHECK(file.nodes[0].equation == "ABij,Bjk->ABik");
    CHECK(*file.nodes[0].outputs == std::vector<Shape>{{2, 3, 4, 6}});
    CHECK(import_einsum("ij,jk", {{2, 3}, {3, 4}}).nodes[0].equation == "ij,jk->ik");
  }
  SUBCASE("one operand: a sum, then a transpose") {
    GraphFileV1 file = import_einsum("ijk->ki", {{2, 3, 4}});
    REQUIRE(file.nodes.size() == 2);
    CHECK(file.nodes[0].op == "reduce_mean");
    CHECK(*file.nodes[0].axes == std::vector<int64_t>{1});
    CHECK(file.nodes[1].op == "transpose");
    CHECK(*file.nodes[1].perm == std::vector<int64_t>{1, 0});
    CHECK(*file.nodes[1].outputs == std::vector<Shape>{{4, 2}});
  }
  SUBCASE("einsum where the graph format's einsum takes the equation, contraction where it does not") {
    CHECK(import_einsum("se,sc->sec", {{8, 4}, {8, 6}}).nodes[0].op == "einsum");  // no reduction letter
    CHECK(import_einsum("ij,jk", {{2, 3}, {3, 4}}).nodes[0].op == "einsum");
    CHECK(import_einsum("bk,k->b", {{8, 6}, {6}}).nodes[0].op == "contraction");   // no letter only in k
    CHECK(import_einsum("bk,bk->b", {{8, 6}, {8, 6}}).nodes[0].op == "contraction");
    CHECK(import_einsum("ab,ab->ab", {{4, 6}, {4, 6}}).nodes[0].op == "contraction");
  }
  SUBCASE("the import builds and prices as the contraction it is") {
    GraphFileV1 file = import_einsum("te,etd->td", {{6, 4}, {4, 6, 10}});
    Graph graph = build_graph(file, "einsum.onnx");
    VertexModel model = build_vertex_model(graph.vertices.back());
    CHECK(model.letters == "tde");
    CHECK(model.work.m.empty());  // the empty group: extent 1 in the GEMM formula
    // The written graph file reads back, and the einsum reader would refuse this equation.
    Graph again = test::graph_from_json(write_graph_file(file));
    CHECK(build_vertex_model(again.vertices.back()).letters == "tde");
  }
  SUBCASE("a diagonal is refused in one line naming the node") {
    TinyModel m;
    m.input("x0", {3, 3});
    m.input("x1", {3, 4});
    TinyModel::attribute(m.node("e", "Einsum", {"x0", "x1"}, {"y"}), "equation", "ii,ij->j");
    m.output("y");
    const std::string path = m.save("diagonal.onnx");
    test::CommandResult result = test::run_pase("import " + path);
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + path +
                              ": node 'e': unsupported Einsum ('ii,ij->j': operand 0 'ii' repeats letter 'i' (a diagonal, "
                              "which pase does not model)); 1 unsupported node(s): Einsum x1 ('e'); --lenient imports them "
                              "as zero-cost pass-through vertices\n");
  }
}
#endif  // PASE_HAVE_ONNX
