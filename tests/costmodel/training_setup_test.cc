// The training setup (docs/training.md) in the memory model and both cost
// models: every number is worked out by hand below from the rules of
// docs/training.md and docs/memory.md, not by the code under test.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/costs.h"
#include "costmodel/machine_profile.h"
#include "costmodel/memory_model.h"
#include "costmodel/training_setup.h"
#include "graphs/attention.h"
#include "graphs/recompute.h"
#include "strategy/config_lookup.h"
#include "test_support.h"

using namespace pase;

namespace {

// x [8, 6] -> fc1 (4 units, weight [4, 6]) -> a -> b -> res = fc1 + b -> fc2 (3 units, weight [3, 4]).
const char* const kResidual = R"({"format": "pase-graph", "version": 1, "name": "residual", "cutoff": 1,
 "tensors": {"x": [8, 6]},
 "nodes": [
  {"name": "fc1", "op": "fc", "inputs": ["x"], "units": 4},
  {"name": "a", "op": "elementwise", "inputs": ["fc1"]},
  {"name": "b", "op": "elementwise", "inputs": ["a"]},
  {"name": "res", "op": "elementwise", "inputs": ["fc1", "b"]},
  {"name": "fc2", "op": "fc", "inputs": ["res"], "units": 3}]})";

TrainingSetup setup(Dtype dtype, Optimizer optimizer, int zero, int64_t micro_batches = 1) {
  TrainingSetup t{dtype, optimizer};
  t.zero = zero;
  t.micro_batches = micro_batches;
  return t;
}

// Configuration indices of the given split tuples, in vertex order.
std::vector<int32_t> choice_of(const CostTables& tables, const std::vector<std::vector<int32_t>>& configs) {
  std::vector<int32_t> choice;
  for (size_t v = 0; v < configs.size(); ++v) {
    const int32_t index = find_config(tables.configs[v], configs[v].data());
    REQUIRE(index >= 0);
    choice.push_back(index);
  }
  return choice;
}

Machine four_devices() {
  Machine machine;
  machine.devices = 4;
  return machine;
}

}  // namespace

TEST_CASE("weight_state_bytes: the ZeRO table of docs/training.md, x/r rounded up per weight") {
  // t = 7 elements over r = 5 replicas.
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Adam, 0), 0, 7, 5) == 16 * 7);
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Adam, 1), 1, 7, 5) == 4 * 7 + 17);  // 12*7/5 = 16.8
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Adam, 2), 2, 7, 5) == 2 * 7 + 20);  // 14*7/5 = 19.6
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Adam, 3), 3, 7, 5) == 23);          // 16*7/5 = 22.4
  CHECK(weight_state_bytes(setup(Dtype::Fp32, Optimizer::Adam, 1), 1, 7, 5) == 8 * 7 + 12);  // 8*7/5 = 11.2
  CHECK(weight_state_bytes(setup(Dtype::Fp32, Optimizer::Adam, 2), 2, 7, 5) == 4 * 7 + 17);  // 12*7/5 = 16.8
  CHECK(weight_state_bytes(setup(Dtype::Fp32, Optimizer::Adam, 3), 3, 7, 5) == 23);
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Sgd, 0), 0, 7, 5) == 12 * 7);
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Sgd, 1), 1, 7, 5) == 4 * 7 + 12);  // 8*7/5 = 11.2
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Sgd, 2), 2, 7, 5) == 2 * 7 + 14);  // 10*7/5 = 14
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Sgd, 3), 3, 7, 5) == 17);          // 12*7/5 = 16.8
  CHECK(weight_state_bytes(setup(Dtype::Fp32, Optimizer::Sgd, 1), 1, 7, 5) == 8 * 7 + 6);   // 4*7/5 = 5.6
  CHECK(weight_state_bytes(setup(Dtype::Fp32, Optimizer::Sgd, 2), 2, 7, 5) == 4 * 7 + 12);  // 8*7/5 = 11.2
  CHECK(weight_state_bytes(setup(Dtype::Fp32, Optimizer::Sgd, 3), 3, 7, 5) == 17);
  // One replica: nothing to shard.
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::Adam, 3), 3, 7, 1) == 16 * 7);
  // Without an optimizer only stage 3 shards (the weight).
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::None, 2), 2, 7, 5) == 2 * 7);
  CHECK(weight_state_bytes(setup(Dtype::Bf16, Optimizer::None, 3), 3, 7, 5) == 3);
}

TEST_CASE("memory tables under ZeRO and recomputation: a residual block by hand") {
  Graph graph = test::graph_from_json(kResidual, "residual.json");
  REQUIRE(graph.vertices.size() == 5);
  const CostTables tables = build_cost_tables(graph, four_devices());
  // Data parallel over 4: fc (b, n, k) = (4, 1, 1), elementwise (4, 1).
  const std::vector<int32_t> dp = choice_of(tables, {{4, 1, 1}, {4, 1}, {4, 1}, {4, 1}, {4, 1, 1}});
  // Weights: fc1 [4, 6] t = 24, fc2 [3, 4] t = 12, each on r = 4 replicas.
  // Activations (bf16, 2 bytes): fc1 x 8*6/4 = 12 + out 8*4/4 = 8; a, b, res
  // out 8 each; fc2 out 8*3/4 = 6: 50 elements.
  SUBCASE("ZeRO stages, bf16 and adam") {
    CHECK(plan_memory(build_memory_tables(graph, tables, setup(Dtype::Bf16, Optimizer::Adam, 0)), dp).weights ==
          16 * 36);
    // Stage 1: 4t + 12t/4 = 7t per weight; stage 2: 2t + 14t/4 = 5.5t; stage 3: 16t/4 = 4t.
    CHECK(plan_memory(build_memory_tables(graph, tables, setup(Dtype::Bf16, Optimizer::Adam, 1)), dp).weights ==
          7 * 36);
    CHECK(plan_memory(build_memory_tables(graph, tables, setup(Dtype::Bf16, Optimizer::Adam, 2)), dp).weights ==
          11 * 18);
    CHECK(plan_memory(build_memory_tables(graph, tables, setup(Dtype::Bf16, Optimizer::Adam, 3)), dp).weights ==
          4 * 36);
    CHECK(plan_memory(build_memory_tables(graph, tables, setup(Dtype::Bf16, Optimizer::Adam, 3)), dp).activations ==
          2 * 50);
  }
  SUBCASE("a split weight has fewer replicas: fc1 (1, 2, 2) holds t = 6 on r = 1") {
    const std::vector<int32_t> tp = choice_of(tables, {{1, 2, 2}, {4, 1}, {4, 1}, {4, 1}, {4, 1, 1}});
    // fc1: 16 * 6 (unsharded); fc2: 4 * 12 (stage 3 over 4).
    CHECK(plan_memory(build_memory_tables(graph, tables, setup(Dtype::Bf16, Optimizer::Adam, 3)), tp).weights ==
          16 * 6 + 4 * 12);
  }
  SUBCASE("full recomputation: a and b recompute, their outputs are not kept") {
    CHECK(block_boundaries(graph) == std::vector<char>{1, 0, 0, 1, 1});
    set_full_recompute(graph, true);
    CHECK(graph.vertices[1].recompute);
    CHECK_FALSE(graph.vertices[3].recompute);
    const CostTables recomputed = build_cost_tables(graph, four_devices());
    CHECK(plan_memory(build_memory_tables(graph, recomputed, setup(Dtype::Bf16, Optimizer::Adam, 0)), dp).activations ==
          2 * (50 - 16));
  }
}

TEST_CASE("the pase model: micro-batches, ZeRO and recomputation of one fc, by hand") {
  Graph graph = test::graph_from_json(kResidual, "residual.json");
  Machine machine = four_devices();
  const double r = machine.word_cost();
  VertexModel fc1 = build_vertex_model(graph.vertices[0]);
  // (b, n, k) = (2, 2, 1): m = 4, n = 2, k = 6. Compute 3*4*2*6 = 144;
  // input-gradient all-reduce of 4*6 words over 2: r*(24/2)*2*1 = 24r;
  // weight-gradient all-reduce of 2*6 words over 2: 12r (half: 6r).
  const int32_t c[3] = {2, 2, 1};
  CHECK(PaseCostModel(machine).layer(fc1, c) == doctest::Approx(144 + 24 * r + 12 * r));
  // Four micro-batches: per micro-batch work and activation collectives, the weight's gradient once.
  CHECK(PaseCostModel(machine, setup(Dtype::Fp32, Optimizer::Adam, 0, 4)).layer(fc1, c) ==
        doctest::Approx(4 * (144 + 24 * r) + 12 * r));
  // ZeRO-1: reduce-scatter and all-gather, each half the ring: the same as stage 0.
  CHECK(PaseCostModel(machine, setup(Dtype::Fp32, Optimizer::Adam, 1, 4)).layer(fc1, c) ==
        doctest::Approx(4 * (144 + 24 * r) + 12 * r));
  // ZeRO-2: the reduce-scatter per micro-batch, the all-gather once.
  CHECK(PaseCostModel(machine, setup(Dtype::Fp32, Optimizer::Adam, 2, 4)).layer(fc1, c) ==
        doctest::Approx(4 * (144 + 24 * r + 6 * r) + 6 * r));
  // ZeRO-3: per micro-batch the reduce-scatter and two gathers of the weight.
  CHECK(PaseCostModel(machine, setup(Dtype::Fp32, Optimizer::Adam, 3, 4)).layer(fc1, c) ==
        doctest::Approx(4 * (144 + 24 * r + 6 * r + 12 * r)));
  SUBCASE("recomputation: a third of the compute and the output all-reduce, again") {
    // (1, 2, 2): m = 8, n = 2, k = 3; compute 144; output all-reduce of 8*2 words over 2: 16r;
    // weight-gradient all-reduce (over 1) and input-gradient all-reduce (over 2: 8*3 words, 24r).
    const int32_t split_k[3] = {1, 2, 2};
    const double plain = 144 + 16 * r + 24 * r;
    CHECK(PaseCostModel(machine).layer(fc1, split_k) == doctest::Approx(plain));
    fc1.recompute = true;
    CHECK(PaseCostModel(machine).layer(fc1, split_k) == doctest::Approx(plain + 48 + 16 * r));
    // With two micro-batches the forward is recomputed in each.
    const CostTerms terms = PaseCostModel(machine, setup(Dtype::Fp32, Optimizer::Adam, 0, 2)).layer_terms(fc1, split_k);
    REQUIRE_FALSE(terms.empty());
    CHECK(terms.back().what == "recomputed forward");
    CHECK(terms.back().cost == doctest::Approx(2 * (48 + 16 * r)));
  }
}

TEST_CASE("the pase model is linear in the batch: M micro-batches of B/M cost what one batch of B does") {
  // Every layer's work and activation collectives scale with the batch, the
  // weight gradients do not and are paid once: the same optimum.
  const std::string graph_path = test::source_path("data/graphs/transformer.json");
  const test::CommandResult whole = test::run_pase("solve " + graph_path + " --devices 8 --json --no-plan");
  const test::CommandResult micro =
      test::run_pase("solve " + graph_path + " --devices 8 --json --no-plan --micro-batches 4");
  REQUIRE(whole.status == 0);
  REQUIRE(micro.status == 0);
  const double a = nlohmann::json::parse(whole.output)["total_cost"].get<double>();
  const double b = nlohmann::json::parse(micro.output)["total_cost"].get<double>();
  CHECK(b == doctest::Approx(a).epsilon(1e-9));
}

TEST_CASE("the calibrated model: micro-batch terms scale, step terms do not; ZeRO's collectives and update") {
  MachineProfile profile = parse_machine_profile(test::kTestMachineProfile, "m.json");
  Graph graph = test::graph_from_json(kResidual, "residual.json");
  const VertexModel fc1 = build_vertex_model(graph.vertices[0]);
  const int32_t c[3] = {2, 2, 1};
  CalibratedOptions one, four;
  one.training = setup(Dtype::Fp32, Optimizer::Adam, 0, 1);
  four.training = setup(Dtype::Fp32, Optimizer::Adam, 0, 4);
  const CalibratedCostModel m1(profile, 4, one), m4(profile, 4, four);
  double step = 0;
  for (const CostTerm& term : m1.layer_terms(fc1, c))
    if (term.phase == CostPhase::Step) step += term.cost;
  CHECK(step > 0);  // the weight gradient's all-reduce and the update
  CHECK(m4.layer(fc1, c) == doctest::Approx(4 * (m1.layer(fc1, c) - step) + step).epsilon(1e-12));
  const Shape tensor = {8, 4};
  const int64_t a[2] = {2, 1}, b[2] = {1, 2};
  CHECK(m4.redistribution(tensor, a, b) == doctest::Approx(4 * m1.redistribution(tensor, a, b)).epsilon(1e-12));
  SUBCASE("ZeRO-1: the update of the shard of r = 2 replicas, a reduce-scatter, and an all-gather after it") {
    CalibratedOptions zero1 = one;
    zero1.training.zero = 1;
    const CalibratedCostModel z(profile, 4, zero1);
    bool gather = false, scatter = false;
    for (const CostTerm& term : z.layer_terms(fc1, c)) {
      if (term.what == "optimizer update") CHECK(term.cost == doctest::Approx(z.update_seconds(2 * 6 / 2.0)));
      gather = gather || term.what == "updated-weight all-gather";
      scatter = scatter || term.what == "weight-gradient reduce-scatter (not hidden by backward)";
    }
    CHECK(gather);
    CHECK(scatter);
  }
}

TEST_CASE("fused attention: the scores einsum and softmax are found; priced as one kernel") {
  Graph graph = test::graph_from_json(R"({"format": "pase-graph", "version": 1, "name": "attention",
   "tensors": {"q": [2, 4, 64, 16], "k": [2, 4, 64, 16], "v": [2, 4, 64, 16]},
   "nodes": [{"name": "qs", "op": "elementwise", "inputs": ["q"]},
             {"name": "ks", "op": "elementwise", "inputs": ["k"]},
             {"name": "logits", "op": "einsum", "inputs": ["qs", "ks"], "equation": "bhlk,bhmk->bhlm"},
             {"name": "softmax", "op": "softmax", "inputs": ["logits"], "axis": 3},
             {"name": "context", "op": "einsum", "inputs": ["softmax", "v"], "equation": "bhlm,bhmk->bhlk"}]})");
  CHECK(attention_scores(graph) == std::vector<char>{0, 0, 1, 1, 0});
  set_fused_attention(graph, true);
  MachineProfile profile = parse_machine_profile(test::kTestMachineProfile, "m.json");
  const CalibratedCostModel model(profile, 4);
  const int32_t softmax_config[4] = {2, 1, 1, 1};
  for (const CostTerm& term : model.layer_terms(build_vertex_model(graph.vertices[3]), softmax_config))
    if (term.kind == CostTermKind::Compute) CHECK(term.cost == 0.0);  // no kernel, no traffic of its own
  const VertexModel logits = build_vertex_model(graph.vertices[2]);
  const int32_t logits_config[5] = {2, 1, 1, 1, 1};
  const CostTerms terms = model.layer_terms(logits, logits_config);
  REQUIRE_FALSE(terms.empty());
  CHECK(terms.back().what == "scores recomputed in backward (fused attention)");
  CHECK(terms.back().cost == doctest::Approx(model.gemm_seconds(training_gemms(gemm_shape(logits, logits_config))[0],
                                                                gemm_shape(logits, logits_config).batch)));
  // The memory model keeps neither output.
  const CostTables tables = build_cost_tables(graph, four_devices());
  const MemoryTables memory = build_memory_tables(graph, tables, {});
  for (size_t s = 0; s < tables.configs[2].size(); ++s) CHECK(memory.bytes(2, s) == 0);
  for (size_t s = 0; s < tables.configs[3].size(); ++s) CHECK(memory.bytes(3, s) == 0);
  CHECK(memory.bytes(4, 0) > 0);  // the context's output is kept
}
