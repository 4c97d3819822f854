// The calibrated cost model: GEMM shapes, link choice around devices_per_node,
// exact layer and edge prices, the --validate plan, and the CLI.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "calibrate/validation_plan.h"
#include "costmodel/calibrated_cost_model.h"
#include "costmodel/machine_profile.h"
#include "graphs/error.h"
#include "graphs/graph_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

const char* const kProfile = test::kTestMachineProfile;

CalibratedCostModel test_model(int64_t devices_per_node = 8) {
  MachineProfile profile = parse_machine_profile(kProfile, "m.json");
  profile.devices_per_node = devices_per_node;
  return CalibratedCostModel(profile, 16);
}

// fc: x (64, 256) -> 64 units; domain (b, n, k) = (64, 64, 256).
const char* kFcGraph = R"({
  "format": "pase-graph", "version": 1, "name": "one-fc",
  "tensors": {"x": [64, 256]},
  "nodes": [{"name": "fc", "op": "fc", "inputs": ["x"], "units": 64}]
})";

}  // namespace

TEST_CASE("gemm_shape") {
  Graph graph = test::graph_from_json(kFcGraph);
  VertexModel model = build_vertex_model(graph.vertices[0]);
  SUBCASE("fc split (2, 1, 4)") {
    int32_t config[3] = {2, 1, 4};
    GemmShape result = gemm_shape(model, config);
    CHECK(result.batch == 1);
    CHECK(result.m == 32);
    CHECK(result.n == 64);
    CHECK(result.k == 64);
    CHECK(result.cm == 2);
    CHECK(result.cn == 1);
    CHECK(result.ck == 4);
  }
  SUBCASE("training_gemms: forward NN, input gradient NT, weight gradient TN") {
    GemmShape shape;
    shape.m = 10, shape.n = 20, shape.k = 30;
    std::array<GemmCall, 3> result = training_gemms(shape);
    CHECK((result[0].layout == GemmLayout::NN && result[0].m == 10 && result[0].n == 20 && result[0].k == 30));
    CHECK((result[1].layout == GemmLayout::NT && result[1].m == 10 && result[1].n == 30 && result[1].k == 20));
    CHECK((result[2].layout == GemmLayout::TN && result[2].m == 30 && result[2].n == 20 && result[2].k == 10));
  }
}

TEST_CASE("CalibratedCostModel: node-crossing rule") {
  CalibratedCostModel model = test_model();
  SUBCASE("groups up to devices_per_node use the intra-node link") {
    CHECK(&model.link(2) == &model.profile().intra_node);
    CHECK(&model.link(8) == &model.profile().intra_node);
    CHECK(&model.link(9) == &model.profile().inter_node);
    CHECK(&model.link(16) == &model.profile().inter_node);
  }
  SUBCASE("the same all-reduce, inside and across nodes") {
    // 2(q-1) · (latency + (w/q) · 4 bytes / bandwidth), w = 1e6 elements.
    CHECK(model.all_reduce_seconds(1e6, 1) == 0.0);
    CHECK(model.all_reduce_seconds(1e6, 8) == doctest::Approx(14 * (5e-6 + 1e6 / 8 * 4 / 10e9)).epsilon(1e-12));
    CHECK(model.all_reduce_seconds(1e6, 8) == doctest::Approx(7.7e-4).epsilon(1e-12));
    CHECK(model.all_reduce_seconds(1e6, 16) == doctest::Approx(30 * (20e-6 + 1e6 / 16 * 4 / 2e9)).epsilon(1e-12));
    CHECK(model.all_reduce_seconds(1e6, 16) == doctest::Approx(4.35e-3).epsilon(1e-12));
    // With 16 per node the 16-way all-reduce stays inside a node.
    CHECK(test_model(16).all_reduce_seconds(1e6, 16) == doctest::Approx(30 * (5e-6 + 1e6 / 16 * 4 / 10e9)).epsilon(1e-12));
  }
  SUBCASE("redistribution: latency + bytes / bandwidth, forward and backward") {
    Shape tensor = {16, 8};
    int64_t whole[2] = {1, 1}, halves[2] = {2, 1}, sixteenths[2] = {16, 1};
    // need = 8·8 = 64 words, no overlap (more parts than before): inside a node.
    CHECK(model.redistribution(tensor, whole, halves) == doctest::Approx(2 * (5e-6 + 64 * 4 / 10e9)).epsilon(1e-12));
    // need = 8 words over 16 devices: across nodes.
    CHECK(model.redistribution(tensor, whole, sixteenths) == doctest::Approx(2 * (20e-6 + 8 * 4 / 2e9)).epsilon(1e-12));
    // Gathering from 16 devices: need 128, overlap 8, across nodes.
    CHECK(model.redistribution(tensor, sixteenths, whole) == doctest::Approx(2 * (20e-6 + 120 * 4 / 2e9)).epsilon(1e-12));
    // Nothing moves: no latency either.
    CHECK(model.redistribution(tensor, halves, halves) == 0.0);
  }
}

TEST_CASE("CalibratedCostModel::layer") {
  CalibratedCostModel model = test_model();
  Graph graph = test::graph_from_json(kFcGraph);
  VertexModel vertex = build_vertex_model(graph.vertices[0]);
  SUBCASE("one device: three GEMMs at their interpolated throughput") {
    int32_t config[3] = {1, 1, 1};
    // NN (64, 64, 256) at 2 TFLOP/s, NT (64, 256, 64) at 2, TN (256, 64, 64) at 4.
    double gemm = 2.0 * 64 * 64 * 256;
    double correct = gemm / 2e12 + gemm / 2e12 + gemm / 4e12;
    CHECK(model.layer(vertex, config) == doctest::Approx(correct).epsilon(1e-12));
  }
  SUBCASE("k split in two: an intra-node all-reduce of the output") {
    int32_t config[3] = {1, 1, 2};
    // NN (64, 64, 128): 1.5 TFLOP/s (log2 midpoint of k); NT (64, 128, 64): 2; TN (128, 64, 64): 4.
    double gemm = 2.0 * 64 * 64 * 128;
    double correct = gemm / 1.5e12 + gemm / 2e12 + gemm / 4e12 + 2 * 1 * (5e-6 + 64 * 64 / 2.0 * 4 / 10e9);
    CHECK(model.layer(vertex, config) == doctest::Approx(correct).epsilon(1e-12));
  }
  SUBCASE("identity: name, unit and machine record") {
    CHECK(model.name() == "calibrated");
    CHECK(model.unit() == "seconds");
    CHECK(model.devices() == 16);
    CHECK(model.machine().flops_tflops == doctest::Approx(10));
    CHECK(model.machine().bandwidth_gbps == doctest::Approx(10));
  }
}

TEST_CASE("validation_plan") {
  Graph graph = load_graph(test::source_path("data/graphs/alexnet.json"));
  CalibratedCostModel model = test_model();
  test::CommandResult solved = test::run_pase("solve " + test::source_path("data/graphs/alexnet.json") + " --devices 8 --json");
  REQUIRE(solved.status == 0);
  SUBCASE("alexnet p = 8: per-device GEMM shapes of the optimal strategy") {
    std::vector<ValidationLayer> result = validation_plan(graph, solved.output, "s.json", model);
    REQUIRE(result.size() == 8);  // conv1-5, fc6-8
    CHECK(result[0].name == "conv1");
    CHECK(result[0].config == std::vector<int32_t>{8, 1, 1, 1, 1, 1, 1});
    CHECK(result[0].shape.m == 128.0 * 55 * 55 / 8);
    CHECK(result[0].shape.n == 96);
    CHECK(result[0].shape.k == 3 * 11 * 11);
    CHECK(result[0].shape.pointwise == 1);
    CHECK(result[5].name == "fc6");
    CHECK(result[5].config == std::vector<int32_t>{1, 2, 4});
    CHECK(result[5].shape.m == 128);
    CHECK(result[5].shape.n == 2048);
    CHECK(result[5].shape.k == 2304);
    CHECK(result[5].gemms[2].layout == GemmLayout::TN);
    CHECK(result[5].gemms[2].m == 2304);
    CHECK(result[5].predicted[0] == model.gemm_seconds(result[5].gemms[0]));
  }
  SUBCASE("a strategy missing a layer") {
    json doc = json::parse(solved.output);
    doc["layers"].erase(0);
    CHECK_THROWS_WITH_AS((void)validation_plan(graph, doc.dump(), "s.json", model),
                         "s.json: no layer 'conv1' (is the strategy for graph 'alexnet'?)", InputError);
  }
  SUBCASE("a config of the wrong rank") {
    json doc = json::parse(solved.output);
    doc["layers"][0]["config"] = {8, 1};
    CHECK_THROWS_WITH_AS((void)validation_plan(graph, doc.dump(), "s.json", model),
                         "s.json: layer 'conv1': field 'config': expected 7 split counts (dims \"bchwrsn\"), got 2",
                         InputError);
  }
  SUBCASE("the strategy file is read by the solver's strategy reader") {
    json doc = json::parse(solved.output);
    doc["layers"][0]["config"][0] = 0;
    CHECK_THROWS_WITH_AS((void)validation_plan(graph, doc.dump(), "s.json", model),
                         "s.json: layer 'conv1': field 'config[0]': expected a split count in 1..2^30, got 0", InputError);
    doc["version"] = 2;
    CHECK_THROWS_WITH_AS((void)validation_plan(graph, doc.dump(), "s.json", model),
                         "s.json: field 'version': unsupported version 2 (this pase reads version 1)", InputError);
  }
}

TEST_CASE("pase solve --cost-model calibrated") {
  const std::string alexnet = test::source_path("data/graphs/alexnet.json");
  const std::string gtx = test::source_path("data/machines/gtx1080ti-node.json");
  SUBCASE("alexnet on two 1080 Ti nodes: seconds") {
    test::CommandResult result = test::run_pase("solve " + alexnet + " --devices 16 --cost-model calibrated --machine " + gtx);
    CHECK(result.status == 0);
    CHECK(result.error == "");
    CHECK(result.output.find("cost model calibrated (seconds)") != std::string::npos);
    test::CommandResult as_json =
        test::run_pase("solve " + alexnet + " --devices 16 --cost-model calibrated --machine " + gtx + " --json");
    REQUIRE(as_json.status == 0);
    json strategy = json::parse(as_json.output);
    CHECK(strategy["cost_model"] == "calibrated");
    CHECK(strategy["cost_unit"] == "seconds");
    CHECK(strategy["devices"] == 16);
    CHECK(strategy["total_cost"].get<double>() > 0);
    CHECK(strategy["machine"]["flops_tflops"].get<double>() == doctest::Approx(11.34));
  }
  SUBCASE("a bad --machine file") {
    std::string bad = test::write_temp_file(
        "bad-machine.json", R"({"format": "pase-machine", "version": 1, "name": "x", "source": "hand",
          "device": {"name": "x", "peak_tflops": 0, "memory_gb": 11, "memory_bandwidth_gbps": 484},
          "devices_per_node": 8,
          "intra_node": {"bandwidth_gbps": 12, "latency_us": 10},
          "inter_node": {"bandwidth_gbps": 6, "latency_us": 20}})");
    test::CommandResult result = test::run_pase("solve " + alexnet + " --devices 16 --cost-model calibrated --machine " + bad);
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + bad + ": field 'device.peak_tflops': expected a positive number, got 0\n");
  }
  SUBCASE("no --machine") {
    test::CommandResult result = test::run_pase("solve " + alexnet + " --devices 16 --cost-model calibrated");
    CHECK(result.status == 2);
    CHECK(result.error ==
          "error: --cost-model calibrated: needs --machine FILE (a pase-machine profile, see docs/calibration.md)\n");
  }
  SUBCASE("an unknown model") {
    test::CommandResult result = test::run_pase("solve " + alexnet + " --devices 16 --cost-model roofline");
    CHECK(result.status == 2);
    CHECK(result.error == "error: --cost-model: unknown cost model 'roofline' (choose pase or calibrated)\n");
  }
}
