// The ops a capacity-based MoE router needs (argmax, one_hot, cumsum) and
// scatter_nd: domains, tensor splits and layer costs worked out by hand
// (cutoff 1; tests/costmodel/contraction_test.cc has the router's contractions).
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

TEST_CASE("one_hot") {
  Graph g = one_layer_graph(R"("ids": [8, 3])", R"({"name": "h", "op": "one_hot", "inputs": ["ids"], "depth": 4})");
  CHECK(g.vertices.back().outputs[0] == Shape{8, 3, 4});
  VertexModel m = build_vertex_model(g.vertices.back());
  CHECK(m.splittable == std::vector<char>{1, 1, 1});
  // The depth axis may be split too: each device writes the ones of its block. e = 4 · 3 · 1 = 12.
  CHECK(split_of(m.inputs[0], {2, 1, 4}) == std::vector<int64_t>{2, 1});
  CHECK(last_layer_cost(g, {2, 1, 4}) == 12.0);
  SUBCASE("axis 0: the new axis leads") {
    Graph first = one_layer_graph(R"("ids": [8, 3])", R"({"name": "h", "op": "one_hot", "inputs": ["ids"], "depth": 4, "axis": 0})");
    CHECK(first.vertices.back().outputs[0] == Shape{4, 8, 3});
    VertexModel lead = build_vertex_model(first.vertices.back());
    CHECK(split_of(lead.inputs[0], {2, 4, 1}) == std::vector<int64_t>{4, 1});
  }
}

TEST_CASE("cumsum") {
  Graph g = one_layer_graph(R"("x": [8, 6])", R"({"name": "q", "op": "cumsum", "inputs": ["x"], "axis": 0})");
  CHECK(g.vertices.back().outputs[0] == Shape{8, 6});
  // The scanned axis is never split.
  CHECK(last_layer_cost(g, {2, 1}) == -1);
  CHECK(last_layer_cost(g, {1, 3}) == 8.0 * 2.0);
}

TEST_CASE("argmax") {
  Graph g = one_layer_graph(R"("x": [8, 6])", R"({"name": "a", "op": "argmax", "inputs": ["x"], "axis": 1})");
  CHECK(g.vertices.back().outputs[0] == Shape{8});
  VertexModel m = build_vertex_model(g.vertices.back());
  CHECK(split_of(m.outputs[0], {4, 1}) == std::vector<int64_t>{4});
  // One comparison per element of x: 2 · 6 = 12; the axis is never split.
  CHECK(last_layer_cost(g, {4, 1}) == 12.0);
  CHECK(last_layer_cost(g, {1, 2}) == -1);
  Graph kept = one_layer_graph(R"("x": [8, 6])", R"({"name": "a", "op": "argmax", "inputs": ["x"], "axis": -1, "keepdims": true})");
  CHECK(kept.vertices.back().outputs[0] == Shape{8, 1});
}

TEST_CASE("scatter_nd") {
  // data [4, 6, 8], 3 indices of k = 1 coordinate, updates [3, 6, 8]: rows of data replaced.
  Graph g = one_layer_graph(R"("data": [4, 6, 8], "idx": [3, 1], "upd": [3, 6, 8])",
                     R"({"name": "s", "op": "scatter_nd", "inputs": ["data", "idx", "upd"]})");
  CHECK(g.vertices.back().outputs[0] == Shape{4, 6, 8});
  VertexModel m = build_vertex_model(g.vertices.back());
  CHECK(m.splittable == std::vector<char>{0, 1, 1});
  const std::vector<int32_t> config = {1, 2, 4};
  CHECK(split_of(m.inputs[0], config) == std::vector<int64_t>{1, 2, 4});
  CHECK(split_of(m.inputs[1], config) == std::vector<int64_t>{1, 1});
  CHECK(split_of(m.inputs[2], config) == std::vector<int64_t>{1, 2, 4});
  // e = 4 · 3 · 2 = 24; the addressed dimension is never split.
  CHECK(last_layer_cost(g, config) == 24.0);
  CHECK(last_layer_cost(g, {2, 1, 1}) == -1);
  SUBCASE("indices of two coordinates: updates keep data's last dimension") {
    Graph two = one_layer_graph(R"("data": [4, 6, 8], "idx": [5, 2], "upd": [5, 8])",
                         R"({"name": "s", "op": "scatter_nd", "inputs": ["data", "idx", "upd"]})");
    VertexModel m2 = build_vertex_model(two.vertices.back());
    CHECK(m2.splittable == std::vector<char>{0, 0, 1});
    CHECK(split_of(m2.inputs[2], {1, 1, 8}) == std::vector<int64_t>{1, 8});
  }
  SUBCASE("updates of the wrong shape") {
    CHECK_THROWS_WITH_AS(one_layer_graph(R"("data": [4, 6, 8], "idx": [3, 1], "upd": [3, 6, 7])",
                                  R"({"name": "s", "op": "scatter_nd", "inputs": ["data", "idx", "upd"]})"),
                         doctest::Contains("node 's': field 'inputs[2]': shape mismatch: updates 'upd' are [3, 6, 7] but "
                                           "indices [3, 1] into data [4, 6, 8] need [3, 6, 8]"),
                         InputError);
    CHECK_THROWS_WITH_AS(one_layer_graph(R"("data": [4, 6], "idx": [3, 3], "upd": [3])",
                                  R"({"name": "s", "op": "scatter_nd", "inputs": ["data", "idx", "upd"]})"),
                         doctest::Contains("node 's': field 'inputs[1]': indices 'idx' [3, 3] must end in a count of 1 to 2 "
                                           "coordinates into data 'data' [4, 6]"),
                         InputError);
  }
}
