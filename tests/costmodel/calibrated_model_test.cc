// The calibrated cost model: GEMM shapes, link choice around devices_per_node,
// exact layer and edge prices, the --validate plan, and the CLI.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "calibrate/validation_plan.h"
#include "costmodel/builtin_machines.h"
#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/machine_profile.h"
#include "costmodel/model_key.h"
#include "graphs/llm_zoo.h"
#include "base/error.h"
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
    // Across nodes: one ring per GPU of a node, 8 x 2 GB/s of network capped
    // by the 10 GB/s intra-node link, at the network's latency.
    CHECK(model.all_reduce_seconds(1e6, 16) == doctest::Approx(30 * (20e-6 + 1e6 / 16 * 4 / 10e9)).epsilon(1e-12));
    CHECK(model.all_reduce_seconds(1e6, 16) == doctest::Approx(1.35e-3).epsilon(1e-12));
    // With 2 per node the network (2 x 2 GB/s) is the bottleneck.
    CHECK(test_model(2).all_reduce_seconds(1e6, 16) == doctest::Approx(30 * (20e-6 + 1e6 / 16 * 4 / 4e9)).epsilon(1e-12));
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
  SUBCASE("a language model: its GEMMs, and no embedding (a gather, which cuBLAS does not run)") {
    test::CommandResult graph_text = test::run_pase("models export gpt --layers 1 --d-model 64 --heads 4 --seq 16 --vocab 100");
    REQUIRE(graph_text.status == 0);
    const std::string gpt_file = test::write_temp_file("validation_gpt.json", graph_text.output);
    test::CommandResult gpt_strategy = test::run_pase("solve " + gpt_file + " --devices 2 --json");
    REQUIRE(gpt_strategy.status == 0);
    std::vector<std::string> names;
    for (const ValidationLayer& layer : validation_plan(load_graph(gpt_file), gpt_strategy.output, "s.json", model))
      names.push_back(layer.name);
    CHECK(names == std::vector<std::string>{"transformer/h.0/attn/c_attn", "transformer/h.0/attn/logits",
                                            "transformer/h.0/attn/context", "transformer/h.0/attn/c_proj",
                                            "transformer/h.0/mlp/c_fc", "transformer/h.0/mlp/c_proj", "lm_head"});
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
          "error: --cost-model calibrated: needs --machine NAME or FILE (a built-in profile such as dgx-a100, or a "
          "pase-machine file; see docs/calibration.md)\n");
  }
  SUBCASE("an unknown model") {
    test::CommandResult result = test::run_pase("solve " + alexnet + " --devices 16 --cost-model roofline");
    CHECK(result.status == 2);
    CHECK(result.error == "error: --cost-model: unknown cost model 'roofline' (choose pase or calibrated)\n");
  }
}

TEST_CASE("default_gemm_efficiency") {
  // 0.8 · Π x / (x + 32).
  CHECK(default_gemm_efficiency(32, 32, 32) == doctest::Approx(0.1).epsilon(1e-15));
  CHECK(default_gemm_efficiency(96, 96, 96) == doctest::Approx(0.8 * 0.75 * 0.75 * 0.75).epsilon(1e-15));
  CHECK(default_gemm_efficiency(1e9, 1e9, 1e9) == doctest::Approx(0.8).epsilon(1e-6));
}

TEST_CASE("CalibratedCostModel: a table measured in the dtype prices its GEMMs; other dtypes keep the curve") {
  MachineProfile profile = test_model().profile();
  profile.peak_by_dtype[static_cast<size_t>(Dtype::Bf16)] = 80e12;
  profile.peak_by_dtype[static_cast<size_t>(Dtype::Tf32)] = 40e12;
  GemmTable bf16 = *profile.gemm;
  for (std::vector<double>& layout : bf16.flops)
    for (double& f : layout) f *= 10;
  profile.gemm_by_dtype[static_cast<size_t>(Dtype::Bf16)] = bf16;
  const double flop = 2.0 * 64 * 64 * 256;
  // NN (64, 64, 256) is 2 TFLOP/s in the fp32 table (see CalibratedCostModel::layer), 20 in bf16's.
  CHECK(CalibratedCostModel(profile, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}}).gemm_seconds({GemmLayout::NN, 64, 64, 256}) ==
        doctest::Approx(flop / 20e12).epsilon(1e-12));
  // Four instances in one kernel run as one GEMM of 4·64 = 256 rows: NN (256, 64, 256) is 6 TFLOP/s, 60 in bf16.
  CHECK(CalibratedCostModel(profile, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}}).gemm_seconds({GemmLayout::NN, 64, 64, 256}, 4) ==
        doctest::Approx(4 * flop / 60e12).epsilon(1e-12));
  CHECK(CalibratedCostModel(profile, 8, CalibratedOptions{{Dtype::Fp32, Optimizer::None}}).gemm_seconds({GemmLayout::NN, 64, 64, 256}) ==
        doctest::Approx(flop / 2e12).epsilon(1e-12));
  // No tf32 table: the roofline on the default curve below the tf32 peak.
  const double fill = 64.0 / 96 * 64.0 / 96 * 256.0 / 288;
  CHECK(CalibratedCostModel(profile, 8, CalibratedOptions{{Dtype::Tf32, Optimizer::None}}).gemm_seconds({GemmLayout::NN, 64, 64, 256}) ==
        doctest::Approx(5e-6 + std::max(flop / (40e12 * 0.8 * fill), (64.0 * 256 + 256 * 64 + 64 * 64) * 4 / (500e9 * 0.8)))
            .epsilon(1e-12));
}

TEST_CASE("CalibratedCostModel: GEMMs without a table, by dtype") {
  const MachineProfile a100 = load_machine_profile("dgx-a100");
  SUBCASE("a large bf16 GEMM runs near 80% of the 312 TFLOP/s peak") {
    CalibratedCostModel model(a100, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}});
    const double n = 8192, flop = 2 * n * n * n;
    const double fill = n / (n + 32);
    CHECK(model.gemm_seconds({GemmLayout::NN, n, n, n}) ==
          doctest::Approx(5e-6 + flop / (312e12 * 0.8 * fill * fill * fill)).epsilon(1e-12));
    CHECK(flop / model.gemm_seconds({GemmLayout::NN, n, n, n}) > 0.78 * 312e12);
  }
  SUBCASE("a small GEMM is far below peak: the kernel's fixed cost dominates") {
    CalibratedCostModel model(a100, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}});
    const double seconds = model.gemm_seconds({GemmLayout::NN, 64, 64, 64});
    CHECK(seconds > 5e-6);
    CHECK(2.0 * 64 * 64 * 64 / seconds < 0.001 * 312e12);
  }
  SUBCASE("a thin GEMM is bound by its operands' traffic") {
    CalibratedCostModel model(a100, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}});
    // (1e6 x 64) · (64 x 64) in bf16: 2-byte operands at 80% of 2039 GB/s take
    // longer than 8.2 GFLOP at 312 TFLOP/s x 0.8 x (64/96)^2.
    const double traffic = (1e6 * 64 + 64 * 64 + 1e6 * 64) * 2 / (2039e9 * 0.8);
    const double compute = 2 * 1e6 * 64 * 64 / (312e12 * default_gemm_efficiency(1e6, 64, 64));
    CHECK(traffic > compute);
    CHECK(model.gemm_seconds({GemmLayout::NN, 1e6, 64, 64}) == doctest::Approx(5e-6 + traffic).epsilon(1e-12));
  }
  SUBCASE("a batched GEMM is one kernel whose instances fill the device as rows") {
    CalibratedCostModel model(a100, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}});
    const double flop = 2.0 * 32 * 32 * 64;
    const double compute = 1280 * flop / (312e12 * default_gemm_efficiency(1280 * 32, 32, 64));
    const double traffic = 1280 * (32 * 64 + 64 * 32 + 32 * 32) * 2 / (2039e9 * 0.8);
    CHECK(model.gemm_seconds({GemmLayout::NN, 32, 32, 64}, 1280) ==
          doctest::Approx(5e-6 + std::max(compute, traffic)).epsilon(1e-12));
  }
  SUBCASE("the dtype picks the peak, the bytes and the machine record") {
    CHECK(CalibratedCostModel(a100, 8, CalibratedOptions{{Dtype::Tf32, Optimizer::None}}).machine().flops_tflops == doctest::Approx(156));
    CHECK(CalibratedCostModel(a100, 8, CalibratedOptions{{Dtype::Fp32, Optimizer::None}}).machine().flops_tflops == doctest::Approx(19.5));
    CHECK(CalibratedCostModel(a100, 8, CalibratedOptions{{Dtype::Fp16, Optimizer::None}}).element_bytes() == 2);
    CHECK(CalibratedCostModel(a100, 8, CalibratedOptions{{Dtype::Tf32, Optimizer::None}}).element_bytes() == 4);
    // Half the bytes: the same all-reduce takes half the bandwidth term.
    CalibratedCostModel fp32(a100, 8, CalibratedOptions{{Dtype::Fp32, Optimizer::None}}), bf16(a100, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}});
    CHECK(bf16.all_reduce_seconds(1e8, 8) == doctest::Approx(14 * (3e-6 + 1e8 / 8 * 2 / 240e9)).epsilon(1e-12));
    CHECK(fp32.all_reduce_seconds(1e8, 8) == doctest::Approx(14 * (3e-6 + 1e8 / 8 * 4 / 240e9)).epsilon(1e-12));
  }
  SUBCASE("a dtype the profile gives no rate for") {
    CHECK_THROWS_WITH_AS(CalibratedCostModel(load_machine_profile("dgx1"), 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}}),
                         "machine 'dgx1': no bf16 rate (field 'device.peak_tflops_by_dtype.bf16'): the device lacks it "
                         "or the profile does not give it",
                         InputError);
  }
  SUBCASE("the fp32 table prices fp32 only: a dtype without a table of its own uses the curve") {
    MachineProfile measured = parse_machine_profile(kProfile, "m.json");
    measured.peak_by_dtype[static_cast<size_t>(Dtype::Bf16)] = 100e12;
    CalibratedCostModel fp32(measured, 8), bf16(measured, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}});
    CHECK(fp32.gemm_seconds({GemmLayout::NN, 64, 64, 64}) == doctest::Approx(2.0 * 64 * 64 * 64 / 1e12).epsilon(1e-12));
    const double compute = 2.0 * 64 * 64 * 64 / (100e12 * default_gemm_efficiency(64, 64, 64));
    const double traffic = 3 * 64 * 64 * 2 / (500e9 * 0.8);
    CHECK(bf16.gemm_seconds({GemmLayout::NN, 64, 64, 64}) == doctest::Approx(5e-6 + std::max(compute, traffic)).epsilon(1e-12));
  }
}

TEST_CASE("CalibratedCostModel: framework pricing of batchnorm, embedding and gradients") {
  const MachineProfile a100 = load_machine_profile("dgx-a100");
  SUBCASE("batchnorm: per-device statistics by default, sync all-reduces 2·C words twice") {
    Graph graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "tensors": {"x": [64, 256, 14, 14]},
        "nodes": [{"name": "bn", "op": "batchnorm", "inputs": ["x"]}]})");
    VertexModel bn = build_vertex_model(graph.vertices[0]);
    const int32_t data_parallel[4] = {8, 1, 1, 1};
    CalibratedOptions sync_options;
    sync_options.sync_batchnorm = true;
    CalibratedCostModel local(a100, 8), sync(a100, 8, sync_options);
    const double e = 8.0 * 256 * 14 * 14;  // per device
    const double stream = 2 * 5e-6 + 8 * e * 4 / (2039e9 * 0.8);
    const double backward = 5e-6 + 5 * e * 4 / (2039e9 * 0.8);
    // dγ, dβ over the 8 replicas: 2 KB of a 25 MiB bucket's latency.
    const double gradient = 14 * (2048.0 / (25 << 20) * 3e-6 + 2 * 256 / 8.0 * 4 / 240e9);
    CHECK(local.layer(bn, data_parallel) == doctest::Approx(stream + std::max(0.0, gradient - backward)).epsilon(1e-12));
    CHECK(sync.layer(bn, data_parallel) - local.layer(bn, data_parallel) ==
          doctest::Approx(2 * 14 * (3e-6 + 2 * 256 / 8.0 * 4 / 240e9)).epsilon(1e-9));
    // Whole activations never cross the link: data parallelism streams an
    // eighth of one device's elements; only the kernels' fixed time remains.
    const int32_t one[4] = {1, 1, 1, 1};
    CHECK(local.layer(bn, data_parallel) - 2 * 5e-6 ==
          doctest::Approx((local.layer(bn, one) - 2 * 5e-6) / 8).epsilon(1e-9));
  }
  SUBCASE("embedding: a memory-bound gather, the vocabulary split all-reduces the output") {
    Graph graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "tensors": {"ids": [8, 128]},
        "nodes": [{"name": "embed", "op": "embedding", "inputs": ["ids"], "vocab": 32000, "dim": 1024}]})");
    VertexModel embed = build_vertex_model(graph.vertices[0]);
    REQUIRE(embed.letters.size() == 4);
    CalibratedCostModel model(a100, 8);
    const double rows = 8 * 128, bw = 2039e9 * 0.8;
    const int32_t whole[4] = {1, 1, 1, 1};
    const double gather = 3 * 5e-6 + (2 * rows * 1024 + 3 * rows * 1024 + 32000 * 1024.0) * 4 / bw;
    CHECK(model.layer(embed, whole) == doctest::Approx(gather).epsilon(1e-12));
    // Vocabulary split 8 ways: an eighth of the table's gradient to zero, and one all-reduce of the output.
    int32_t vocab[4] = {1, 1, 1, 1};
    vocab[embed.letters.find('c')] = 8;
    const double sharded = 3 * 5e-6 + (2 * rows * 1024 + 3 * rows * 1024 + 4000 * 1024.0) * 4 / bw +
                           14 * (3e-6 + rows * 1024 / 8 * 4 / 240e9);
    CHECK(model.layer(embed, vocab) == doctest::Approx(sharded).epsilon(1e-12));
    // The one-hot GEMM the pase model prices would be 2·rows·32000·1024·3 FLOP: far slower than the gather.
    CHECK(model.layer(embed, whole) < 2 * rows * 32000 * 1024 * 3 / 19.5e12 / 10);
  }
  SUBCASE("mixed precision keeps norm and softmax in FP32, with their casts") {
    Graph graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "tensors": {"x": [64, 128, 1024]},
        "nodes": [{"name": "ln", "op": "norm", "inputs": ["x"]},
                  {"name": "sm", "op": "softmax", "inputs": ["ln"], "axis": 2}]})");
    VertexModel ln = build_vertex_model(graph.vertices[0]), sm = build_vertex_model(graph.vertices[1]);
    const int32_t one[3] = {1, 1, 1};
    const double e = 64.0 * 128 * 1024, bw = 2039e9 * 0.8;
    CalibratedCostModel fp32(a100, 8), bf16(a100, 8, CalibratedOptions{{Dtype::Bf16, Optimizer::None}});
    // fp32: two kernels and 8 accesses of 4 bytes.
    CHECK(fp32.layer(ln, one) == doctest::Approx(2 * 5e-6 + 8 * e * 4 / bw).epsilon(1e-12));
    // bf16: still 4-byte accesses, plus four cast kernels of (2 + 4) bytes per element.
    CHECK(bf16.layer(ln, one) == doctest::Approx(6 * 5e-6 + (8 * e * 4 + 24 * e) / bw).epsilon(1e-12));
    CHECK(bf16.layer(sm, one) == doctest::Approx(6 * 5e-6 + (6 * e * 4 + 24 * e) / bw).epsilon(1e-12));
    // Dropout on the probabilities (pointwise 1) streams 6 accesses of the training dtype.
    Graph dropout_graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "tensors": {"x": [64, 128, 1024]},
        "nodes": [{"name": "sm", "op": "softmax", "inputs": ["x"], "axis": 2, "pointwise": 1}]})");
    CHECK(bf16.layer(build_vertex_model(dropout_graph.vertices[0]), one) ==
          doctest::Approx(6 * 5e-6 + (6 * e * 4 + 24 * e + 6 * e * 2) / bw).epsilon(1e-12));
    // Batchnorm is not on the list: it streams 2-byte elements.
    Graph bn_graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "tensors": {"x": [64, 256, 14, 14]},
        "nodes": [{"name": "bn", "op": "batchnorm", "inputs": ["x"]}]})");
    const int32_t bn_one[4] = {1, 1, 1, 1};
    CHECK(bf16.layer(build_vertex_model(bn_graph.vertices[0]), bn_one) ==
          doctest::Approx(2 * 5e-6 + 8 * (64.0 * 256 * 14 * 14) * 2 / bw).epsilon(1e-12));
    // A ReLU after it (pointwise 1): three counted operations per element, as
    // a GEMM's fused pointwise ops, each a read and a write: 6 accesses.
    Graph bn_relu_graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1,
        "tensors": {"x": [64, 256, 14, 14]}, "nodes": [{"name": "bn", "op": "batchnorm", "inputs": ["x"], "pointwise": 1}]})");
    CHECK(bf16.layer(build_vertex_model(bn_relu_graph.vertices[0]), bn_one) ==
          doctest::Approx(2 * 5e-6 + (8 + 6) * (64.0 * 256 * 14 * 14) * 2 / bw).epsilon(1e-12));
  }
  SUBCASE("gradient all-reduces hide behind the layer's backward pass unless overlap is off") {
    Graph graph = test::graph_from_json(kFcGraph);
    VertexModel fc = build_vertex_model(graph.vertices[0]);
    const int32_t data_parallel[3] = {8, 1, 1};
    CalibratedCostModel on = test_model();
    CalibratedOptions off_options;
    off_options.overlap_gradients = false;
    CalibratedCostModel off(parse_machine_profile(kProfile, "m.json"), 16, off_options);
    // m = 8, n = 64, k = 256: NT (8, 256, 64) at 2 TFLOP/s and TN (256, 64, 8) at 4 (table, clamped).
    const double backward = 2.0 * 8 * 256 * 64 / 2e12 + 2.0 * 256 * 64 * 8 / 4e12;
    const double all_reduce = on.gradient_all_reduce_seconds(64 * 256, 8);
    CHECK(all_reduce == doctest::Approx(14 * (64 * 256 * 4.0 / (25 << 20) * 5e-6 + 64 * 256 / 8.0 * 4 / 10e9)).epsilon(1e-12));
    CHECK(off.layer(fc, data_parallel) - on.layer(fc, data_parallel) == doctest::Approx(backward).epsilon(1e-6));
    CHECK(on.exposed_gradient_seconds(all_reduce, backward) == doctest::Approx(all_reduce - backward).epsilon(1e-12));
    CHECK(on.exposed_gradient_seconds(1e-3, 2e-3) == 0.0);
    CHECK(off.exposed_gradient_seconds(1e-3, 2e-3) == 1e-3);
  }
}

TEST_CASE("CalibratedCostModel: the optimizer's update of each weight") {
  const MachineProfile a100 = load_machine_profile("dgx-a100");
  const double bw = 2039e9 * 0.8;
  auto model = [&](Dtype dtype, Optimizer optimizer) {
    CalibratedOptions options;
    options.training.dtype = dtype;
    options.training.optimizer = optimizer;
    return CalibratedCostModel(a100, 8, options);
  };
  SUBCASE("update_seconds: bytes per weight, by hand") {
    // Adam in FP32: read w, g, m, v (16 B), write w, m, v (12 B).
    CHECK(model(Dtype::Fp32, Optimizer::Adam).update_seconds(1e6) == doctest::Approx(1e6 * 28 / bw).epsilon(1e-12));
    // Adam under fp16 with an FP32 master copy: unscale g16 (read and write 2 + 2), then
    // read g16, w32, m, v (2 + 4 + 8), write w32, m, v, w16 (4 + 8 + 2).
    CHECK(model(Dtype::Fp16, Optimizer::Adam).update_seconds(1e6) == doctest::Approx(1e6 * 32 / bw).epsilon(1e-12));
    // SGD with momentum in TF32 (FP32 storage): read w, g, m (12 B), write w, m (8 B).
    CHECK(model(Dtype::Tf32, Optimizer::Sgd).update_seconds(1e6) == doctest::Approx(1e6 * 20 / bw).epsilon(1e-12));
    // SGD under bf16: unscale (2 + 2), read g16, w32, m (2 + 4 + 4), write w32, m, w16 (4 + 4 + 2).
    CHECK(model(Dtype::Bf16, Optimizer::Sgd).update_seconds(1e6) == doctest::Approx(1e6 * 24 / bw).epsilon(1e-12));
    CHECK(model(Dtype::Fp32, Optimizer::None).update_seconds(1e6) == 0.0);
  }
  SUBCASE("a weight's update is a term of its layer; each replica steps its own copy, a split weight its shard") {
    Graph graph = test::graph_from_json(kFcGraph);
    VertexModel fc = build_vertex_model(graph.vertices[0]);
    CHECK(fc.work.weight_operand);
    const CalibratedCostModel adam = model(Dtype::Fp32, Optimizer::Adam), none = model(Dtype::Fp32, Optimizer::None);
    const int32_t data_parallel[3] = {8, 1, 1}, weight_split[3] = {1, 2, 4};
    // The fc's weight is 256 x 64: data parallel steps all of it, (1, 2, 4) an eighth.
    CHECK(adam.layer(fc, data_parallel) - none.layer(fc, data_parallel) ==
          doctest::Approx(256 * 64 * 28 / bw).epsilon(1e-9));
    CHECK(adam.layer(fc, weight_split) - none.layer(fc, weight_split) ==
          doctest::Approx(256 * 64 / 8 * 28 / bw).epsilon(1e-9));
    const CostTerms terms = adam.layer_terms(fc, data_parallel);
    REQUIRE(terms.size() >= 2);
    CHECK(terms[1].what == "optimizer update");
    CHECK(terms[1].cost == doctest::Approx(256 * 64 * 28 / bw).epsilon(1e-12));
  }
  SUBCASE("an einsum updates its second input only when the graph lists it under parameters") {
    Graph graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1,
        "tensors": {"x": [8, 16, 64], "w": [64, 32]}, "parameters": ["w"],
        "nodes": [{"name": "proj", "op": "einsum", "inputs": ["x", "w"], "equation": "ble,ef->blf"},
                  {"name": "scores", "op": "einsum", "inputs": ["proj", "proj"], "equation": "blf,bmf->blm"}]})");
    VertexModel proj = build_vertex_model(graph.vertices[0]), scores = build_vertex_model(graph.vertices[1]);
    CHECK(proj.work.weight_operand);
    CHECK_FALSE(scores.work.weight_operand);
    const CalibratedCostModel adam = model(Dtype::Fp16, Optimizer::Adam), none = model(Dtype::Fp16, Optimizer::None);
    const int32_t one[4] = {1, 1, 1, 1};
    CHECK(adam.layer(proj, one) - none.layer(proj, one) == doctest::Approx(64 * 32 * 32 / bw).epsilon(1e-9));
    CHECK(adam.layer(scores, one) == none.layer(scores, one));
  }
  SUBCASE("a tied weight is stepped once, by its first reader") {
    Graph graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "tensors": {"ids": [8, 16]},
        "nodes": [{"name": "embed", "op": "embedding", "inputs": ["ids"], "vocab": 512, "dim": 64, "weights": ["table"]},
                  {"name": "head", "op": "fc", "inputs": ["embed"], "units": 512, "weights": ["table"]},
                  {"name": "proj", "op": "fc", "inputs": ["head"], "units": 64}]})");
    const CalibratedCostModel adam = model(Dtype::Fp32, Optimizer::Adam), none = model(Dtype::Fp32, Optimizer::None);
    const CostTables with = build_cost_tables(graph, adam), without = build_cost_tables(graph, none);
    CHECK(with.models[0].work.weight_operand);
    CHECK_FALSE(with.models[1].work.weight_operand);
    CHECK(with.models[2].work.weight_operand);
    CHECK(with.objective.vertex_cost[0][0] - without.objective.vertex_cost[0][0] ==
          doctest::Approx(512 * 64 * 28 / bw).epsilon(1e-9));
    CHECK(with.objective.vertex_cost[1][0] == without.objective.vertex_cost[1][0]);
    CHECK(with.objective.vertex_cost[2][0] - without.objective.vertex_cost[2][0] ==
          doctest::Approx(512 * 64 * 28 / bw).epsilon(1e-9));
  }
}

TEST_CASE("CalibratedCostModel: NCHW tensor-core convolutions transpose their operands") {
  const MachineProfile a100 = load_machine_profile("dgx-a100");
  // x (32, 64, 56, 56), a 3x3 stride-2 convolution to 128 channels: y (32, 128, 28, 28).
  Graph graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "tensors": {"x": [32, 64, 56, 56]},
      "nodes": [{"name": "conv", "op": "conv2d", "inputs": ["x"], "filter": [128, 64, 3, 3], "stride": 2, "padding": 1}]})");
  VertexModel conv = build_vertex_model(graph.vertices[0]);
  auto model = [&](Dtype dtype, bool channels_last) {
    CalibratedOptions options;
    options.training.dtype = dtype;
    options.channels_last = channels_last;
    return CalibratedCostModel(a100, 8, options);
  };
  const double bw = 2039e9 * 0.8;
  SUBCASE("by hand: nine transposes of x, w and y per device") {
    const int32_t data_parallel[7] = {8, 1, 1, 1, 1, 1, 1};
    const double x = 4.0 * 64 * 56 * 56, w = 128.0 * 64 * 9, y = 4.0 * 128 * 28 * 28;
    CHECK(model(Dtype::Tf32, false).layout_transpose_seconds(x, w, y) ==
          doctest::Approx(9 * 5e-6 + 6 * (x + w + y) * 4 / bw).epsilon(1e-12));
    CHECK(model(Dtype::Tf32, false).layer(conv, data_parallel) - model(Dtype::Tf32, true).layer(conv, data_parallel) ==
          doctest::Approx(9 * 5e-6 + 6 * (x + w + y) * 4 / bw).epsilon(1e-9));
    // fp16: 2-byte elements.
    CHECK(model(Dtype::Fp16, false).layer(conv, data_parallel) - model(Dtype::Fp16, true).layer(conv, data_parallel) ==
          doctest::Approx(9 * 5e-6 + 6 * (x + w + y) * 2 / bw).epsilon(1e-9));
  }
  SUBCASE("a channel split shards x and w; y follows the filters' split") {
    const int32_t channels[7] = {1, 2, 1, 1, 1, 1, 4};  // c split 2, n split 4
    const double x = 32.0 * 32 * 56 * 56, w = 32.0 * 32 * 9, y = 32.0 * 32 * 28 * 28;
    CHECK(model(Dtype::Bf16, false).layer(conv, channels) - model(Dtype::Bf16, true).layer(conv, channels) ==
          doctest::Approx(9 * 5e-6 + 6 * (x + w + y) * 2 / bw).epsilon(1e-9));
  }
  SUBCASE("FP32 convolutions run on CUDA cores in NCHW: nothing to transpose") {
    const int32_t one[7] = {1, 1, 1, 1, 1, 1, 1};
    CHECK(model(Dtype::Fp32, false).layer(conv, one) == model(Dtype::Fp32, true).layer(conv, one));
    CHECK(model(Dtype::Fp32, false).layout_transpose_seconds(1e6, 1e3, 1e6) == 0.0);
  }
}

TEST_CASE("load_machine_profile: built-in names and files") {
  SUBCASE("every shipped profile is built in and cites its sources") {
    std::vector<std::string> names = builtin_machine_names();
    for (const char* expected :
         {"dgx-a100", "dgx-h100", "dgx1", "gtx1080ti-node", "h100-measured", "rtx2080ti-node", "rtx4090-node"})
      CHECK(std::find(names.begin(), names.end(), expected) != names.end());
    for (const std::string& name : names) {
      MachineProfile profile = load_machine_profile(name);
      CHECK(profile.name == name);
      CHECK(write_machine_profile(profile) ==
            write_machine_profile(read_machine_profile(test::source_path("data/machines/" + name + ".json"))));
    }
    for (const char* name : {"dgx1", "dgx-a100", "dgx-h100", "rtx4090-node"})
      CHECK(load_machine_profile(name).notes.find("https://") != std::string::npos);
  }
  SUBCASE("the measured H100: its source, date and a table in each dtype it was measured in") {
    MachineProfile h100 = load_machine_profile("h100-measured");
    CHECK(h100.source == "measured");
    REQUIRE(h100.measured);
    CHECK(h100.measured->date == "2026-11-26T17:49:01Z");
    CHECK(h100.measured->gpu == "NVIDIA H100 80GB HBM3");
    CHECK(h100.measured->cublas == "13.1.0");
    for (Dtype d : {Dtype::Fp32, Dtype::Tf32, Dtype::Bf16}) CHECK(gemm_table(h100, d));
    CHECK(!gemm_table(h100, Dtype::Fp16));
    CHECK(gemm_table(h100, Dtype::Bf16)->m.back() == 131072);
    // An 8192-cube in bf16 reaches 82% of the 989 TFLOP/s of the datasheet.
    CHECK(interpolate_flops(*gemm_table(h100, Dtype::Bf16), GemmLayout::NN, 8192, 8192, 8192) ==
          doctest::Approx(809.6e12).epsilon(1e-9));
  }
  SUBCASE("the public figures") {
    MachineProfile a100 = load_machine_profile("dgx-a100");
    CHECK(a100.peak_flops == 19.5e12);
    CHECK(peak_flops_for(a100, Dtype::Tf32) == 156e12);
    CHECK(peak_flops_for(a100, Dtype::Bf16) == 312e12);
    CHECK(a100.memory_bandwidth == 2039e9);
    CHECK(a100.devices_per_node == 8);
    MachineProfile h100 = load_machine_profile("dgx-h100");
    CHECK(peak_flops_for(h100, Dtype::Bf16) == 989e12);
    CHECK(h100.memory_bandwidth == 3350e9);
    MachineProfile v100 = load_machine_profile("dgx1");
    CHECK(v100.peak_flops == 15.7e12);
    CHECK(peak_flops_for(v100, Dtype::Fp16) == 125e12);
    CHECK(load_machine_profile("rtx4090-node").peak_flops == 82.6e12);
  }
  SUBCASE("a path still works") {
    CHECK(load_machine_profile(test::source_path("data/machines/dgx-a100.json")).name == "dgx-a100");
  }
  SUBCASE("a near miss gets a suggestion") {
    CHECK_THROWS_WITH_AS((void)load_machine_profile("dgx-a10"),
                         "machine 'dgx-a10': no such file and no built-in profile of that name (did you mean "
                         "'dgx-a100'? built-in: dgx-a100, dgx-h100, dgx1, gtx1080ti-node, h100-measured, rtx2080ti-node, "
                         "rtx4090-node)",
                         InputError);
  }
  SUBCASE("--machine takes a name from any directory") {
    test::CommandResult result = test::run_pase("evaluate " + test::source_path("data/graphs/alexnet.json") +
                                                " --baseline data-parallel --devices 8 --cost-model calibrated "
                                                "--machine dgx-a100 --dtype bf16 --json");
    REQUIRE(result.status == 0);
    json strategy = json::parse(result.output);
    CHECK(strategy["machine"]["flops_tflops"].get<double>() == doctest::Approx(312));
    CHECK(test::run_pase("solve " + test::source_path("data/graphs/alexnet.json") +
                         " --devices 8 --cost-model calibrated --machine dgx-a10")
              .error.find("did you mean 'dgx-a100'?") != std::string::npos);
  }
}

TEST_CASE("calibrated model options on the command line") {
  const std::string alexnet = test::source_path("data/graphs/alexnet.json");
  SUBCASE("--memory-per-device machine: the profile's memory") {
    test::CommandResult result = test::run_pase("solve " + alexnet +
                                                " --devices 8 --cost-model calibrated --machine gtx1080ti-node "
                                                "--memory-per-device machine");
    CHECK(result.status == 0);
    // 11 GB (10.24 GiB) less the reserve: 1 GiB and 5% of the other 9.24 GiB.
    CHECK(result.output.find("cap 8.78 GiB") != std::string::npos);
    CHECK(test::run_pase("solve " + alexnet +
                         " --devices 8 --cost-model calibrated --machine gtx1080ti-node --memory-per-device machine "
                         "--memory-reserve 0")
              .output.find("cap 10.24 GiB") != std::string::npos);
    CHECK(test::run_pase("solve " + alexnet +
                         " --devices 8 --cost-model calibrated --machine gtx1080ti-node --memory-per-device machine "
                         "--memory-reserve 2GiB")
              .output.find("cap 8.24 GiB") != std::string::npos);
    CHECK(test::run_pase("solve " + alexnet +
                         " --devices 8 --cost-model calibrated --machine gtx1080ti-node --memory-per-device machine "
                         "--memory-reserve 11GB")
              .error == "error: --memory-reserve: 10.24 GiB leaves nothing of the 10.24 GiB of a device of the machine\n");
    CHECK(test::run_pase("solve " + alexnet +
                         " --devices 8 --cost-model calibrated --machine gtx1080ti-node --memory-per-device 8GiB "
                         "--memory-reserve 1GiB")
              .error == "error: --memory-reserve: applies to --memory-per-device machine (a size given is what "
                        "training may use)\n");
    CHECK(test::run_pase("solve " + alexnet + " --devices 8 --memory-reserve 1GiB").error ==
          "error: --memory-reserve: the reserve is kept from a machine profile's memory (add --cost-model calibrated "
          "--machine NAME)\n");
    test::CommandResult refused = test::run_pase("solve " + alexnet + " --devices 8 --memory-per-device machine");
    CHECK(refused.status == 2);
    CHECK(refused.error ==
          "error: --memory-per-device machine: the memory per device comes from a machine profile (add --cost-model "
          "calibrated --machine NAME)\n");
  }
  SUBCASE("--gradient-overlap and --batchnorm: values, and only with the calibrated model") {
    test::CommandResult bad = test::run_pase("solve " + alexnet +
                                             " --devices 8 --cost-model calibrated --machine dgx1 --gradient-overlap maybe");
    CHECK(bad.status == 2);
    CHECK(bad.error == "error: --gradient-overlap: expected on or off, got 'maybe'\n");
    test::CommandResult bad_bn = test::run_pase("solve " + alexnet +
                                                " --devices 8 --cost-model calibrated --machine dgx1 --batchnorm global");
    CHECK(bad_bn.status == 2);
    CHECK(bad_bn.error == "error: --batchnorm: expected local or sync, got 'global'\n");
    test::CommandResult bad_format = test::run_pase("solve " + alexnet +
                                                    " --devices 8 --cost-model calibrated --machine dgx1 --memory-format chwn");
    CHECK(bad_format.status == 2);
    CHECK(bad_format.error == "error: --memory-format: expected nhwc or nchw, got 'chwn'\n");
    test::CommandResult pase_model = test::run_pase("solve " + alexnet + " --devices 8 --batchnorm sync");
    CHECK(pase_model.status == 2);
    CHECK(pase_model.error ==
          "error: --gradient-overlap/--batchnorm/--memory-format: used only by the calibrated model (add --cost-model calibrated)\n");
    // Turning overlap off can only add time.
    auto total = [&](const std::string& extra) {
      test::CommandResult r = test::run_pase("evaluate " + alexnet +
                                             " --baseline data-parallel --devices 8 --cost-model calibrated "
                                             "--machine dgx1 --json" + extra);
      REQUIRE(r.status == 0);
      return json::parse(r.output)["total_cost"].get<double>();
    };
    CHECK(total(" --gradient-overlap off") > total(""));
  }
}

#ifdef PASE_HAVE_ONNX
TEST_CASE("calibrated model: ResNet-50 on a DGX A100 is data parallel") {
  const std::string graph = test::write_temp_file("resnet50-2048.json", "");
  test::CommandResult imported =
      test::run_pase("import " + test::source_path("data/onnx/resnet50.onnx") + " --batch 2048 -o " + graph);
  REQUIRE(imported.status == 0);
  test::CommandResult solved =
      test::run_pase("solve " + graph + " --devices 8 --cost-model calibrated --machine dgx-a100 --dtype tf32 --json");
  REQUIRE(solved.status == 0);
  int convolutions = 0;
  const json strategy = json::parse(solved.output);
  for (const json& layer : strategy["layers"]) {
    const std::string op = layer["op"].get<std::string>();
    if (op != "conv2d" && op != "batchnorm") continue;
    ++convolutions;
    std::vector<int64_t> config = layer["config"].get<std::vector<int64_t>>();
    INFO(layer["name"].get<std::string>());
    CHECK(config.front() == 8);
    for (size_t i = 1; i < config.size(); ++i) CHECK(config[i] == 1);
  }
  CHECK(convolutions == 106);
}
#endif

TEST_CASE("CalibratedCostModel: a collective's links from its members per node") {
  const MachineProfile a100 = load_machine_profile("dgx-a100");
  const CalibratedCostModel model(a100, 64, CalibratedOptions{{Dtype::Bf16, Optimizer::None}});
  auto ring = [](double q, double latency, double bandwidth) { return 2 * (q - 1) * (latency + 1e8 / q * 2 / bandwidth); };
  // Not known: a group of up to 8 sits in one node, a larger one holds whole nodes (8 adapters).
  CHECK(model.all_reduce_seconds(1e8, 8) == doctest::Approx(ring(8, 3e-6, 240e9)).epsilon(1e-12));
  CHECK(model.all_reduce_seconds(1e8, 16) == doctest::Approx(ring(16, 6e-6, std::min(240e9, 8 * 20e9))).epsilon(1e-12));
  CHECK(model.all_reduce_seconds(1e8, 16, 8) == model.all_reduce_seconds(1e8, 16));
  // Known: 2 members in each node use 2 adapters; 4 devices on 4 nodes cross the network.
  CHECK(model.all_reduce_seconds(1e8, 16, 2) == doctest::Approx(ring(16, 6e-6, 2 * 20e9)).epsilon(1e-12));
  CHECK(model.all_reduce_seconds(1e8, 4, 1) == doctest::Approx(ring(4, 6e-6, 20e9)).epsilon(1e-12));
  CHECK(model.all_reduce_seconds(1e8, 4, 4) == model.all_reduce_seconds(1e8, 4));
}

TEST_CASE("reprice_vertices: other per-layer techniques priced from base tables as a fresh pricing prices them") {
  LlmShape shape;
  shape.layers = 3, shape.d_model = 64, shape.heads = 4, shape.kv_heads = 4, shape.ff = 256, shape.seq = 16;
  shape.vocab = 128, shape.batch = 8;
  const Graph graph = build_graph(build_llm_graph(LlmFamily::Gpt, shape, "gpt"), "gpt.json");  // a tied embedding
  MachineProfile profile = parse_machine_profile(kProfile, "m.json");
  CalibratedOptions options;
  options.training.optimizer = Optimizer::Adam;
  const CalibratedCostModel model(profile, 16, options);
  const CostTables base = build_cost_tables(graph, model);
  Graph variant = graph;
  for (size_t v = 0; v < variant.vertices.size(); ++v) {  // every mix of techniques, alike blocks differing
    variant.vertices[v].recompute = v % 3 == 0;
    variant.vertices[v].zero = static_cast<int>(v % 5) - 1;
    variant.vertices[v].fused_scores = v % 7 == 0;
  }
  const CostTables repriced = reprice_vertices(variant, model, base), fresh = build_cost_tables(variant, model);
  REQUIRE(repriced.configs.size() == fresh.configs.size());
  int updates = 0;
  for (size_t v = 0; v < fresh.configs.size(); ++v) {
    CAPTURE(graph.vertices[v].name);
    CHECK(model_key(repriced.models[v]) == model_key(fresh.models[v]));
    updates += fresh.models[v].work.weight_operand;
    REQUIRE(repriced.configs[v].size() == fresh.configs[v].size());
    for (size_t c = 0; c < fresh.configs[v].size(); ++c)
      CHECK(repriced.objective.vertex_cost[v][c] == fresh.objective.vertex_cost[v][c]);
  }
  CHECK(updates > 0);
  CHECK_FALSE(repriced.models[graph.find_vertex("lm_head")].work.weight_operand);  // the table's second reader
}
