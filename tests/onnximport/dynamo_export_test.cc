// Models as today's PyTorch exporter writes them (torch.onnx.export with
// dynamo=True, opset 20; data/onnx/dynamo/, made by
// scripts/export_dynamo_fixtures.py): they import strictly, keep their
// checkpoint's parameter names, and solve. Tiny hand-built models pin the
// two things that made them fail before: opset-18 forms the linked ONNX
// library does not know, and Linear weights the exporter renamed.
#ifdef PASE_HAVE_ONNX
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include <onnx/onnx_pb.h>

#include "base/error.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "onnximport/import_onnx.h"
#include "test_support.h"
#include "onnx_test_support.h"

using namespace pase;
using test::node_named;
using test::TinyModel;

namespace {

std::string dynamo_fixture(const std::string& name) { return test::source_path("data/onnx/dynamo/" + name + ".onnx"); }

// Every weight name the graph's layers read, in node order.
std::set<std::string> weight_names(const GraphFileV1& file) {
  std::set<std::string> names;
  for (const NodeV1& node : file.nodes)
    if (node.weights)
      for (const std::string& weight : *node.weights) names.insert(weight);
  return names;
}

// A metadata entry on a node, as ONNX 1.16's NodeProto.metadata_props (field 9) writes it.
void add_metadata(onnx::NodeProto& node, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto entry;
  entry.set_key(key);
  entry.set_value(value);
  node.mutable_unknown_fields()->AddLengthDelimited(9, entry.SerializeAsString());
}

}  // namespace

TEST_CASE("import_onnx: today's exporter's models import strictly, keep their names and solve at p = 8 and 64") {
  const std::map<std::string, size_t> vertices = {
      {"gpt2", 70}, {"llama", 87},    {"mistral", 87},           {"bert", 56},
      {"t5", 155},  {"vit", 58},      {"resnet18", 33},          {"resnet18_unoptimized", 53},
      {"mobilenet_v3_small", 81}, {"mixtral", 137}};
  for (const auto& [name, count] : vertices) {
    CAPTURE_BOUND(name);
    OnnxImport result = import_onnx(dynamo_fixture(name), OnnxImportOptions{});
    CHECK(result.notes.empty());
    CHECK(result.graph.nodes.size() == count);
    CHECK(build_graph(result.graph, name).component_count() == 1);
    for (int devices : {8, 64}) {
      CAPTURE(devices);
      test::CommandResult solved =
          test::run_pase("solve " + dynamo_fixture(name) + " --devices " + std::to_string(devices) + " --no-plan");
      CHECK(solved.status == 0);
      CHECK(solved.output.find("total cost ") != std::string::npos);
    }
  }
}

TEST_CASE("import_onnx: today's exporter's Mixtral gathers its experts' weights at the routed ids: an embedding") {
  // Each (token, choice) pair reads its expert's whole matrix: GatherND of
  // gate_up_proj [4, 352, 64] at the top-2 ids [2048, 1] is an embedding of
  // 4 rows of 352·64 at computed ids, viewed as [2048, 352, 64].
  OnnxImport mixtral = import_onnx(dynamo_fixture("mixtral"), OnnxImportOptions{});
  const NodeV1& gathered = node_named(mixtral.graph, "node_GatherND_247");
  CHECK(gathered.op == "embedding");
  CHECK(gathered.inputs == std::vector<std::string>{"node_Unsqueeze_245"});  // the router's clamped top-2 ids
  CHECK(gathered.vocab == 4);
  CHECK(gathered.dim == 352 * 64);
  // The exporter renamed the parameter "val_241"; the node's metadata names it.
  CHECK(gathered.weights == std::vector<std::string>{"model.layers.0.mlp.experts.gate_up_proj"});
  const NodeV1& viewed = node_named(mixtral.graph, "node_GatherND_247_2");
  CHECK(viewed.op == "reshape");
  CHECK(viewed.shape == Shape{2048, 352, 64});
  std::set<std::string> names = weight_names(mixtral.graph);
  CHECK(names.count("model.layers.1.mlp.experts.down_proj") == 1);
  CHECK(names.count("model.layers.0.mlp.gate.weight") == 1);
}

TEST_CASE("import_onnx: a GatherND other than a weight's rows at [N, 1] ids is refused with the reason") {
  auto refusal = [](bool table_is_weight, const std::vector<int64_t>& ids) {
    TinyModel m;
    m.input("ids", ids, onnx::TensorProto::INT64);
    if (table_is_weight) {
      m.initializer("w", {4, 8, 16});
    } else {
      m.input("x", {4, 8, 16});
      m.node("computed", "Relu", {"x"}, {"w"});
    }
    m.node("g", "GatherND", {"w", "ids"}, {"y"});
    m.node("out", "Relu", {"y"}, {"z"});
    m.output("z");
    try {
      (void)import_onnx(m.save("gathernd.onnx"), OnnxImportOptions{});
    } catch (const InputError& e) {
      const std::string text = e.what();
      const size_t at = text.find("node 'g'");
      return at == std::string::npos ? text : text.substr(at);
    }
    return std::string("imported");
  };
  CHECK(refusal(false, {6, 1}) == "node 'g': unsupported GatherND (gathers from a computed tensor); 1 unsupported "
                                  "node(s): GatherND x1 ('g'); the import option 'lenient' imports them as zero-cost "
                                  "pass-through vertices");
  CHECK(refusal(true, {6, 2}) == "node 'g': unsupported GatherND (expects a weight of rank 2 or more gathered along "
                                 "its first axis at ids [N, 1]); 1 unsupported node(s): GatherND x1 ('g'); the import "
                                 "option 'lenient' imports them as zero-cost pass-through vertices");
  CHECK(refusal(true, {6, 1}) == "imported");
}

TEST_CASE("import_onnx: the exporter's optimizer folds a training ResNet's batchnorms into its convolutions") {
  // Its conv biases are new tensors no module holds; unoptimized, the graph keeps them.
  OnnxImport folded = import_onnx(dynamo_fixture("resnet18"), OnnxImportOptions{});
  const NodeV1& conv1 = node_named(folded.graph, "node_Conv_252");
  REQUIRE(conv1.pointwise_weights);
  CHECK(conv1.pointwise_weights->at(0).name == "conv1.weight_bias");
  OnnxImport traced = import_onnx(dynamo_fixture("resnet18_unoptimized"), OnnxImportOptions{});
  std::set<std::string> names = weight_names(traced.graph);
  CHECK(names.count("conv1.weight") == 1);
  int batchnorms = 0;
  for (const NodeV1& node : traced.graph.nodes) batchnorms += node.op == "batchnorm" ? 1 : 0;
  CHECK(batchnorms == 20);
}

TEST_CASE("import_onnx: a bias-free Linear's weight, which the exporter renamed, keeps its module's name") {
  // LLaMA's projections have no bias: the exporter folds each weight's
  // transpose into "val_N" [in, out]; the fc reads the parameter [out, in].
  OnnxImport llama = import_onnx(dynamo_fixture("llama"), OnnxImportOptions{});
  std::set<std::string> names = weight_names(llama.graph);
  for (const char* expected : {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
                               "model.layers.1.mlp.down_proj.weight", "lm_head.weight"}) {
    CAPTURE(expected);
    CHECK(names.count(expected) == 1);
  }
  for (const std::string& name : names) CHECK(name.rfind("val_", 0) != 0);
  const NodeV1& q_proj = node_named(llama.graph, "node_linear");
  CHECK(q_proj.weights == std::vector<std::string>{"model.layers.0.self_attn.q_proj.weight"});
  CHECK(!q_proj.weight_layout);  // held [N, K], nn.Linear's own layout
  // GPT-2's Conv1D holds its matrix [K, N] and is read as it is held.
  OnnxImport gpt2 = import_onnx(dynamo_fixture("gpt2"), OnnxImportOptions{});
  CHECK(weight_names(gpt2.graph).count("transformer.h.1.mlp.c_proj.weight") == 1);
}

TEST_CASE("import_onnx: the exporter's renamed weight is named only where its metadata names the argument read") {
  auto model = [](const std::string& fx_argument) {
    TinyModel m;
    m.opset(20);
    m.input("x", {4, 8});
    m.initializer("val_7", {8, 16});
    onnx::NodeProto& matmul = m.node("node_linear", "MatMul", {"x", "val_7"}, {"y"});
    add_metadata(matmul, "pkg.torch.onnx.name_scopes", "['', 'encoder', 'encoder.proj', 'linear']");
    add_metadata(matmul, "pkg.torch.onnx.fx_node",
                 "%linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = (%x, " +
                     fx_argument + "), kwargs = {})");
    m.output("y");
    return m.save("renamed_linear.onnx");
  };
  OnnxImport named = import_onnx(model("%p_encoder_proj_weight"), OnnxImportOptions{});
  const NodeV1& fc = node_named(named.graph, "node_linear");
  CHECK(fc.weights == std::vector<std::string>{"encoder.proj.weight"});
  CHECK(!fc.weight_layout);
  OnnxImport other = import_onnx(model("%p_decoder_proj_weight"), OnnxImportOptions{});
  CHECK(node_named(other.graph, "node_linear").weights == std::vector<std::string>{"val_7"});
}

TEST_CASE("import_onnx: opset 18's reductions with axes as an input, and Gelu of opset 20") {
  TinyModel m;
  m.opset(20);
  m.input("x", {2, 4, 8});
  m.initializer_ints("axes", {-1});
  m.node("square", "Mul", {"x", "x"}, {"s"});
  m.node("mean", "ReduceMean", {"s", "axes"}, {"m"});
  m.node("scale", "Mul", {"x", "m"}, {"y"});
  m.node("gelu", "Gelu", {"y"}, {"z"});
  m.output("z");
  OnnxImport result = import_onnx(m.save("opset20.onnx"), OnnxImportOptions{});
  const NodeV1& mean = node_named(result.graph, "mean");
  CHECK(mean.op == "reduce_mean");
  CHECK(mean.axes == std::vector<int64_t>{-1});
  CHECK(mean.outputs == std::vector<Shape>{{2, 4, 1}});
}

TEST_CASE("import_onnx: a reduction whose axes are computed waits for them; CastLike casts its input 0") {
  // The unoptimized export's AdaptiveAvgPool2d: ReduceMean(x, Reshape(constants)),
  // and its Conv's zero bias: Expand(CastLike(0, x), [C]), x the data input.
  TinyModel m;
  m.opset(20);
  m.input("x", {2, 4, 8, 8});
  m.initializer("w", {4, 4, 3, 3});
  m.initializer_ints("axes_flat", {-1, -2});
  m.initializer_ints("axes_shape", {2});
  m.node("axes", "Reshape", {"axes_flat", "axes_shape"}, {"axes_value"});
  m.float_initializer("zero", {}, {0.0f});
  m.initializer_ints("bias_shape", {4});
  m.node("like", "CastLike", {"zero", "x"}, {"zero_like"});
  m.node("bias", "Expand", {"zero_like", "bias_shape"}, {"b"});
  onnx::NodeProto& conv = m.node("conv", "Conv", {"x", "w", "b"}, {"c"});
  TinyModel::attribute(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("pool", "ReduceMean", {"c", "axes_value"}, {"p"});
  m.output("p");
  OnnxImport result = import_onnx(m.save("computed_axes.onnx"), OnnxImportOptions{});
  CHECK(node_named(result.graph, "conv").op == "conv2d");
  const NodeV1& pool = node_named(result.graph, "pool");
  CHECK(pool.axes == std::vector<int64_t>{-1, -2});
  CHECK(pool.outputs == std::vector<Shape>{{2, 4, 1, 1}});
}

TEST_CASE("import_onnx: a reduction whose axes never become known is refused by name") {
  TinyModel m;
  m.opset(20);
  m.input("x", {2, 4, 8});
  m.input("axes", {1}, onnx::TensorProto::INT64);
  m.node("mean", "ReduceMean", {"x", "axes"}, {"m"});
  m.node("relu", "Relu", {"m"}, {"y"});
  m.output("y");
  std::string path = m.save("unknown_axes.onnx");
  CHECK_THROWS_WITH_AS((void)import_onnx(path, OnnxImportOptions{}),
                       (path + ": node 'mean': cannot infer the shape of output 'm' (ReduceMean; ONNX shape "
                               "inference and the constant evaluator left it unknown)").c_str(),
                       InputError);
}

TEST_CASE("import_onnx: repeat_interleave as the TorchScript exporter writes it, Tile of a size-1 axis, is an expand") {
  auto model = [](int64_t axis_size) {
    TinyModel m;
    m.input("k", {2, 2, axis_size, 8, 16});
    m.initializer_ints("repeats", {1, 1, 2, 1, 1});
    m.node("tile", "Tile", {"k", "repeats"}, {"t"});
    m.node("relu", "Relu", {"t"}, {"y"});
    m.output("y");
    return m.save("tile.onnx");
  };
  OnnxImport result = import_onnx(model(1), OnnxImportOptions{});
  const NodeV1& tile = node_named(result.graph, "tile");
  CHECK(tile.op == "expand");
  CHECK(tile.shape == Shape{2, 2, 2, 8, 16});
  std::string path = model(3);
  CHECK_THROWS_WITH_AS((void)import_onnx(path, OnnxImportOptions{}),
                       (path + ": node 'tile': unsupported Tile (repeats an axis longer than 1); 1 unsupported node(s): "
                               "Tile x1 ('tile'); the import option 'lenient' imports them as zero-cost pass-through "
                               "vertices").c_str(),
                       InputError);
}

#endif  // PASE_HAVE_ONNX
