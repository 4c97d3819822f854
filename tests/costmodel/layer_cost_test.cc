// Layer and edge costs on small cases computed by hand (r = 5000 FLOP/word:
// F = 10 TFLOP/s, B = 16 GB/s), and configuration enumeration.
#include <doctest/doctest.h>

#include <set>

#include "costmodel/configs.h"
#include "costmodel/cost_tables.h"
#include "costmodel/costs.h"
#include "costmodel/model_key.h"
#include "costmodel/cost_model.h"
#include "graphs/vertex_model.h"
#include "graphs/zoo.h"
#include "layer_cost_support.h"
#include "test_support.h"

using namespace pase;

namespace {

const double r = 5000.0;

// Cost of `node` (the graph's last vertex) under `config`, with cutoff 1 unless given.
double cost_of(const std::string& tensors, const std::string& node, std::vector<int32_t> config, int64_t devices = 8) {
  double cost = test::last_layer_cost(test::one_layer_graph(tensors, node), config, devices);
  if (cost < 0) FAIL("configuration is not valid");
  return cost;
}

}  // namespace

TEST_CASE("all_reduce") {
  CHECK(all_reduce(100, 4, r) == 5000.0 * 25 * 2 * 3);
  CHECK(all_reduce(100, 1, r) == 0.0);
}

TEST_CASE("redistribution_cost") {
  Shape t = {8, 8};
  SUBCASE("same split costs nothing") {
    int64_t a[] = {2, 4}, b[] = {2, 4};
    CHECK(redistribution_cost(t, a, b, r) == 0.0);
  }
  SUBCASE("row split to column split") {
    // need = 8*4 = 32; prod b = 2 <= prod a = 2: overlap = min(4,8)*min(8,4) = 16; E = 2r*16
    int64_t a[] = {2, 1}, b[] = {1, 2};
    CHECK(redistribution_cost(t, a, b, r) == 2 * r * 16);
  }
  SUBCASE("consumer uses more devices: no overlap") {
    // need = 4*4 = 16; prod b = 4 > prod a = 1: overlap 0
    int64_t a[] = {1, 1}, b[] = {2, 2};
    CHECK(redistribution_cost(t, a, b, r) == 2 * r * 16);
  }
  SUBCASE("partial overlap") {
    // need = 2*8 = 16; prod b = 4 <= prod a = 4: overlap = min(4,2)*min(4,8) = 8
    int64_t a[] = {2, 2}, b[] = {4, 1};
    CHECK(redistribution_cost(t, a, b, r) == 2 * r * 8);
  }
  SUBCASE("coarser consumer split fetches the rest") {
    // need = 4*8 = 32; overlap = 2*8 = 16
    int64_t a[] = {4, 1}, b[] = {2, 1};
    CHECK(redistribution_cost(t, a, b, r) == 2 * r * 16);
  }
}

TEST_CASE("layer_cost: fc") {
  // x (8,16), 4 units, config (b,n,k) = (2,1,2): m = 4, n = 4, k = 8, cm = 2, ck = 2
  // 3mnk = 384; AR(mn=16, 2) = 80000; AR(mk, 1) = 0; AR(nk=32, 2) = 160000
  CHECK(cost_of(R"("x": [8, 16])", R"({"name": "f", "op": "fc", "inputs": ["x"], "units": 4})", {2, 1, 2}) == 240384.0);
  // pointwise 1 adds 3*pw*m*n = 48
  CHECK(cost_of(R"("x": [8, 16])", R"({"name": "f", "op": "fc", "inputs": ["x"], "units": 4, "pointwise": 1})", {2, 1, 2}) ==
        240432.0);
}

TEST_CASE("layer_cost: conv2d") {
  // x (4,2,6,6), filter (8,2,3,3) pad 1, pw 1; domain (b,c,ho,wo,R,S,N) = (4,2,6,6,3,3,8); config (2,1,1,1,1,1,2)
  // m = 4*6*6/2 = 72 (cm 2), n = 4 (cn 2), k = 18 (ck 1)
  // 3mnk = 15552; 3*pw*mn = 864; AR(mk=1296, 2) = 6480000; AR(nk=72, 2) = 360000
  CHECK(cost_of(R"("x": [4, 2, 6, 6])",
                R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [8, 2, 3, 3], "padding": 1, "pointwise": 1})",
                {2, 1, 1, 1, 1, 1, 2}) == 6856416.0);
}

TEST_CASE("layer_cost: pool2d with halo on the input extents") {
  // x (4,2,8,8), window 2 stride 2 -> (4,2,4,4); config (1,2,2,1): elements 4*1*2*4 = 32
  // halo = r * (4*1) * [(8/2 + 2)(8/1) - (8/2)(8/1)] = 5000*4*16 = 320000
  CHECK(cost_of(R"("x": [4, 2, 8, 8])", R"({"name": "p", "op": "pool2d", "inputs": ["x"], "window": 2, "stride": 2})",
                {1, 2, 2, 1}) == 320032.0);
}

TEST_CASE("layer_cost: elementwise, norm, batchnorm, softmax, softmax_xent, reduce_mean") {
  const std::string x = R"("x": [4, 8])";
  // (1 + pw) * e = 3 * (2*2)
  CHECK(cost_of(R"("x": [4, 6])", R"({"name": "e", "op": "elementwise", "inputs": ["x"], "pointwise": 2})", {2, 3}) == 12.0);
  // norm axis 1, config (2,4): e = 4, x_ax = 2; 16e = 64; 4 AR(2, 4) = 60000; 4 AR(2, 2) = 40000
  CHECK(cost_of(x, R"({"name": "n", "op": "norm", "inputs": ["x"]})", {2, 4}) == 100064.0);
  // rmsnorm axis 1, config (2,4): e = 4, x_ax = 2; 12e = 48; 2 AR(2, 4) = 30000; 2 AR(2, 2) = 20000
  CHECK(cost_of(x, R"({"name": "n", "op": "rmsnorm", "inputs": ["x"]})", {2, 4}) == 50048.0);
  // rmsnorm axis 0, config (4,1): e = 8, x_ax = 1; 96 + 2 AR(8, 4) = 120000 + 2 AR(1, 1) = 0
  CHECK(cost_of(x, R"({"name": "n", "op": "rmsnorm", "inputs": ["x"], "axis": 0})", {4, 1}) == 120096.0);
  // batchnorm = norm on axis 0, config (4,2): e = 4, x_ax = 1; 64 + 4 AR(4, 4) = 120000 + 4 AR(1, 2) = 20000
  CHECK(cost_of(x, R"({"name": "n", "op": "batchnorm", "inputs": ["x"]})", {4, 2}) == 140064.0);
  // a ReLU after it (pointwise 1): the paper's formula has no pointwise term, only the calibrated model prices it
  CHECK(cost_of(x, R"({"name": "n", "op": "batchnorm", "inputs": ["x"], "pointwise": 1})", {4, 2}) == 140064.0);
  CHECK(cost_of(x, R"({"name": "n", "op": "norm", "inputs": ["x"], "pointwise": 2})", {2, 4}) == 100064.0);
  // softmax axis 1, config (2,2): e = 8, f = 2, d_ax = 8; 32 + 64 + 2 AR(2, 2) = 20000 + AR(16, 2) = 80000
  CHECK(cost_of(x, R"({"name": "s", "op": "softmax", "inputs": ["x"]})", {2, 2}) == 100096.0);
  // dropout on the probabilities (pointwise 1): likewise not in the paper's price
  CHECK(cost_of(x, R"({"name": "s", "op": "softmax", "inputs": ["x"], "pointwise": 1})", {2, 2}) == 100096.0);
  // softmax_xent, config (2,2): e = 8, beta = 2; 32 + 4 + 2 r beta = 20000
  CHECK(cost_of(x, R"({"name": "l", "op": "softmax_xent", "inputs": ["x"]})", {2, 2}) == 20036.0);
  CHECK(cost_of(x, R"({"name": "l", "op": "softmax_xent", "inputs": ["x"]})", {2, 1}) == 68.0);
  // reduce_mean axis 1, config (2,4): AR(prod x = 4, 4) = 30000
  CHECK(cost_of(x, R"({"name": "m", "op": "reduce_mean", "inputs": ["x"], "axes": [1]})", {2, 4}) == 30000.0);
}

TEST_CASE("layer_cost: einsum, embedding, lstm") {
  // bhlk,bhmk->bhlm, domain (b,h,l,m,k) = (2,2,4,4,8), config (1,2,2,1,2)
  // Bpp = 2*1 = 2; m = 2 (cm 2), n = 4 (cn 1), k = 4 (ck 2); 2 * (96 + AR(8,2) = 40000 + AR(16,2) = 80000)
  CHECK(cost_of(R"("q": [2, 2, 4, 8], "k": [2, 2, 4, 8])",
                R"({"name": "a", "op": "einsum", "equation": "bhlk,bhmk->bhlm", "inputs": ["q", "k"]})",
                {1, 2, 2, 1, 2}) == 240192.0);
  // embedding: abc,cd->abd, domain (a,b,d,c) = (2,4,4,8), config (1,2,2,1)
  // m = 4 (cm 2), n = 2 (cn 2), k = 8 (ck 1); 192 + AR(mk=32, 2) = 160000 + AR(nk=16, 2) = 80000
  CHECK(cost_of(R"("ids": [2, 4])", R"({"name": "e", "op": "embedding", "inputs": ["ids"], "vocab": 8, "dim": 4})",
                {1, 2, 2, 1}) == 240192.0);
  // lstm: domain (L,s,b,n,k) = (2,3,2,4,4), config (2,1,1,2,1)
  // Bpp = 1; m = 6, n = 16/2 = 8 (cn 2), k = 8; 3mnk = 1152; 3*3*mn = 432; AR(mk=48, 2) = 240000
  // state (2,4) held (1,2) needed (1,1): need 8, overlap 2*2 = 4; L*s*r*4 = 120000
  CHECK(cost_of(R"("x": [2, 3, 4])", R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": 4, "layers": 2})",
                {2, 1, 1, 2, 1}) == 361584.0);
}

TEST_CASE("allowed_splits") {
  CHECK(allowed_splits(12, 2, 8, true) == std::vector<int32_t>{1, 2, 3, 4, 6});
  CHECK(allowed_splits(12, 2, 4, true) == std::vector<int32_t>{1, 2, 3, 4});
  CHECK(allowed_splits(3, 4, 8, true) == std::vector<int32_t>{1});  // none meets the cutoff
  CHECK(allowed_splits(64, 4, 64, true) == std::vector<int32_t>{1, 2, 4, 8, 16});
  CHECK(allowed_splits(64, 4, 64, false) == std::vector<int32_t>{1});
}

TEST_CASE("enumerate_configs") {
  auto tuples = [](const ConfigSet& set) {
    std::vector<std::vector<int32_t>> out;
    for (size_t s = 0; s < set.size(); ++s) out.emplace_back(set[s], set[s] + set.rank);
    return out;
  };
  SUBCASE("lexicographic, product at most p") {
    VertexModel model;
    model.domain = {4, 6};
    model.splittable = {1, 1};
    std::vector<std::vector<int32_t>> correct = {{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {4, 1}};
    CHECK(tuples(enumerate_configs(model, 1, 4, 1000, "v")) == correct);
  }
  SUBCASE("contiguous only (reshape halves)") {
    VertexModel model;
    model.domain = {2, 4, 3};
    model.splittable = {1, 1, 1};
    model.contiguous_only = true;
    // (1,2,1) is not contiguous: with dim 0 whole, splitting dim 1 gives strided blocks.
    std::vector<std::vector<int32_t>> correct = {{1, 1, 1}, {2, 1, 1}, {2, 2, 1}, {2, 4, 1}};
    CHECK(tuples(enumerate_configs(model, 1, 8, 1000, "v")) == correct);
  }
  SUBCASE("too many configurations is refused with the vertex name") {
    VertexModel model;
    model.domain = {64, 64, 64};
    model.splittable = {1, 1, 1};
    CHECK_THROWS_WITH((void)enumerate_configs(model, 1, 64, 10, "big"),
                      "vertex 'big' has more than 10 configurations at 64 devices (the configuration limit); a larger cutoff gives "
                      "it fewer");
  }
  SUBCASE("the conv's output height and width are never split") {
    Graph graph = test::graph_from_json(
        R"({"format": "pase-graph", "version": 1, "cutoff": 1, "tensors": {"x": [4, 2, 8, 8]},
            "nodes": [{"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [4, 2, 1, 1]}]})");
    Machine machine;
    machine.devices = 4;
    CostTables tables = build_cost_tables(graph, machine);
    for (const auto& config : tuples(tables.configs[0])) CHECK((config[2] == 1 && config[3] == 1));
  }
}

// Repeated layers are priced once and copied: every copied entry must equal a
// fresh call to the model, on every zoo graph.
TEST_CASE("build_cost_tables: shared prices equal fresh pricing") {
  for (const ZooEntry& entry : zoo_entries()) {
    CAPTURE(entry.name);
    Graph graph = build_graph(build_zoo_graph(entry.name, entry.default_batch), entry.name);
    Machine machine;
    machine.devices = 16;
    PaseCostModel model(machine);
    CostTables tables = build_cost_tables(graph, model);
    size_t shared_vertices = 0;
    for (size_t v = 0; v < graph.vertices.size(); ++v) {
      ConfigSet fresh = enumerate_configs(tables.models[v], graph.vertices[v].cutoff, 16, kDefaultMaxConfigs, "v");
      REQUIRE(fresh.splits == tables.configs[v].splits);
      for (size_t s = 0; s < fresh.size(); ++s)
        REQUIRE(tables.objective.vertex_cost[v][s] == model.layer(tables.models[v], fresh[s]));
      for (size_t w = 0; w < v; ++w)
        if (model_key(tables.models[w]) == model_key(tables.models[v]) &&
            graph.vertices[w].cutoff == graph.vertices[v].cutoff) {
          ++shared_vertices;
          break;
        }
    }
    if (entry.name == "transformer") CHECK(shared_vertices > graph.vertices.size() / 2);
    // Edges priced alike hold one matrix between them, not a copy each.
    std::set<const std::vector<double>*> matrices;
    for (const PairCost& pair : tables.objective.pairs) matrices.insert(pair.cost.get());
    if (entry.name == "transformer") CHECK(matrices.size() * 5 < tables.objective.pairs.size());
    for (size_t e = 0; e < graph.edges.size(); ++e) {
      const TensorEdge& edge = graph.edges[e];
      const PairCost& pair = tables.objective.pairs[e];
      REQUIRE(pair.u == edge.src);
      REQUIRE(pair.v == edge.dst);
      const SplitMap& out = tables.models[edge.src].outputs[edge.src_port];
      const SplitMap& in = tables.models[edge.dst].inputs[edge.dst_port];
      const Shape& tensor = graph.vertices[edge.src].outputs[edge.src_port];
      std::vector<int64_t> a(out.size()), b(in.size());
      for (size_t i = 0; i < tables.configs[edge.src].size(); i += 3) {
        tensor_split(out, tables.configs[edge.src][i], a.data());
        for (size_t j = 0; j < tables.configs[edge.dst].size(); j += 5) {
          tensor_split(in, tables.configs[edge.dst][j], b.data());
          REQUIRE(pair.at(i, j) == model.redistribution(tensor, a.data(), b.data()));
        }
      }
    }
  }
}

TEST_CASE("model_key: equal for equal models, different when one field differs") {
  Graph graph = test::graph_from_json(
      R"({"format": "pase-graph", "version": 1, "cutoff": 1, "tensors": {"x": [8, 16]},
          "nodes": [{"name": "a", "op": "elementwise", "inputs": ["x"]},
                    {"name": "b", "op": "elementwise", "inputs": ["a"]},
                    {"name": "c", "op": "elementwise", "inputs": ["b"], "cutoff": 4},
                    {"name": "d", "op": "softmax", "inputs": ["c"], "axis": 1}]})");
  std::vector<VertexModel> models;
  for (const Vertex& v : graph.vertices) models.push_back(build_vertex_model(v));
  CHECK(model_key(models[0]) == model_key(models[1]));
  CHECK(model_key(models[0]) != model_key(models[3]));
  VertexModel changed = models[0];
  changed.work.pointwise += 1;
  CHECK(model_key(changed) != model_key(models[0]));
  changed = models[0];
  changed.kind = OpKind::Norm;  // same domain and maps, another op's work
  CHECK(model_key(changed) != model_key(models[0]));
  changed = models[0];
  changed.weights.push_back({"weight", {8}, {{0}}});
  CHECK(model_key(changed) != model_key(models[0]));
  changed = models[0];
  changed.splittable[1] = 0;
  CHECK(model_key(changed) != model_key(models[0]));
  changed = models[0];
  changed.inputs[0][0] = {0, 1};
  CHECK(model_key(changed) != model_key(models[0]));
  // Same model, different cutoff: different configurations, so not shared.
  Machine machine;
  machine.devices = 8;
  CostTables tables = build_cost_tables(graph, machine);
  CHECK(model_key(models[1]) == model_key(models[2]));
  CHECK(tables.configs[1].size() > tables.configs[2].size());
}
