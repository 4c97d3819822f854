// Bytes per device of hand-built strategies on a tiny graph, every number
// worked out by hand below from the rule in docs/memory.md (not by the code):
// weights x S, outputs and the data inputs a layer reads x a, tiles
// prod ceil(size / split); the reshape's inner 1-D tensor and unread inputs
// are not counted; a weight read by two layers counts twice.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/byte_size.h"
#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "base/error.h"
#include "strategy/config_lookup.h"
#include "strategy/strategy_file.h"
#include "test_support.h"

using namespace pase;

namespace {

// x, y: data; p: a parameter; unused: read by nobody. fc2 reads fc1's weight
// (tied); add reads y on two ports; r is a reshape (r/ravel, then r).
const char* const kTiny = R"({"format": "pase-graph", "version": 1, "name": "tiny", "cutoff": 1,
 "tensors": {"x": [8, 6], "y": [8, 4], "p": [8, 4], "unused": [3]},
 "parameters": ["p"],
 "nodes": [
  {"name": "fc1", "op": "fc", "inputs": ["x"], "units": 4},
  {"name": "add", "op": "elementwise", "inputs": ["fc1", "y", "y"]},
  {"name": "scale", "op": "elementwise", "inputs": ["add", "p"]},
  {"name": "r", "op": "reshape", "inputs": ["scale"], "shape": [32]},
  {"name": "fc2", "op": "fc", "inputs": ["x"], "units": 4, "weights": ["fc1/weight"]}]})";

struct Tiny {
  Graph graph = test::graph_from_json(kTiny, "tiny.json");
  CostTables tables;
  Tiny() {
    Machine machine;
    machine.devices = 4;
    tables = build_cost_tables(graph, machine);
  }
  // The configuration index of each vertex's split tuple, in vertex order (fc1, add, scale, r/ravel, r, fc2).
  std::vector<int32_t> choice(const std::vector<std::vector<int32_t>>& configs) const {
    std::vector<int32_t> choice;
    for (size_t v = 0; v < configs.size(); ++v) {
      int32_t index = find_config(tables.configs[v], configs[v].data());
      REQUIRE(index >= 0);
      choice.push_back(index);
    }
    return choice;
  }
};

}  // namespace

TEST_CASE("plan_memory: hand-built strategies of a tiny graph") {
  Tiny tiny;
  REQUIRE(tiny.graph.vertices.size() == 6);
  SUBCASE("nothing split, fp32 and adam (S = 16, a = 4)") {
    // weights: fc1/weight 4*6 = 24 (fc1) + 24 again (fc2) + p 8*4 = 32: 80 elements * 16 = 1280.
    // activations: fc1 x 48 + out 32; add out 32 + y 32 (two ports, once);
    // scale out 32 (p is a weight); r/ravel nothing (its 1-D output is a
    // view); r out 32; fc2 x 48 + out 32: 288 elements * 4 = 1152.
    MemoryTables memory = build_memory_tables(tiny.graph, tiny.tables, {});
    PlanMemory bytes = plan_memory(memory, tiny.choice({{1, 1, 1}, {1, 1}, {1, 1}, {1, 1}, {1}, {1, 1, 1}}));
    CHECK(bytes.weights == 1280);
    CHECK(bytes.activations == 1152);
    CHECK(bytes.total() == 2432);
  }
  // fc1 (b,n,k) = (2,1,2): x [8,6] split [2,2] -> 12, out [8,4] split [2,1] -> 16, weight [4,6] split [1,2] -> 12.
  // add (4,1): out 2*4 = 8, y 8.  scale (1,4): out 8*1 = 8, p [8,4] split [1,4] -> 8.
  // r/ravel (4,1): nothing.  r (4): out 8.
  // fc2 (1,2,2): x split [1,2] -> 24, out split [1,2] -> 16, weight split [2,2] -> 6.
  // Weight elements 12 + 8 + 6 = 26; activation elements 28 + 16 + 8 + 0 + 8 + 40 = 100.
  const std::vector<std::vector<int32_t>> split = {{2, 1, 2}, {4, 1}, {1, 4}, {4, 1}, {4}, {1, 2, 2}};
  SUBCASE("split, fp32 and adam") {
    PlanMemory bytes = plan_memory(build_memory_tables(tiny.graph, tiny.tables, {}), tiny.choice(split));
    CHECK(bytes.weights == 26 * 16);
    CHECK(bytes.activations == 100 * 4);
  }
  SUBCASE("split, bf16 and sgd (S = 12, a = 2)") {
    PlanMemory bytes =
        plan_memory(build_memory_tables(tiny.graph, tiny.tables, {Dtype::Bf16, Optimizer::Sgd}), tiny.choice(split));
    CHECK(bytes.weights == 26 * 12);
    CHECK(bytes.activations == 100 * 2);
  }
  SUBCASE("split, fp32 and no optimizer (S = 4)") {
    PlanMemory bytes =
        plan_memory(build_memory_tables(tiny.graph, tiny.tables, {Dtype::Fp32, Optimizer::None}), tiny.choice(split));
    CHECK(bytes.weights == 26 * 4);
    CHECK(bytes.activations == 100 * 4);
  }
  SUBCASE("the strategy file's memory object") {
    MemoryReport report;
    report.bytes = plan_memory(build_memory_tables(tiny.graph, tiny.tables, {}), tiny.choice(split));
    auto document = nlohmann::ordered_json::parse(write_strategy_file(tiny.graph, tiny.tables, tiny.choice(split), 0.0,
                                                              nullptr, nullptr, &report));
    CHECK(document["memory"].dump() ==
          R"({"per_device_bytes":816,"cap_bytes":null,"weights_bytes":416,"activations_bytes":400,"dtype":"fp32",)"
          R"("optimizer":"adam","lower_bound_cost":null,"gap":null})");
  }
}

TEST_CASE("parameter_element_bytes: the table of docs/memory.md") {
  CHECK(parameter_element_bytes({Dtype::Fp32, Optimizer::Adam}) == 16);
  CHECK(parameter_element_bytes({Dtype::Bf16, Optimizer::Adam}) == 16);
  CHECK(parameter_element_bytes({Dtype::Fp32, Optimizer::Sgd}) == 12);
  CHECK(parameter_element_bytes({Dtype::Bf16, Optimizer::Sgd}) == 12);
  CHECK(parameter_element_bytes({Dtype::Fp32, Optimizer::None}) == 4);
  CHECK(parameter_element_bytes({Dtype::Bf16, Optimizer::None}) == 2);
  CHECK(activation_element_bytes({Dtype::Fp32, Optimizer::Adam}) == 4);
  CHECK(activation_element_bytes({Dtype::Bf16, Optimizer::Adam}) == 2);
}

TEST_CASE("tile_elements: XLA's tiles, ceil(size / split) per dimension") {
  const int64_t split[] = {2, 1, 4};
  CHECK(tile_elements({7, 5, 9}, split) == 4 * 5 * 3);
  CHECK(tile_elements({8, 5, 8}, split) == 4 * 5 * 2);
}

TEST_CASE("parse_dtype, parse_optimizer: names as written, anything else refused") {
  CHECK(parse_dtype("bf16") == Dtype::Bf16);
  CHECK(parse_optimizer("none") == Optimizer::None);
  CHECK(parse_dtype("fp16") == Dtype::Fp16);
  CHECK(parse_dtype("tf32") == Dtype::Tf32);
  CHECK_THROWS_WITH_AS((void)parse_dtype("fp8"), "dtype: expected fp32, tf32, bf16 or fp16, got 'fp8'", OptionError);
  CHECK_THROWS_WITH_AS((void)parse_optimizer("Adam"), "optimizer: expected adam, sgd or none, got 'Adam'", OptionError);
}

TEST_CASE("parse_byte_size: units, fractions and strictness") {
  CHECK(parse_byte_size("80GB") == uint64_t{80} * 1000 * 1000 * 1000);
  CHECK(parse_byte_size("16GiB") == uint64_t{16} << 30);
  CHECK(parse_byte_size("512MiB") == uint64_t{512} << 20);
  CHECK(parse_byte_size("512mib") == uint64_t{512} << 20);
  CHECK(parse_byte_size("4096") == 4096);
  CHECK(parse_byte_size("4096B") == 4096);
  CHECK(parse_byte_size("1.5KiB") == 1536);
  CHECK(parse_byte_size("0.3KiB") == 307);  // 307.2: the fraction of a byte dropped
  CHECK(parse_byte_size("18446744073709551615") == ~uint64_t{0});
  // As Kubernetes and Slurm write sizes: G is GB, Gi is GiB.
  CHECK(parse_byte_size("80G") == uint64_t{80} * 1000 * 1000 * 1000);
  CHECK(parse_byte_size("80Gi") == uint64_t{80} << 30);
  CHECK(parse_byte_size("1.5T") == uint64_t{1500} * 1000 * 1000 * 1000);
  CHECK(parse_byte_size("512mi") == uint64_t{512} << 20);
  CHECK(parse_byte_size("2k") == 2000);
  for (const char* bad : {"", "GB", "16 GiB", "16GiBs", "-1", "1e9", "0", "0GB", "1.", ".5GB", "1.1234567GB",
                          "18446744073709551616", "17179869184GiB", "16Gib2", "16Gx", "16iB", "0x10"})
    CHECK_MESSAGE(!parse_byte_size(bad), bad);
}
