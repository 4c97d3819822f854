// The `contraction` extension op (docs/formats.md): einsum's pricing for
// equations with an empty letter group, which the graph format's `einsum`
// refuses. Layer costs worked out by hand from the GEMM formula, an empty
// group read as extent 1 and split 1 (r = 5000 FLOP/word: F = 10 TFLOP/s,
// B = 16 GB/s; cutoff 1; 8 devices): AR(w, q) = r · (w/q) · 2 · (q − 1).
#include <doctest/doctest.h>

#include <stdexcept>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "graphs/einsum.h"
#include "base/error.h"
#include "graphs/graph_file.h"
#include "graphs/vertex_model.h"
#include "layer_cost_support.h"
#include "test_support.h"

using namespace pase;
using test::last_layer_cost;
using test::one_layer_graph;
using test::one_layer_graph_text;

namespace {

constexpr double r = 5000;

std::string contraction(const std::string& equation, const std::string& extra = "") {
  return R"({"name": "c", "op": "contraction", "equation": ")" + equation + R"(", "inputs": ["a", "b"])" + extra + "}";
}

}  // namespace

TEST_CASE("parse_einsum") {
  SUBCASE("the graph format's einsum needs an m- and an n-letter") {
    CHECK_THROWS_WITH_AS((void)parse_einsum("bk,k->b"),
                         "needs at least one letter only in the first operand and one only in the second (a GEMM's m "
                         "and n); got m='b', n=''",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)parse_einsum("te,etd->td"),
                         "needs at least one letter only in the first operand and one only in the second (a GEMM's m "
                         "and n); got m='', n='d'",
                         std::invalid_argument);
    // Without a reduction letter it is still a GEMM with both sides.
    EinsumSpec outer = parse_einsum("se,sc->sec");
    CHECK(outer.reduction == "");
    CHECK(is_gemm_einsum(outer));
  }
  SUBCASE("parse_contraction lets any group be empty") {
    EinsumSpec combine = parse_contraction("te,etd->td");
    CHECK(combine.batch == "t");
    CHECK(combine.m_letters == "");
    CHECK(combine.n_letters == "d");
    CHECK(combine.reduction == "e");
    CHECK(combine.domain == "tde");
    CHECK_FALSE(is_gemm_einsum(combine));
    EinsumSpec dot = parse_contraction("bk,bk->b");
    CHECK(dot.batch == "b");
    CHECK(dot.m_letters == "");
    CHECK(dot.n_letters == "");
    CHECK(dot.reduction == "k");
    // The other rules are einsum's.
    CHECK_THROWS_WITH_AS((void)parse_contraction("bk,kn->b"),
                         "letter 'n' appears in one operand only and not in the output (summing it out alone is not "
                         "supported)",
                         std::invalid_argument);
  }
}

TEST_CASE("contraction: an empty letter group") {
  SUBCASE("no letter only in the first operand: te,etd->td (a MoE combine)") {
    // Domain "tde" = (6, 10, 4): t batch, d n, e reduction, no m.
    Graph g = one_layer_graph(R"("a": [6, 4], "b": [4, 6, 10])", contraction("te,etd->td"));
    CHECK(g.vertices.back().outputs[0] == Shape{6, 10});
    VertexModel m = build_vertex_model(g.vertices.back());
    CHECK(m.letters == "tde");
    CHECK(m.domain == Shape{6, 10, 4});
    // Bpp 6, m 1, n 10, k 4: 6 · 3 · 10 · 4 = 720.
    CHECK(last_layer_cost(g, {1, 1, 1}) == 720.0);
    // (ct, cd, ce) = (1, 2, 2): Bpp 6, n 5, k 2; AR(mn = 5, ck = 2) = 5r, AR(mk = 2, cn = 2) = 2r, no AR(nk, cm = 1):
    // 6 · (30 + 7r).
    CHECK(last_layer_cost(g, {1, 2, 2}) == 6 * (30 + 7 * r));
    // (2, 1, 4): Bpp 3, n 10, k 1; AR(mn = 10, ck = 4) = r · 2.5 · 2 · 3 = 15r, mk = 1 over cn = 1: 3 · (30 + 15r).
    CHECK(last_layer_cost(g, {2, 1, 4}) == 3 * (30 + 15 * r));
    // A fused pointwise op adds 3 · pw · mn: 6 · (3 · 10 · 4 + 3 · 10) = 900.
    Graph fused = one_layer_graph(R"("a": [6, 4], "b": [4, 6, 10])", contraction("te,etd->td", R"(, "pointwise": 1)"));
    CHECK(last_layer_cost(fused, {1, 1, 1}) == 900.0);
  }
  SUBCASE("no letter only in the second operand: bk,k->b (a matrix-vector product)") {
    // Domain "bk" = (8, 6): b m, k reduction; no batch, no n.
    Graph g = one_layer_graph(R"("a": [8, 6], "b": [6])", contraction("bk,k->b"));
    CHECK(g.vertices.back().outputs[0] == Shape{8});
    CHECK(build_vertex_model(g.vertices.back()).letters == "bk");
    // (cb, ck) = (4, 2): m 2, k 3, cm 4, ck 2: 3 · 2 · 3 = 18; AR(mn = 2, ck = 2) = 2r; no AR(mk, cn = 1);
    // the vector's gradient AR(nk = 3, cm = 4) = r · 0.75 · 2 · 3 = 4.5r.
    CHECK(last_layer_cost(g, {4, 2}) == 18 + 6.5 * r);
  }
  SUBCASE("neither: bk,bk->b (a dot product per b)") {
    // Domain "bk" = (8, 6): b batch, k reduction. (2, 2): Bpp 4, k 3: 4 · (3 · 3 + AR(mn = 1, ck = 2) = r).
    Graph g = one_layer_graph(R"("a": [8, 6], "b": [8, 6])", contraction("bk,bk->b"));
    CHECK(last_layer_cost(g, {2, 2}) == 4 * (9 + r));
  }
  SUBCASE("no m letter and no reduction letter: t,td->td (a row scaled per t)") {
    // Domain "td" = (6, 10): t batch, d n. (2, 2): Bpp 3, n 5, cn 2; the vector's gradient AR(mk = 1, cn = 2) = r:
    // 3 · (15 + r).
    Graph g = one_layer_graph(R"("a": [6], "b": [6, 10])", contraction("t,td->td"));
    CHECK(g.vertices.back().outputs[0] == Shape{6, 10});
    CHECK(last_layer_cost(g, {2, 2}) == 3 * (15 + r));
  }
  SUBCASE("batch letters only: ab,ab->ab") {
    Graph g = one_layer_graph(R"("a": [4, 6], "b": [4, 6])", contraction("ab,ab->ab"));
    // Bpp = 2 · 3: 3 · 6 = 18.
    CHECK(last_layer_cost(g, {2, 2}) == 18.0);
    CHECK(last_layer_cost(g, {4, 2}) == 9.0);
  }
}

TEST_CASE("contraction: an equation einsum takes costs what the einsum does") {
  SUBCASE("no reduction letter: se,sc->sec (an outer product per s) is an einsum") {
    const std::string tensors = R"("a": [8, 4], "b": [8, 6])";
    Graph g = one_layer_graph(tensors, R"({"name": "o", "op": "einsum", "equation": "se,sc->sec", "inputs": ["a", "b"]})");
    CHECK(g.vertices.back().outputs[0] == Shape{8, 4, 6});
    CHECK(build_vertex_model(g.vertices.back()).letters == "sec");
    // (cs, ce, cc) = (2, 2, 1): Bpp 4, m 2 (cm 2), n 6, k 1: 3 · 2 · 6 = 36, and the second operand's
    // gradient AR(nk = 6, cm = 2) = r · 3 · 2 = 6r: 4 · (36 + 6r).
    CHECK(last_layer_cost(g, {2, 2, 1}) == 4 * (36 + 6 * r));
    CHECK(last_layer_cost(one_layer_graph(tensors, contraction("se,sc->sec")), {2, 2, 1}) == 4 * (36 + 6 * r));
  }
  SUBCASE("every configuration of ble,ef->blf, with a fused op") {
    const std::string tensors = R"("a": [4, 6, 8], "b": [8, 10])";
    Graph as_einsum = one_layer_graph(
        tensors, R"({"name": "c", "op": "einsum", "equation": "ble,ef->blf", "inputs": ["a", "b"], "pointwise": 2})");
    Graph as_contraction = one_layer_graph(tensors, contraction("ble,ef->blf", R"(, "pointwise": 2)"));
    Machine machine;
    machine.devices = 8;
    CostTables einsum_tables = build_cost_tables(as_einsum, machine);
    CostTables contraction_tables = build_cost_tables(as_contraction, machine);
    CHECK(contraction_tables.configs[0].size() == einsum_tables.configs[0].size());
    CHECK(contraction_tables.configs[0].size() >= 30);
    CHECK(contraction_tables.objective.vertex_cost[0] == einsum_tables.objective.vertex_cost[0]);
  }
}

TEST_CASE("contraction: round-trips through write_graph_file") {
  const std::string text = one_layer_graph_text(
      R"("a": [6, 4], "b": [4, 6, 10])",
      R"({"name": "c", "op": "contraction", "equation": "te,etd->td", "inputs": ["a", "b"], "pointwise": 1})");
  GraphFileV1 file = parse_graph_file(text, "g.json");
  const std::string written = write_graph_file(file);
  CHECK(written.find(R"("op": "contraction")") != std::string::npos);
  CHECK(written.find(R"("equation": "te,etd->td")") != std::string::npos);
  GraphFileV1 again = parse_graph_file(written, "g.json");
  REQUIRE(again.nodes.size() == 1);
  CHECK(again.nodes[0].op == "contraction");
  CHECK(again.nodes[0].equation == "te,etd->td");
  CHECK(again.nodes[0].pointwise == 1);
  CHECK(write_graph_file(again) == written);
  // The written file builds and prices as the one read: 6 · (3 · 10 · 4 + 3 · 10).
  CHECK(last_layer_cost(test::graph_from_json(written), {1, 1, 1}) == 900.0);
}
