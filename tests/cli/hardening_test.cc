// Hostile input: sizes that overflow 64 bits, JSON nested or numbered beyond
// reason, repeated edges, an ONNX constant node that breaks the spec. Each
// is bad input with one exact line (exit 1 at the CLI), never undefined
// behaviour; the sanitizer build (CMakePresets.json "asan") runs these too.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "base/error.h"
#include "base/json_document.h"
#include "test_support.h"

#ifdef PASE_HAVE_ONNX
#include <onnx/onnx_pb.h>

#include "onnximport/import_onnx.h"
#endif

using namespace pase;

namespace {

std::string graph(const std::string& tensors, const std::string& nodes) {
  return R"({"format": "pase-graph", "version": 1, "name": "t", "tensors": {)" + tensors + R"(}, "nodes": [)" + nodes +
         "]}";
}

// The message building `text` throws ("(no error)" if none).
std::string build_error(const std::string& text) {
  try {
    (void)test::graph_from_json(text, "g.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

const std::string k62 = "4611686018427387904";  // 2^62
const std::string k61 = "2305843009213693952";  // 2^61

}  // namespace

TEST_CASE("shape inference: sizes that overflow 64 bits are bad input") {
  SUBCASE("padding") {
    CHECK(build_error(graph(R"("x": [1, 1, 4, 4])", R"({"name": "p", "op": "pool2d", "inputs": ["x"], "window": 1,
                                                        "padding": )" + k62 + "}")) ==
          "g.json: node 'p': field 'padding': size arithmetic overflows 64 bits: 2 * " + k62);
  }
  SUBCASE("a padded input that overflows") {
    CHECK(build_error(graph(R"("x": [1, 1, 1, 9223372036854775807])",
                            R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [1, 1, 1, 1], "padding": 1})")) ==
          "g.json: node 'c': field 'padding': size arithmetic overflows 64 bits: 9223372036854775807 + 2");
  }
  SUBCASE("concat sums") {
    CHECK(build_error(graph(R"("x": [)" + k62 + R"(, 1], "y": [)" + k62 + ", 1]",
                            R"({"name": "c", "op": "concat", "inputs": ["x", "y"], "axis": 0})")) ==
          "g.json: node 'c': field 'inputs[1]': size arithmetic overflows 64 bits: " + k62 + " + " + k62);
  }
  SUBCASE("split sizes that wrap around to the axis size") {
    // 4·2^62 + 8 wraps to 8 in 64 bits: before the check this split was accepted.
    CHECK(build_error(graph(R"("x": [8, 1])", R"({"name": "s", "op": "split", "inputs": ["x"], "axis": 0, "parts": [)" +
                                                  k62 + ", " + k62 + ", " + k62 + ", " + k62 + ", 8]}")) ==
          "g.json: node 's': field 'parts': size arithmetic overflows 64 bits: " + k62 + " + " + k62);
  }
  SUBCASE("reshape products") {
    CHECK(build_error(graph(R"("x": [8, 1])", R"({"name": "r", "op": "reshape", "inputs": ["x"], "shape": [4, )" + k62 +
                                                  ", " + k62 + ", -1]}")) ==
          "g.json: node 'r': field 'shape': shape mismatch: [4, " + k62 + ", " + k62 +
              ", -1] does not hold the 8 elements of 'x' [8, 1]");
    CHECK(build_error(graph(R"("x": [8, 1])", R"({"name": "r", "op": "reshape", "inputs": ["x"], "shape": [-1, -1, )" +
                                                  k62 + ", " + k62 + "]}")) ==
          "g.json: node 'r': field 'shape': at most one size may be -1");
  }
  SUBCASE("lstm gate weights") {
    CHECK(build_error(graph(R"("x": [1, 1, )" + k61 + "]",
                            R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": )" + k61 + R"(, "layers": 1})")) ==
          "g.json: node 'l': field 'units': size arithmetic overflows 64 bits: 4 * " + k61);
  }
  SUBCASE("weights the op computes") {
    CHECK(build_error(graph(R"("ids": [2, 2])",
                            R"({"name": "e", "op": "embedding", "inputs": ["ids"], "vocab": )" + k62 + R"(, "dim": 4})")) ==
          "g.json: node 'e': field 'vocab': weight shape [" + k62 + ", 4] has more than 2^63 elements");
    CHECK(build_error(graph(R"("x": [1, )" + k62 + "]", R"({"name": "f", "op": "fc", "inputs": ["x"], "units": 4})")) ==
          "g.json: node 'f': field 'units': weight shape [4, " + k62 + "] has more than 2^63 elements");
  }
  SUBCASE("stacking many copies of a large tensor") {
    CHECK(build_error(graph(R"("x": [)" + k62 + "]", R"({"name": "s", "op": "stack", "inputs": ["x", "x"]})")) ==
          "g.json: node 's': field 'inputs': inferred shape [2, " + k62 + "] has more than 2^63 elements");
  }
  SUBCASE("a pointwise weight's axis near 2^63") {
    CHECK(build_error(graph(R"("x": [4, 4])", R"({"name": "n", "op": "norm", "inputs": ["x"],
                       "pointwise_weights": [{"name": "g", "shape": [4, 4], "axis": 9223372036854775807}]})")) ==
          "g.json: node 'n': field 'pointwise_weights[0].axis': shape [4, 4] from axis 9223372036854775807 does not fit "
          "in output 0 of shape [4, 4]");
  }
}

TEST_CASE("parse_json_document: depth and number range are bounded") {
  auto error_of = [](const std::string& text) {
    try {
      (void)parse_json_document(text, "f.json");
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("(no error)");
  };
  SUBCASE("nesting") {
    CHECK(error_of(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']')) == "(no error)");
    CHECK(error_of(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']')) ==
          "f.json: JSON at line 1, column 257: nested deeper than 256 levels");
    // Brackets inside strings are text.
    CHECK(error_of("[\"" + std::string(100000, '[') + "\"]") == "(no error)");
    const size_t deep = 100000;
    CHECK(error_of("{\"a\":\n" + std::string(deep, '{') + std::string(deep, '}') + "}") ==
          "f.json: JSON at line 2, column 256: nested deeper than 256 levels");
  }
  SUBCASE("numbers beyond a double") {
    CHECK(error_of("[1,\n 2, 1e999]") == "f.json: JSON at line 2, column 5: number 1e999 is out of range");
    CHECK(error_of("[-1E+400]") == "f.json: JSON at line 1, column 2: number -1E+400 is out of range");
    CHECK(error_of("[1" + std::string(400, '0') + "]") ==
          "f.json: JSON at line 1, column 2: number 1" + std::string(76, '0') + "... is out of range");
    CHECK(error_of("[1e-999, 1e308, 18446744073709551616]") == "(no error)");  // underflow is 0; big integers are doubles
  }
  SUBCASE("a long bad token is not quoted whole") {
    std::string message = error_of("[" + std::string(5000, 'x') + "]");
    CHECK(message.size() < 300);
    CHECK(message.rfind("f.json: malformed JSON at line 1, column 2: ", 0) == 0);
  }
}

TEST_CASE("pase: out-of-range and deeply nested input exits 1 with one line") {
  SUBCASE("1e999 in a graph") {
    std::string path = test::write_temp_file("huge_number.json", graph(R"("x": [1e999])",
                                                                        R"({"name": "e", "op": "elementwise", "inputs": ["x"]})"));
    test::CommandResult result = test::run_pase("solve \"" + path + "\" --devices 2");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + path + ": JSON at line 1, column 71: number 1e999 is out of range\n");
  }
  SUBCASE("a non-integer and an integer beyond 64 bits") {
    std::string path = test::write_temp_file("fraction.json", graph(R"("x": [2.5])", R"({"name": "e", "op": "elementwise", "inputs": ["x"]})"));
    test::CommandResult result = test::run_pase("solve \"" + path + "\" --devices 2");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + path + ": tensor 'x'[0]: expected an integer, got a non-integer number 2.5\n");
    path = test::write_temp_file("too_big.json", graph(R"("x": [9223372036854775808])", R"({"name": "e", "op": "elementwise", "inputs": ["x"]})"));
    result = test::run_pase("solve \"" + path + "\" --devices 2");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + path + ": tensor 'x'[0]: integer 9223372036854775808 does not fit in 64 bits\n");
  }
  SUBCASE("nesting in a graph, a machine profile and a strategy file") {
    const size_t depth = 100000;
    const std::string nested = std::string(depth, '[') + std::string(depth, ']');
    std::string g = test::write_temp_file("deep_graph.json", R"({"format": "pase-graph", "version": 1, "name": )" + nested + "}");
    test::CommandResult result = test::run_pase("solve \"" + g + "\" --devices 2");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + g + ": JSON at line 1, column 303: nested deeper than 256 levels\n");

    std::string ok = test::write_temp_file("ok_graph.json", graph(R"("x": [8, 8])", R"({"name": "e", "op": "elementwise", "inputs": ["x"]})"));
    std::string m = test::write_temp_file("deep_machine.json", "{\"format\": " + nested + "}");
    result = test::run_pase("solve \"" + ok + "\" --devices 2 --cost-model calibrated --machine \"" + m + "\"");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + m + ": JSON at line 1, column 267: nested deeper than 256 levels\n");
    std::string s = test::write_temp_file("deep_strategy.json", "{\"format\": " + nested + "}");
    result = test::run_pase("evaluate \"" + ok + "\" --devices 2 --strategy \"" + s + "\"");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + s + ": JSON at line 1, column 267: nested deeper than 256 levels\n");
  }
}

TEST_CASE("pase solve: one node listing a tensor 10,000 times solves in linear time") {
  // One pair per listing: the matrices were priced and held once per edge
  // (10,000 x 210 x 210 doubles: 3.5 GB, 10 s). Now one matrix, folded in the DP.
  std::string inputs = "\"a\"";
  for (int i = 1; i < 10000; ++i) inputs += ", \"a\"";
  std::string path = test::write_temp_file(
      "fan_in.json", graph(R"("x": [256, 256, 256, 256])", R"({"name": "a", "op": "elementwise", "inputs": ["x"]},
                                                           {"name": "e", "op": "elementwise", "inputs": [)" + inputs + "]}"));
  auto start = std::chrono::steady_clock::now();
  test::CommandResult result = test::run_pase("solve \"" + path + "\" --devices 64 --no-plan --json");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(result.status == 0);
  CHECK(seconds < 5);  // about 0.3 s in Release; generous for the sanitizer build
  // Both split the same way, so no edge moves anything: the cost is the two layers'.
  std::string one = test::run_pase("solve \"" + path + "\" --devices 64 --no-plan").output;
  CHECK(one.find("redistribution 0 FLOP)") != std::string::npos);
}

#ifdef PASE_HAVE_ONNX
TEST_CASE("import_onnx: the constant evaluator refuses what the ONNX spec forbids") {
  // A constant [1, 2] unsqueezed at axes [0, 0] (opset 11: axes an attribute):
  // the evaluator counted the repeated axis twice and read past the input's dims.
  auto model = [](const std::string& op, const std::vector<int64_t>& axes, const std::string& attribute = "axes") {
    onnx::ModelProto m;
    m.set_ir_version(7);
    m.add_opset_import()->set_version(11);
    onnx::GraphProto& g = *m.mutable_graph();
    g.set_name("tiny");
    onnx::TensorProto& c = *g.add_initializer();
    c.set_name("c");
    c.set_data_type(onnx::TensorProto::INT64);
    c.add_dims(2);
    c.add_int64_data(1);
    c.add_int64_data(2);
    onnx::NodeProto& n = *g.add_node();
    n.set_name("u");
    n.set_op_type(op);
    n.add_input("c");
    n.add_output("y");
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(attribute);
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t v : axes) a.add_ints(v);
    g.add_output()->set_name("y");
    // A data input for the importer to start from: x -> Relu -> z.
    onnx::ValueInfoProto& x = *g.add_input();
    x.set_name("x");
    x.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {2, 4}) x.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    onnx::NodeProto& relu = *g.add_node();
    relu.set_name("relu");
    relu.set_op_type("Relu");
    relu.add_input("x");
    relu.add_output("z");
    g.add_output()->set_name("z");
    return test::write_temp_file(op + "_tiny.onnx", m.SerializeAsString());
  };
  auto error_of = [](const std::string& path) {
    try {
      (void)import_onnx(path, OnnxImportOptions{});
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("(no error)");
  };
  std::string path = model("Unsqueeze", {0, 0});
  CHECK(error_of(path) == path + ": node 'u': Unsqueeze axis 0 is listed twice");
  path = model("Unsqueeze", {0, 5});
  CHECK(error_of(path) == path + ": node 'u': Unsqueeze axis 5 is out of range for output rank 3");
  path = model("Transpose", {0, 0}, "perm");
  CHECK(error_of(path).find(path + ": ") == 0);  // ONNX's own inference or ours: bad input either way, never a crash

  // Through the CLI: exit 1, one line.
  path = model("Unsqueeze", {0, 0});
  test::CommandResult result = test::run_pase("import \"" + path + "\"");
  CHECK(result.status == 1);
  CHECK(result.error == "error: " + path + ": node 'u': Unsqueeze axis 0 is listed twice\n");
}
#endif
