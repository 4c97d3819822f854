// Grouped and depthwise conv2d, dilation, broadcasting elementwise, expand
// and the GRU variant of lstm: flop counts and tensor splits worked out by
// hand (r = 5000 FLOP/word: F = 10 TFLOP/s, B = 16 GB/s).
#include <doctest/doctest.h>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "graphs/vertex_model.h"
#include "layer_cost_support.h"
#include "test_support.h"

using namespace pase;
using test::last_layer_cost;
using test::one_layer_graph;
using test::split_of;

TEST_CASE("conv2d: groups") {
  // x (4, 4, 6, 6), filter (8, 2, 3, 3), 2 groups, padding 1 -> (4, 8, 6, 6).
  // Domain bgchwrsn = (4, 2, 2, 6, 6, 3, 3, 4): b, G, C/G, ho, wo, R, S, N/G.
  Graph g = one_layer_graph(R"("x": [4, 4, 6, 6])",
                     R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [8, 2, 3, 3], "groups": 2, "padding": 1})");
  const Vertex& v = g.vertices.back();
  CHECK(v.outputs[0] == Shape{4, 8, 6, 6});
  VertexModel m = build_vertex_model(v);
  CHECK(m.letters == "bgchwrsn");
  CHECK(m.domain == Shape{4, 2, 2, 6, 6, 3, 3, 4});
  CHECK(m.splittable == std::vector<char>{1, 1, 0, 0, 0, 1, 1, 0});
  SUBCASE("the group dim splits the channel dims and the filter's N") {
    std::vector<int32_t> config = {2, 2, 1, 1, 1, 1, 1, 1};
    CHECK(split_of(m.inputs[0], config) == std::vector<int64_t>{2, 2, 1, 1});
    CHECK(split_of(m.outputs[0], config) == std::vector<int64_t>{2, 2, 1, 1});
    CHECK(split_of(m.weights[0].split, config) == std::vector<int64_t>{2, 1, 1, 1});
    // Bpp = G/cg = 1 GEMM; m = 4·6·6/2 = 72 (cm 2), n = 4, k = 2·3·3 = 18:
    // 3mnk = 15552; the filter gradient all-reduce AR(nk = 72, 2) = r·36·2 = 360000.
    CHECK(last_layer_cost(g, config) == 375552.0);
  }
  SUBCASE("unsplit: two GEMMs") {
    // Bpp = 2; m = 144, n = 4, k = 18: 2 · 3 · 144 · 4 · 18 = 62208, no all-reduce.
    CHECK(last_layer_cost(g, {1, 1, 1, 1, 1, 1, 1, 1}) == 62208.0);
  }
  SUBCASE("channels within a group are never split") {
    CHECK(last_layer_cost(g, {1, 1, 2, 1, 1, 1, 1, 1}) == -1);
    CHECK(last_layer_cost(g, {1, 1, 1, 1, 1, 1, 1, 2}) == -1);
  }
}

TEST_CASE("conv2d: depthwise and groups = 1") {
  SUBCASE("depthwise: groups = channels") {
    // x (2, 4, 6, 6), filter (4, 1, 3, 3), 4 groups: domain (2, 4, 1, 6, 6, 3, 3, 1);
    // config g split 4: Bpp 1, m = 2·6·6 = 72, n = 1, k = 9: 3·72·9 = 1944.
    Graph g = one_layer_graph(R"("x": [2, 4, 6, 6])",
                       R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [4, 1, 3, 3], "groups": 4, "padding": 1})");
    CHECK(build_vertex_model(g.vertices.back()).domain == Shape{2, 4, 1, 6, 6, 3, 3, 1});
    CHECK(last_layer_cost(g, {1, 4, 1, 1, 1, 1, 1, 1}) == 1944.0);
  }
  SUBCASE("groups 1 keeps the bchwrsn domain") {
    Graph g = one_layer_graph(R"("x": [4, 2, 6, 6])",
                       R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [8, 2, 3, 3], "groups": 1, "padding": 1})");
    CHECK(build_vertex_model(g.vertices.back()).letters == "bchwrsn");
  }
  SUBCASE("bad groups") {
    CHECK_THROWS_WITH_AS(
        one_layer_graph(R"("x": [2, 4, 6, 6])", R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [4, 1, 3, 3], "groups": 3})"),
        doctest::Contains("node 'c': field 'groups': expected a divisor of the input channels (4) and of the filters (4), got 3"),
        InputError);
    CHECK_THROWS_WITH_AS(
        one_layer_graph(R"("x": [2, 4, 6, 6])", R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [4, 2, 3, 3], "groups": 4})"),
        doctest::Contains("node 'c': field 'filter': shape mismatch: filter has 2 input channels but 'x' has 4 (shape [2, 4, 6, 6]) "
                          "in 4 groups"),
        InputError);
  }
}

TEST_CASE("conv2d: dilation") {
  // A 3x3 filter with taps 2 apart reaches 5: 7 − 5 + 1 = 3; the work is still 9 taps:
  // domain (1, 1, 3, 3, 3, 3, 1), m = 9, n = 1, k = 9: 3·9·9 = 243.
  Graph g = one_layer_graph(R"("x": [1, 1, 7, 7])",
                     R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [1, 1, 3, 3], "dilation": 2})");
  CHECK(g.vertices.back().outputs[0] == Shape{1, 1, 3, 3});
  CHECK(last_layer_cost(g, {1, 1, 1, 1, 1, 1, 1}) == 243.0);
  CHECK_THROWS_WITH_AS(
      one_layer_graph(R"("x": [1, 1, 7, 7])", R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [1, 1, 3, 3], "dilation": 4})"),
      doctest::Contains("node 'c': field 'filter'"), InputError);
}

TEST_CASE("elementwise: numpy broadcasting") {
  // a (4, 3, 6) · b (3, 1) -> (4, 3, 6); b's 3 lines up with the output's dim 1,
  // its 1 is broadcast along dim 2 (never split).
  Graph g = one_layer_graph(R"("a": [4, 3, 6], "b": [3, 1])", R"({"name": "e", "op": "elementwise", "inputs": ["a", "b"]})");
  const Vertex& v = g.vertices.back();
  CHECK(v.outputs[0] == Shape{4, 3, 6});
  VertexModel m = build_vertex_model(v);
  std::vector<int32_t> config = {2, 3, 2};
  CHECK(split_of(m.inputs[0], config) == std::vector<int64_t>{2, 3, 2});
  CHECK(split_of(m.inputs[1], config) == std::vector<int64_t>{3, 1});
  // (1 + 0) · (4/2)(3/3)(6/2) = 6
  CHECK(last_layer_cost(g, config, /*devices=*/16) == 6.0);
  SUBCASE("a squeeze-excitation scale [b, c, 1, 1]") {
    Graph se = one_layer_graph(R"("s": [2, 4, 1, 1], "x": [2, 4, 6, 6])",
                        R"({"name": "e", "op": "elementwise", "inputs": ["s", "x"], "pointwise": 1})");
    CHECK(se.vertices.back().outputs[0] == Shape{2, 4, 6, 6});
    // (1 + 1) · 1·4·3·6 = 144 with config (2, 1, 2, 1)
    CHECK(last_layer_cost(se, {2, 1, 2, 1}) == 144.0);
  }
  SUBCASE("operands that do not broadcast") {
    CHECK_THROWS_WITH_AS(
        one_layer_graph(R"("a": [4, 3], "b": [2, 3])", R"({"name": "e", "op": "elementwise", "inputs": ["a", "b"]})"),
        doctest::Contains("node 'e': field 'inputs[1]': shape mismatch: 'b' is [2, 3] but 'a' is [4, 3] (elementwise operands "
                          "must have the same shape or broadcast)"),
        InputError);
  }
}

TEST_CASE("expand") {
  // x (2, 1, 4) -> (2, 3, 4): x's dim 1 is broadcast, never split; data movement costs 0.
  Graph g = one_layer_graph(R"("x": [2, 1, 4])", R"({"name": "e", "op": "expand", "inputs": ["x"], "shape": [2, 3, 4]})");
  VertexModel m = build_vertex_model(g.vertices.back());
  CHECK(split_of(m.inputs[0], {2, 3, 1}) == std::vector<int64_t>{2, 1, 1});
  CHECK(split_of(m.outputs[0], {2, 3, 1}) == std::vector<int64_t>{2, 3, 1});
  CHECK(last_layer_cost(g, {2, 3, 1}) == 0.0);
  CHECK_THROWS_WITH_AS(one_layer_graph(R"("x": [2, 2, 4])", R"({"name": "e", "op": "expand", "inputs": ["x"], "shape": [2, 3, 4]})"),
                       doctest::Contains("node 'e': field 'shape': cannot broadcast 'x' [2, 2, 4] to [2, 3, 4]"), InputError);
}

TEST_CASE("lstm: gates (GRU = 3)") {
  // As layer_cost_test's lstm with 3 gate blocks: domain (L,s,b,n,k) = (2,3,2,4,4),
  // config (2,1,1,2,1): m = 6, n = 3·4/2 = 6 (cn 2), k = 8; 3mnk = 864;
  // 3·3·mn = 324; AR(mk = 48, 2) = 240000; the state exchange L·s·r·4 = 120000.
  Graph g = one_layer_graph(R"("x": [2, 3, 4])", R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": 4, "layers": 2, "gates": 3})");
  CHECK(last_layer_cost(g, {2, 1, 1, 2, 1}) == 361188.0);
  CHECK(build_vertex_model(g.vertices.back()).weights[0].shape == Shape{2, 8, 12});
}

TEST_CASE("slice") {
  // x (4, 6, 8) -> every other entry of axis 1: (4, 3, 8); the axis is never
  // split, the input follows the other dims; data movement costs 0.
  Graph g = one_layer_graph(R"("x": [4, 6, 8])", R"({"name": "s", "op": "slice", "inputs": ["x"], "axis": 1, "shape": [4, 3, 8]})");
  VertexModel m = build_vertex_model(g.vertices.back());
  CHECK(m.domain == Shape{4, 3, 8});
  CHECK(m.splittable == std::vector<char>{1, 0, 1});
  CHECK(split_of(m.inputs[0], {2, 1, 4}) == std::vector<int64_t>{2, 1, 4});
  CHECK(last_layer_cost(g, {2, 1, 4}) == 0.0);
  CHECK_THROWS_WITH_AS(
      one_layer_graph(R"("x": [4, 6, 8])", R"({"name": "s", "op": "slice", "inputs": ["x"], "axis": 1, "shape": [4, 3, 7]})"),
      doctest::Contains("node 's': field 'shape': expected 'x' [4, 6, 8] with axis 1 cut to at most 6, got [4, 3, 7]"),
      InputError);
}

TEST_CASE("topk") {
  // x (8, 6), k 2 along the last axis: values and indices (8, 2); domain (8, 6)
  // with the axis unsplittable; one comparison per element: config (4, 1) -> 2·6 = 12.
  Graph g = one_layer_graph(R"("x": [8, 6])", R"({"name": "t", "op": "topk", "inputs": ["x"], "k": 2})");
  const Vertex& v = g.vertices.back();
  CHECK(v.outputs == std::vector<Shape>{{8, 2}, {8, 2}});
  VertexModel m = build_vertex_model(v);
  CHECK(m.splittable == std::vector<char>{1, 0});
  CHECK(split_of(m.outputs[1], {4, 1}) == std::vector<int64_t>{4, 1});
  CHECK(last_layer_cost(g, {4, 1}) == 12.0);
  CHECK(last_layer_cost(g, {1, 2}) == -1);
  CHECK_THROWS_WITH_AS(one_layer_graph(R"("x": [8, 6])", R"({"name": "t", "op": "topk", "inputs": ["x"], "k": 7})"),
                       doctest::Contains("node 't': field 'k': expected at most the axis' 6 entries of 'x' [8, 6], got 7"),
                       InputError);
}

TEST_CASE("scatter") {
  // The top-2 gates (8, 2) written at their indices into an (8, 4) zero matrix
  // along axis 1: domain (8, 4), axis unsplittable; one operation per output
  // element: config (2, 1) -> 4·4 = 16. The indices follow dim 0 only.
  Graph g = one_layer_graph(R"("i": [8, 2], "u": [8, 2])",
                     R"({"name": "s", "op": "scatter", "inputs": ["i", "u"], "shape": [8, 4], "axis": 1})");
  const Vertex& v = g.vertices.back();
  CHECK(v.outputs[0] == Shape{8, 4});
  VertexModel m = build_vertex_model(v);
  CHECK(split_of(m.inputs[0], {2, 1}) == std::vector<int64_t>{2, 1});
  CHECK(split_of(m.inputs[1], {2, 1}) == std::vector<int64_t>{2, 1});
  CHECK(last_layer_cost(g, {2, 1}) == 16.0);
  SUBCASE("into an activation") {
    Graph d = one_layer_graph(R"("d": [8, 4], "i": [8, 2], "u": [8, 2])",
                       R"({"name": "s", "op": "scatter", "inputs": ["d", "i", "u"], "axis": 1})");
    CHECK(d.vertices.back().outputs[0] == Shape{8, 4});
  }
  CHECK_THROWS_WITH_AS(one_layer_graph(R"("i": [8, 2], "u": [8, 3])",
                                R"({"name": "s", "op": "scatter", "inputs": ["i", "u"], "shape": [8, 4], "axis": 1})"),
                       doctest::Contains("node 's': field 'inputs[1]': shape mismatch: updates 'u' are [8, 3] but indices 'i' are [8, 2]"),
                       InputError);
}
