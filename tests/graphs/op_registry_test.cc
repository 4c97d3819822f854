// The op registry: every op defined once and completely, the reader's field
// lists taken from it, and the work descriptions ops give the cost models.
#include <doctest/doctest.h>

#include <stdexcept>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_model.h"
#include "costmodel/costs.h"
#include "costmodel/machine_profile.h"
#include "graphs/layer_work.h"
#include "graphs/op_registry.h"
#include "test_support.h"

using namespace pase;

namespace {

const Graph& norm_graph() {
  static const Graph graph = test::graph_from_json(
      R"({"format": "pase-graph", "version": 1, "cutoff": 1, "tensors": {"x": [8, 16]},
          "nodes": [{"name": "n", "op": "norm", "inputs": ["x"]}]})");
  return graph;
}

}  // namespace

TEST_CASE("op registry: every op of the file format, each defined once and completely") {
  const std::vector<std::string> correct = {"argmax",      "batchnorm",   "concat",     "contraction", "conv2d",
                                            "cumsum",      "einsum",      "elementwise", "embedding",  "expand",
                                            "fc",          "lstm",        "matmul",     "norm",        "one_hot",
                                            "pool2d",      "reduce_mean", "reshape",    "rmsnorm",     "scatter",
                                            "scatter_nd",  "slice",       "softmax",    "softmax_xent", "split",
                                            "stack",       "topk",        "transpose",  "unstack"};
  CHECK(known_ops() == correct);
  for (const std::string& name : known_ops()) {
    CAPTURE(name);
    const OpDefinition* op = find_op(name);
    REQUIRE(op != nullptr);
    CHECK(op->name == name);
    CHECK(static_cast<bool>(op->infer));
    CHECK(static_cast<bool>(op->model));
    CHECK(&op_definition(op->kind) == op);
    CHECK(op->min_inputs >= 1);
    CHECK(op->max_inputs >= op->min_inputs);
  }
  SUBCASE("the vertices only reshape creates are not in files") {
    CHECK(find_op("ravel") == nullptr);
    CHECK(static_cast<bool>(op_definition(OpKind::Ravel).model));
    CHECK(op_definition(OpKind::Unravel).name == "reshape");
  }
  SUBCASE("an undefined kind is an internal error that prints the index") {
    try {
      (void)op_definition(static_cast<OpKind>(99));
      FAIL("expected an error");
    } catch (const std::logic_error& error) {
      CHECK(std::string(error.what()).find("failed (k = 99, table.size() = ") != std::string::npos);
    }
  }
}

TEST_CASE("op_takes_field: the fields the reader accepts per op") {
  CHECK(op_takes_field(*find_op("fc"), "units"));
  CHECK(op_takes_field(*find_op("fc"), "pointwise"));
  CHECK(op_takes_field(*find_op("conv2d"), "padding"));
  CHECK_FALSE(op_takes_field(*find_op("pool2d"), "pointwise"));
  CHECK_FALSE(op_takes_field(*find_op("softmax_xent"), "axis"));
  // The reader's refusal comes from the same lists.
  test::CommandResult result = test::run_pase(
      "solve " + test::write_temp_file("pw.json", R"({"format": "pase-graph", "version": 1, "tensors": {"x": [8, 3, 8, 8]},
      "nodes": [{"name": "p", "op": "pool2d", "inputs": ["x"], "window": 2, "pointwise": 1}]})") + " --devices 2");
  CHECK(result.status == 1);
  CHECK(result.error.find("node 'p': field 'pointwise': unknown field for op 'pool2d'") != std::string::npos);
}

TEST_CASE("describe_work: an op's work, as the cost models see it") {
  const Graph& graph = norm_graph();
  VertexModel model = build_vertex_model(graph.vertices[0]);
  CHECK(model.kind == OpKind::Norm);
  const int32_t config[2] = {2, 4};  // per device 4 x 4 = 16 elements
  LayerWork work = describe_work(model, config);
  CHECK(work.pointwise == 16 * 16);
  CHECK_FALSE(work.has_gemm);
  CHECK_FALSE(work.has_halo);
  REQUIRE(work.all_reduces.count == 2);
  // Statistics over the split last axis: 16 / 4 = 4 words among its 4 devices,
  // and the gamma/beta gradients: 4 words among the 2 batch devices; four of each.
  CHECK(work.all_reduces.items[0].words == 4);
  CHECK(work.all_reduces.items[0].group == 4);
  CHECK(work.all_reduces.items[0].times == 4);
  CHECK(work.all_reduces.items[1].words == 4);
  CHECK(work.all_reduces.items[1].group == 2);
  CHECK(work.transfers.count == 0);

  SUBCASE("the pase model prices the description") {
    const double r = 5000.0;
    double all_reduce_4 = r * (4.0 / 4) * 2 * 3, all_reduce_2 = r * (4.0 / 2) * 2 * 1;
    CHECK(work_cost(work, r) == 256 + 4 * all_reduce_4 + 4 * all_reduce_2);
  }
  SUBCASE("the calibrated model prices norm as framework kernels do") {
    CalibratedCostModel calibrated(parse_machine_profile(test::kTestMachineProfile, "test.json"), 8);
    // Two kernels streaming 8 accesses of 16 fp32 elements at 80% of 500 GB/s;
    // four statistics all-reduces of 4 words over the axis's 4 devices. The
    // gamma/beta gradient (2 x 4 words over 2 devices, 32 bytes of a 25 MiB
    // bucket's latency) hides behind the backward kernel (5 us + 5 x 16 accesses).
    const double stream = 2 * 5e-6 + 8 * 16 * 4 / 400e9;
    const double statistics = 4 * (2 * 3 * (5e-6 + 1 * 4 / 10e9));
    const double gradient = 2 * 1 * (32.0 / (25 << 20) * 5e-6 + 4 * 4 / 10e9);
    CHECK(gradient < 5e-6);
    CHECK(calibrated.layer(model, config) == doctest::Approx(stream + statistics).epsilon(1e-12));
  }
}

TEST_CASE("VertexModel weights: the tensors an op owns, split as the domain") {
  Graph graph = test::graph_from_json(
      R"({"format": "pase-graph", "version": 1, "tensors": {"x": [8, 3, 32, 32], "ids": [8, 16]},
          "nodes": [{"name": "conv", "op": "conv2d", "inputs": ["x"], "filter": [16, 3, 5, 5]},
                    {"name": "flat", "op": "reshape", "inputs": ["conv"], "shape": [8, -1]},
                    {"name": "fc", "op": "fc", "inputs": ["flat"], "units": 10},
                    {"name": "embed", "op": "embedding", "inputs": ["ids"], "vocab": 100, "dim": 12},
                    {"name": "rnn", "op": "lstm", "inputs": ["embed"], "units": 12, "layers": 2}]})");
  auto weights_of = [&](const std::string& name) { return build_vertex_model(graph.vertices[graph.find_vertex(name)]).weights; };
  std::vector<WeightTensor> conv = weights_of("conv");
  REQUIRE(conv.size() == 1);
  CHECK(conv[0].shape == Shape{16, 3, 5, 5});
  CHECK(conv[0].split == SplitMap{{6}, {1}, {4}, {5}});  // (N, C, R, S) in "bchwrsn"
  std::vector<WeightTensor> fc = weights_of("fc");
  REQUIRE(fc.size() == 1);
  CHECK(fc[0].shape == Shape{10, 16 * 28 * 28});
  CHECK(fc[0].split == SplitMap{{1}, {2}});  // (N, K) in "bnk", as PyTorch's Linear
  std::vector<WeightTensor> table = weights_of("embed");
  REQUIRE(table.size() == 1);
  CHECK(table[0].shape == Shape{100, 12});
  std::vector<WeightTensor> lstm = weights_of("rnn");
  REQUIRE(lstm.size() == 1);
  CHECK(lstm[0].shape == Shape{2, 24, 48});
  CHECK(weights_of("flat").empty());
  CHECK(weights_of("flat/ravel").empty());
}
