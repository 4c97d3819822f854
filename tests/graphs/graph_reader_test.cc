// Every reader error, through the CLI: one line naming file, node and field, exit 1.
#include <doctest/doctest.h>

#include <algorithm>

#include "test_support.h"

using pase::test::run_pase;
using pase::test::write_temp_file;

namespace {

// A small valid graph; each case below breaks one thing in it.
const char* kHeader = R"({"format": "pase-graph", "version": 1, "name": "t", )";

std::string graph(const std::string& tensors, const std::string& nodes) {
  return std::string(kHeader) + "\"tensors\": {" + tensors + "}, \"nodes\": [" + nodes + "]}";
}

struct ErrorCase {
  const char* what;
  std::string text;
  std::string message;  // expected stderr after "error: FILE: "
};

}  // namespace

TEST_CASE("pase solve: reader errors name file, node and field") {
  const std::string x = R"("x": [8, 4, 16, 16])";
  const std::string v = R"("v": [8, 32])";
  std::vector<ErrorCase> cases = {
      {"malformed JSON", "{\"format\": \"pase-graph\",\n \"version\": 1,,}", "malformed JSON at line 2, column 15: syntax error while parsing object key - unexpected ','; expected string literal"},
      {"top level not an object", "[1, 2]", "expected a JSON object at the top level, got an array"},
      {"wrong format", R"({"format": "onnx", "version": 1, "nodes": []})", "field 'format': expected \"pase-graph\", got \"onnx\""},
      {"wrong version", R"({"format": "pase-graph", "version": 2, "nodes": []})",
       "field 'version': unsupported version 2 (this pase reads version 1)"},
      {"unknown top-level field", R"({"format": "pase-graph", "version": 1, "nodez": []})",
       "field 'nodez': unknown field for a pase-graph file (did you mean 'nodes'?)"},
      {"no nodes", graph(x, ""), "field 'nodes': the graph has no nodes"},
      {"unknown op", graph(x, R"({"name": "c", "op": "conv", "inputs": ["x"]})"),
       "node 'c': field 'op': unknown op 'conv' (did you mean 'conv2d'?)"},
      {"unknown field", graph(x, R"({"name": "n", "op": "norm", "inputs": ["x"], "axiss": 1})"),
       "node 'n': field 'axiss': unknown field for op 'norm' (did you mean 'axis'?)"},
      {"missing attribute", graph(v, R"({"name": "f", "op": "fc", "inputs": ["v"]})"),
       "node 'f': field 'units': missing (required by op 'fc')"},
      {"missing name", graph(v, R"({"op": "fc", "inputs": ["v"], "units": 4})"), "nodes[0]: field 'name': missing"},
      {"dangling reference", graph(v, R"({"name": "f", "op": "fc", "inputs": ["vv"], "units": 4})"),
       "node 'f': field 'inputs[0]': 'vv' names no node or tensor (did you mean 'v'?)"},
      {"duplicate node", graph(v, R"({"name": "f", "op": "fc", "inputs": ["v"], "units": 4},
                                     {"name": "f", "op": "softmax_xent", "inputs": ["f"]})"),
       "node 'f': field 'name': duplicate name: node 'f' is defined twice"},
      {"node named like a tensor", graph(v, R"({"name": "v", "op": "softmax_xent", "inputs": ["v"]})"),
       "node 'v': field 'name': duplicate name: 'v' is also an external tensor"},
      {"cycle", graph(v, R"({"name": "a", "op": "elementwise", "inputs": ["v", "c"]},
                           {"name": "b", "op": "elementwise", "inputs": ["a"]},
                           {"name": "c", "op": "elementwise", "inputs": ["b"]})"),
       "cycle: a -> b -> c -> a"},
      {"bad output index", graph(v, R"({"name": "s", "op": "split", "inputs": ["v"], "parts": 2, "axis": 1},
                                      {"name": "e", "op": "elementwise", "inputs": ["s:2"]})"),
       "node 'e': field 'inputs[0]': 's:2' asks for output 2 but node 's' has 2 output(s)"},
      {"malformed output index", graph(v, R"({"name": "s", "op": "split", "inputs": ["v"], "parts": 2, "axis": 1},
                                            {"name": "e", "op": "elementwise", "inputs": ["s:x"]})"),
       "node 'e': field 'inputs[0]': bad output index in 's:x' (expected NODE:K with K a number)"},
      {"conv channel mismatch", graph(x, R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [8, 3, 3, 3]})"),
       "node 'c': field 'filter': shape mismatch: filter has 3 input channels but 'x' has 4 (shape [8, 4, 16, 16])"},
      {"einsum letter size mismatch",
       graph(R"("a": [2, 3, 4], "w": [5, 6])", R"({"name": "e", "op": "einsum", "equation": "ble,ef->blf", "inputs": ["a", "w"]})"),
       "node 'e': field 'equation': shape mismatch: letter 'e' is 4 in operand 0 but 5 in operand 1 ('w' is [5, 6])"},
      // The graph format's einsum is a GEMM with an m and an n side; 'contraction' carries the rest.
      {"einsum without n letter",
       graph(R"("a": [2, 3], "w": [3])", R"({"name": "e", "op": "einsum", "equation": "bk,k->b", "inputs": ["a", "w"]})"),
       "node 'e': field 'equation': 'bk,k->b': needs at least one letter only in the first operand and one only in the "
       "second (a GEMM's m and n); got m='b', n=''"},
      {"einsum without m letter",
       graph(R"("a": [6, 4], "w": [4, 6, 10])", R"({"name": "e", "op": "einsum", "equation": "te,etd->td", "inputs": ["a", "w"]})"),
       "node 'e': field 'equation': 'te,etd->td': needs at least one letter only in the first operand and one only in the "
       "second (a GEMM's m and n); got m='', n='d'"},
      {"contraction summing a letter of one operand",
       graph(R"("a": [2, 3], "w": [3, 4])", R"({"name": "e", "op": "contraction", "equation": "bk,kn->b", "inputs": ["a", "w"]})"),
       "node 'e': field 'equation': 'bk,kn->b': letter 'n' appears in one operand only and not in the output (summing it "
       "out alone is not supported)"},
      {"einsum summing a letter of one operand",
       graph(R"("a": [2, 3], "w": [3, 4])", R"({"name": "e", "op": "einsum", "equation": "bk,kn->b", "inputs": ["a", "w"]})"),
       "node 'e': field 'equation': 'bk,kn->b': letter 'n' appears in one operand only and not in the output (summing it "
       "out alone is not supported)"},
      {"elementwise shape mismatch", graph(R"("a": [2, 3], "b": [2, 4])", R"({"name": "e", "op": "elementwise", "inputs": ["a", "b"]})"),
       "node 'e': field 'inputs[1]': shape mismatch: 'b' is [2, 4] but 'a' is [2, 3] (elementwise operands must have the same shape or broadcast)"},
      {"non-positive size", graph(R"("a": [2, 0])", R"({"name": "e", "op": "elementwise", "inputs": ["a"]})"),
       "tensor 'a'[1]: expected a positive size, got 0"},
      {"non-positive attribute", graph(v, R"({"name": "f", "op": "fc", "inputs": ["v"], "units": -4})"),
       "node 'f': field 'units': expected a positive size, got -4"},
      {"overflowing sizes", graph(R"("a": [4294967296, 4294967296])", R"({"name": "e", "op": "elementwise", "inputs": ["a"]})"),
       "tensor 'a': sizes [4294967296, 4294967296] multiply to more than 2^63"},
      {"integer too large", graph(R"("a": [18446744073709551615])", R"({"name": "e", "op": "elementwise", "inputs": ["a"]})"),
       "tensor 'a'[0]: integer 18446744073709551615 does not fit in 64 bits"},
      {"overflowing inferred shape",
       graph(R"("a": [4294967296, 2])", R"({"name": "f", "op": "fc", "inputs": ["a"], "units": 4294967296})"),
       "node 'f': field 'units': inferred shape [4294967296, 4294967296] has more than 2^63 elements"},
      {"non-integer size", graph(R"("a": [2.5])", R"({"name": "e", "op": "elementwise", "inputs": ["a"]})"),
       "tensor 'a'[0]: expected an integer, got a non-integer number 2.5"},
      {"wrong input count", graph(v, R"({"name": "m", "op": "matmul", "inputs": ["v"]})"),
       "node 'm': field 'inputs': op 'matmul' takes 2 input(s), got 1"},
      {"rank mismatch", graph(v, R"({"name": "p", "op": "pool2d", "inputs": ["v"], "window": 2})"),
       "node 'p': field 'inputs[0]': 'v' has shape [8, 32]; op 'pool2d' needs rank 4 (batch, channels, height, width)"},
      {"reshape size mismatch", graph(v, R"({"name": "r", "op": "reshape", "inputs": ["v"], "shape": [8, 30]})"),
       "node 'r': field 'shape': shape mismatch: [8, 30] does not hold the 256 elements of 'v' [8, 32]"},
      {"axis out of range", graph(v, R"({"name": "s", "op": "softmax", "inputs": ["v"], "axis": 2})"),
       "node 's': field 'axis': axis 2 is out of range for rank 2"},
      {"bad permutation", graph(v, R"({"name": "t", "op": "transpose", "inputs": ["v"], "perm": [0, 0]})"),
       "node 't': field 'perm': expected a permutation of 0..1, got [0, 0]"},
      {"split does not divide", graph(v, R"({"name": "s", "op": "split", "inputs": ["v"], "parts": 3, "axis": 1})"),
       "node 's': field 'parts': axis 1 has size 32, which does not split into 3 equal parts"},
      {"window too large", graph(x, R"({"name": "p", "op": "pool2d", "inputs": ["x"], "window": 17})"),
       "node 'p': field 'window': window 17 is larger than the padded input 16"},
      {"claimed output wrong", graph(v, R"({"name": "f", "op": "fc", "inputs": ["v"], "units": 4, "outputs": [[8, 5]]})"),
       "node 'f': field 'outputs[0]': shape mismatch: claims [8, 5] but the op gives [8, 4]"},
      {"embedding ids not [batch, sequence]",
       graph(R"("ids": [2, 3, 4])", R"({"name": "a", "op": "elementwise", "inputs": ["ids"]},
                                   {"name": "e", "op": "embedding", "inputs": ["a"], "vocab": 10, "dim": 4})"),
       "node 'e': field 'inputs[0]': 'a' has shape [2, 3, 4]; op 'embedding' needs rank 2 (batch, sequence)"},
      {"lstm units mismatch", graph(R"("x": [2, 3, 8])", R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": 4, "layers": 1})"),
       "node 'l': field 'units': shape mismatch: units 4 but 'x' has 8 features (shape [2, 3, 8])"},
      {"wrong type", graph(v, R"({"name": "f", "op": "fc", "inputs": "v", "units": 4})"),
       "node 'f': field 'inputs': expected an array of tensor names, got a string"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const ErrorCase& c = cases[i];
    CAPTURE(c.what);
    std::string path = write_temp_file("bad" + std::to_string(i) + ".json", c.text);
    auto result = run_pase("solve " + path + " --devices 4");
    CHECK(result.status == 1);
    CHECK(result.output == "");
    CHECK(result.error == "error: " + path + ": " + c.message + "\n");
  }
}

TEST_CASE("pase solve: missing file and bad options") {
  SUBCASE("missing file") {
    auto result = run_pase("solve does-not-exist.json --devices 4");
    CHECK(result.status == 1);
    CHECK(result.error == "error: does-not-exist.json: cannot open file\n");
  }
  SUBCASE("zero devices") {
    auto result = run_pase("solve " + pase::test::source_path("data/graphs/alexnet.json") + " --devices 0");
    CHECK(result.status == 2);
    CHECK(result.error == "error: --devices: expected a positive number of devices, got 0\n");
  }
  SUBCASE("negative bandwidth") {
    auto result = run_pase("solve " + pase::test::source_path("data/graphs/alexnet.json") + " --devices 4 --bandwidth -1");
    CHECK(result.status == 2);
    CHECK(result.error.rfind("error: --bandwidth: expected a positive GB/s", 0) == 0);
  }
  SUBCASE("unknown order") {
    auto result = run_pase("solve " + pase::test::source_path("data/graphs/alexnet.json") + " --devices 4 --order dfs");
    CHECK(result.status == 2);
    CHECK(result.error == "error: --order: unknown order 'dfs' (did you mean 'bfs'? choose generateseq, bfs, mindegree or minfill)\n");
  }
  SUBCASE("tables over the limit are refused with their size") {
    auto result = run_pase("solve " + pase::test::source_path("data/graphs/transformer.json") +
                           " --devices 8 --max-table-bytes 1000 --exact");
    CHECK(result.status == 3);
    CHECK(result.error.rfind("error: refused: the DP tables would need ", 0) == 0);
    CHECK(result.error.find("above the limit of 1000 (--max-table-bytes); the largest is vertex '") != std::string::npos);
    CHECK(std::count(result.error.begin(), result.error.end(), '\n') == 1);
  }
}

TEST_CASE("pase solve: work over the limit is refused with its size") {
  auto result = run_pase("solve " + pase::test::source_path("data/graphs/transformer.json") + " --devices 8 --max-work 1000 --exact");
  CHECK(result.status == 3);
  CHECK(result.error.rfind("error: refused: the DP would take ", 0) == 0);
  CHECK(result.error.find("above the limit of 1000 (--max-work; ") != std::string::npos);
  CHECK(std::count(result.error.begin(), result.error.end(), '\n') == 1);
}

TEST_CASE("pase solve --plan-only sizes the tables without solving") {
  auto result = run_pase("solve " + pase::test::source_path("data/graphs/alexnet.json") + " --devices 8 --plan-only --json");
  CHECK(result.status == 0);
  CHECK(result.output.find("\"max_dependent_set\": 1") != std::string::npos);
  CHECK(result.output.find("\"largest_table_entries\": ") != std::string::npos);
  CHECK(result.output.find("total_cost") == std::string::npos);
}

TEST_CASE("pase models") {
  SUBCASE("lists the zoo") {
    auto result = run_pase("models");
    CHECK(result.status == 0);
    for (const char* name : {"alexnet", "resnet101", "inception3", "rnnlm", "transformer"})
      CHECK(result.output.find(std::string("  ") + name) != std::string::npos);
  }
  SUBCASE("export at another batch size") {
    auto result = run_pase("models export alexnet --batch 32");
    CHECK(result.status == 0);
    CHECK(result.output.find("\"image\": [32,3,227,227]") != std::string::npos);
  }
  SUBCASE("alexnet and resnet101 at another image size") {
    auto alexnet = run_pase("models export alexnet --image 67 --batch 32");
    CHECK(alexnet.status == 0);
    CHECK(alexnet.output.find("\"image\": [32,3,67,67]") != std::string::npos);
    // 67 -> conv1 15 -> pool1 7 -> pool2 3 -> pool5 1: fc6 reads 256 features.
    CHECK(alexnet.output.find("\"shape\": [32,256] }") != std::string::npos);
    auto resnet = run_pase("models export resnet101 --image 16");
    CHECK(resnet.status == 0);
    CHECK(resnet.output.find("\"image\": [128,3,16,16]") != std::string::npos);
    struct Case {
      std::string args, error;
      int status;
    };
    for (const Case& c : {Case{"alexnet --image 66", "error: --image 66: alexnet needs at least 67 (below, pool5 has no pixels)\n", 1},
                          Case{"resnet101 --image 0", "error: --image 0: expected a positive size\n", 2},
                          Case{"inception3 --image 99", "error: --image: only alexnet and resnet101 take it, not 'inception3'\n", 2},
                          Case{"llama2-7b --image 99", "error: --image: only alexnet and resnet101 take it, not 'llama2-7b'\n", 2}}) {
      CAPTURE(c.args);
      auto refused = run_pase("models export " + c.args);
      CHECK(refused.status == c.status);
      CHECK(refused.error == c.error);
    }
  }
  SUBCASE("unknown model") {
    auto result = run_pase("models export alexnett");
    CHECK(result.status == 2);
    CHECK(result.error == "error: unknown model 'alexnett' (did you mean 'alexnet'?); `pase models` lists them\n");
  }
}

TEST_CASE("pase solve: cost-model options that would be ignored are refused") {
  std::string graph = pase::test::source_path("data/graphs/alexnet.json");
  SUBCASE("--machine with the pase model") {
    auto result = run_pase("solve " + graph + " --devices 8 --cost-model pase --machine " +
                           pase::test::source_path("data/machines/gtx1080ti-node.json"));
    CHECK(result.status == 2);
    CHECK(result.error ==
          "error: --machine: a machine profile is used only by the calibrated model, not with --cost-model pase\n");
  }
  SUBCASE("--machine alone implies the calibrated model, and says so") {
    auto alone = run_pase("solve " + graph + " --devices 8 --machine dgx-a100 --no-plan");
    auto both = run_pase("solve " + graph + " --devices 8 --machine dgx-a100 --cost-model calibrated --no-plan");
    CHECK(alone.status == 0);
    CHECK(alone.error == "note: --machine implies --cost-model calibrated\n");
    // The same table and total; only the solve time differs.
    auto before_time = [](const std::string& text) { return text.substr(0, text.find(", solved in ")); };
    CHECK(before_time(alone.output) == before_time(both.output));
    CHECK(alone.output.find("cost model calibrated (seconds)") != std::string::npos);
    CHECK(both.error == "");
  }
  SUBCASE("--flops with the calibrated model") {
    auto result = run_pase("solve " + graph + " --devices 8 --cost-model calibrated --flops 20 --machine " +
                           pase::test::source_path("data/machines/gtx1080ti-node.json"));
    CHECK(result.status == 2);
    CHECK(result.error ==
          "error: --flops/--bandwidth: the calibrated model takes rates from the machine profile, not from these options\n");
  }
}

TEST_CASE("pase: command-line mistakes exit 2, --help exits 0") {
  auto missing = run_pase("solve");
  CHECK(missing.status == 2);
  CHECK(missing.error.find("graph is required") != std::string::npos);
  auto unknown = run_pase("solve x.json --devices 2 --frobnicate");
  CHECK(unknown.status == 2);
  auto help = run_pase("solve --help");
  CHECK(help.status == 0);
  CHECK(help.output.find("--devices") != std::string::npos);
}
