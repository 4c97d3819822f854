// Every op's layer cost restated from docs/formats.md ("The `pase` cost
// model" and its formula table) and compared with the library on EVERY valid
// configuration of a small vertex, at p = 8 on the default machine and p = 12
// on another (r = 8000 F / B twice as large). The formulas here are written
// from the documentation alone: per-device extents, the all-reduce, the GEMM
// and the edge rule are this file's own code, and the domains and the
// configurations (cutoff rule, unsplittable dims, row-major contiguity,
// product <= p, lexicographic order) are enumerated here too and must equal
// what the library enumerates. Shapes are not powers of two, and conv and pool
// have strides and padding, so that a wrong extent or factor shows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "test_support.h"

using namespace pase;

namespace {

// ---------------------------------------------------------------------------
// The cost model as docs/formats.md states it.

/// A machine to price on: p devices of F TFLOP/s joined at B GB/s.
struct Pricing {
  int64_t devices;
  double flops_tflops, bandwidth_gbps;
  /// FLOP-equivalent cost of one 8-byte word: r = 8000 F / B.
  [[nodiscard]] double r() const { return 8000.0 * flops_tflops / bandwidth_gbps; }
};

// p = 8 on the defaults (r = 5000), p = 12 at 20 TFLOP/s (r = 10000).
const Pricing kPricings[] = {{8, 10.0, 16.0}, {12, 20.0, 16.0}};

/// Ring all-reduce of w words over q devices: r (w/q) 2 (q-1); nothing for q = 1.
double ring_all_reduce(double w, double q, double r) { return q <= 1.0 ? 0.0 : r * (w / q) * 2.0 * (q - 1.0); }

/// Bpp (3mnk + 3 pw mn + AR(mn, ck) + AR(mk, cn) + AR(nk, cm)) over per-device extents m, n, k.
double gemm(double r, double bpp, double m, double n, double k, double cm, double cn, double ck, double pw) {
  return bpp * (3.0 * m * n * k + 3.0 * pw * m * n + ring_all_reduce(m * n, ck, r) + ring_all_reduce(m * k, cn, r) +
                ring_all_reduce(n * k, cm, r));
}

/// Words to fetch when a tensor held split `a` is needed split `b`: need - overlap, at least 0.
double words_to_move(const std::vector<double>& tensor, const std::vector<double>& a, const std::vector<double>& b) {
  double need = 1.0, overlap = 1.0, held_on = 1.0, needed_on = 1.0;
  for (size_t i = 0; i < tensor.size(); ++i) {
    need *= tensor[i] / b[i];
    overlap *= std::min(tensor[i] / a[i], tensor[i] / b[i]);
    held_on *= a[i];
    needed_on *= b[i];
  }
  if (needed_on > held_on) overlap = 0.0;
  return std::max(0.0, need - overlap);
}

/// Redistribution: 2 r max(0, need - overlap).
double redistribution(const std::vector<double>& tensor, const std::vector<double>& a, const std::vector<double>& b,
                      double r) {
  return 2.0 * r * words_to_move(tensor, a, b);
}

using Config = std::vector<double>;  // one configuration's split counts, as numbers
using Formula = std::function<double(const Config& c, double r)>;

double product(const std::vector<double>& values) {
  double p = 1.0;
  for (double v : values) p *= v;
  return p;
}

/// Per-device extents d_i / c_i.
std::vector<double> per_device(const std::vector<double>& extents, const Config& c) {
  std::vector<double> out(extents.size());
  for (size_t i = 0; i < extents.size(); ++i) out[i] = extents[i] / c[i];
  return out;
}

/// An einsum's GEMM cost from its equation, over the domain "output letters,
/// then reduction letters": batch letters are in A, B and O; reduction letters
/// in A and B, not O; m letters only in A (and O); n letters only in B (and O).
Formula einsum_formula(const std::string& equation, const std::map<char, double>& extent, double pw) {
  const std::string a = equation.substr(0, equation.find(','));
  const std::string b = equation.substr(equation.find(',') + 1, equation.find("->") - equation.find(',') - 1);
  const std::string o = equation.substr(equation.find("->") + 2);
  std::string domain = o;
  for (char letter : a)
    if (o.find(letter) == std::string::npos && domain.find(letter) == std::string::npos) domain += letter;
  return [=](const Config& c, double r) {
    double bpp = 1, m = 1, n = 1, k = 1, cm = 1, cn = 1, ck = 1;
    for (size_t i = 0; i < domain.size(); ++i) {
      const char letter = domain[i];
      const bool in_a = a.find(letter) != std::string::npos, in_b = b.find(letter) != std::string::npos,
                 in_o = o.find(letter) != std::string::npos;
      const double d = extent.at(letter), split = c[i];
      if (in_a && in_b && in_o) {
        bpp *= d / split;
      } else if (in_a && in_b) {
        k *= d / split;
        ck *= split;
      } else if (in_a) {
        m *= d / split;
        cm *= split;
      } else {
        n *= d / split;
        cn *= split;
      }
    }
    return gemm(r, bpp, m, n, k, cm, cn, ck, pw);
  };
}

// ---------------------------------------------------------------------------
// Domains and configurations as docs/formats.md states them.

struct Domain {
  std::vector<int64_t> extents;
  std::string letters;                // "" where the docs do not name them
  std::vector<size_t> unsplittable;   // dims only ever split 1
  bool contiguous_only = false;       // reshape halves
  int64_t cutoff = 4;
};

/// Split counts allowed for one dim: divisors e of d with d / e >= cutoff (and e <= p), or just 1.
std::vector<int32_t> allowed(int64_t d, int64_t cutoff, int64_t devices, bool splittable) {
  std::vector<int32_t> out;
  if (splittable)
    for (int64_t e = 1; e <= d && e <= devices; ++e)
      if (d % e == 0 && d / e >= cutoff) out.push_back(static_cast<int32_t>(e));
  if (out.empty() || out.front() != 1) out.insert(out.begin(), 1);
  return out;
}

/// Leading dims split fully, then at most one dim split partly, then none.
bool contiguous(const std::vector<int64_t>& extents, const std::vector<int32_t>& c) {
  size_t i = 0;
  while (i < c.size() && c[i] == extents[i]) ++i;
  if (i < c.size()) ++i;  // the one partly split dim (or unsplit)
  for (; i < c.size(); ++i)
    if (c[i] != 1) return false;
  return true;
}

/// Every valid configuration, lexicographic with the first dim slowest.
std::vector<std::vector<int32_t>> valid_configs(const Domain& domain, int64_t devices) {
  const size_t rank = domain.extents.size();
  std::vector<std::vector<int32_t>> choices(rank);
  for (size_t i = 0; i < rank; ++i) {
    bool splittable = std::find(domain.unsplittable.begin(), domain.unsplittable.end(), i) == domain.unsplittable.end();
    choices[i] = allowed(domain.extents[i], domain.cutoff, devices, splittable);
  }
  std::vector<std::vector<int32_t>> out;
  std::vector<size_t> at(rank, 0);
  while (true) {
    std::vector<int32_t> config(rank);
    int64_t used = 1;
    for (size_t i = 0; i < rank; ++i) {
      config[i] = choices[i][at[i]];
      used *= config[i];
    }
    if (used <= devices && (!domain.contiguous_only || contiguous(domain.extents, config))) out.push_back(config);
    size_t i = rank;
    while (i > 0) {
      --i;
      if (++at[i] < choices[i].size()) break;
      at[i] = 0;
      if (i == 0) return out;
    }
    if (rank == 0) return out;
  }
}

std::string text_of(const std::vector<int32_t>& config) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < config.size(); ++i) out << (i ? "," : "") << config[i];
  out << ")";
  return out.str();
}

// ---------------------------------------------------------------------------
// The comparison.

std::string graph_text(const std::string& tensors, const std::string& nodes, int64_t cutoff = 2) {
  return R"({"format": "pase-graph", "version": 1, "name": "t", "cutoff": )" + std::to_string(cutoff) +
         R"(, "tensors": {)" + tensors + R"(}, "nodes": [)" + nodes + "]}";
}

/// Checks vertex `name` of `graph`: its domain and configurations against
/// `domain`, and its layer cost on every configuration against `formula`, at
/// both pricings. Returns how many configurations were compared.
size_t check_layer(const Graph& graph, const std::string& name, const Domain& domain, const Formula& formula) {
  CAPTURE(name);
  int v = graph.find_vertex(name);
  REQUIRE(v >= 0);
  const Vertex& vertex = graph.vertices[static_cast<size_t>(v)];
  CHECK(vertex.cutoff == domain.cutoff);
  const VertexModel model = build_vertex_model(vertex);
  CHECK(model.domain == Shape(domain.extents.begin(), domain.extents.end()));
  if (!domain.letters.empty()) CHECK(model.letters == domain.letters);
  size_t compared = 0;
  for (const Pricing& pricing : kPricings) {
    CAPTURE(pricing.devices);
    Machine machine;
    machine.devices = pricing.devices;
    machine.flops_tflops = pricing.flops_tflops;
    machine.bandwidth_gbps = pricing.bandwidth_gbps;
    PaseCostModel cost_model(machine);
    const std::vector<std::vector<int32_t>> configs = valid_configs(domain, pricing.devices);
    // The library enumerates exactly these, in this order.
    CostTables tables = build_cost_tables(graph, cost_model);
    const ConfigSet& theirs = tables.configs[static_cast<size_t>(v)];
    std::vector<std::vector<int32_t>> enumerated;
    for (size_t s = 0; s < theirs.size(); ++s) enumerated.emplace_back(theirs[s], theirs[s] + theirs.rank);
    CHECK(enumerated == configs);
    int mismatches = 0;
    for (const std::vector<int32_t>& config : configs) {
      const double correct = formula(Config(config.begin(), config.end()), pricing.r());
      const double result = cost_model.layer(model, config.data());
      if (!(std::fabs(result - correct) <= 1e-12 * std::fabs(correct))) {
        if (mismatches++ < 5)
          FAIL_CHECK("config " << text_of(config) << " at p = " << pricing.devices << ": library " << result
                               << ", formula " << correct);
      }
      ++compared;
    }
    CHECK(mismatches == 0);
  }
  return compared;
}

Graph graph_of(const std::string& tensors, const std::string& nodes, int64_t cutoff = 2) {
  return test::graph_from_json(graph_text(tensors, nodes, cutoff));
}

}  // namespace

TEST_CASE("cost restated: fc") {
  // x (6, 10, 12), 20 units, pw 2: domain (x1, x2, N, K), m = x1 x2 / (c1 c2), cm = c1 c2.
  Graph graph = graph_of(R"("x": [6, 10, 12], "y": [10, 12])",
                         R"({"name": "f", "op": "fc", "inputs": ["x"], "units": 20, "pointwise": 2},
                            {"name": "g", "op": "fc", "inputs": ["y"], "units": 6, "cutoff": 3})");
  size_t n = check_layer(graph, "f", {{6, 10, 20, 12}, "", {}, false, 2}, [](const Config& c, double r) {
    return gemm(r, 1, 6.0 * 10.0 / (c[0] * c[1]), 20.0 / c[2], 12.0 / c[3], c[0] * c[1], c[2], c[3], 2);
  });
  // 2-D input: "bnk", and the node's own cutoff.
  n += check_layer(graph, "g", {{10, 6, 12}, "bnk", {}, false, 3}, [](const Config& c, double r) {
    return gemm(r, 1, 10.0 / c[0], 6.0 / c[1], 12.0 / c[2], c[0], c[1], c[2], 0);
  });
  CHECK(n > 100);
}

TEST_CASE("cost restated: einsum") {
  // A batch letter b, m letters a and m, a reduction letter k, an n letter n.
  Graph graph = graph_of(R"("p": [6, 4, 10, 12], "q": [4, 12, 6], "u": [10, 12, 6], "w": [4, 12, 6])",
                         R"({"name": "e", "op": "einsum", "equation": "abmk,bkn->abmn", "inputs": ["p", "q"], "pointwise": 1},
                            {"name": "f", "op": "einsum", "equation": "ikl,jkl->ij", "inputs": ["u", "w"]})");
  std::map<char, double> e_extent = {{'a', 6}, {'b', 4}, {'m', 10}, {'k', 12}, {'n', 6}};
  size_t n = check_layer(graph, "e", {{6, 4, 10, 6, 12}, "abmnk", {}, false, 2}, einsum_formula("abmk,bkn->abmn", e_extent, 1));
  // No batch letter, two reduction letters.
  std::map<char, double> f_extent = {{'i', 10}, {'j', 4}, {'k', 12}, {'l', 6}};
  n += check_layer(graph, "f", {{10, 4, 12, 6}, "ijkl", {}, false, 2}, einsum_formula("ikl,jkl->ij", f_extent, 0));
  // The GEMM roles by hand for one configuration of "e", against the generic restatement:
  // (a,b,m,n,k) = (2,2,1,1,3): Bpp = 4/2, m = 6*10/2, n = 6, k = 12/3, cm = 2, cn = 1, ck = 3.
  CHECK(einsum_formula("abmk,bkn->abmn", e_extent, 1)({2, 2, 1, 1, 3}, 5000) ==
        gemm(5000, 2, 30, 6, 4, 2, 1, 3, 1));
  CHECK(n > 150);
}

TEST_CASE("cost restated: contraction") {
  // einsum's formula with an empty group's extent and split read as 1: no m letter (a MoE combine), no n
  // letter (a matrix-vector product), neither (a dot product per batch), batch letters only.
  Graph graph = graph_of(R"("t": [6, 4], "w": [4, 6, 10], "x": [10, 12], "v": [12], "p": [6, 12], "q": [6, 12])",
                         R"({"name": "c", "op": "contraction", "equation": "te,etd->td", "inputs": ["t", "w"], "pointwise": 1},
                            {"name": "mv", "op": "contraction", "equation": "bk,k->b", "inputs": ["x", "v"]},
                            {"name": "dot", "op": "contraction", "equation": "bk,bk->b", "inputs": ["p", "q"]},
                            {"name": "mul", "op": "contraction", "equation": "ab,ab->ab", "inputs": ["p", "q"]})");
  size_t n = check_layer(graph, "c", {{6, 10, 4}, "tde", {}, false, 2},
                         einsum_formula("te,etd->td", {{'t', 6}, {'e', 4}, {'d', 10}}, 1));
  n += check_layer(graph, "mv", {{10, 12}, "bk", {}, false, 2}, einsum_formula("bk,k->b", {{'b', 10}, {'k', 12}}, 0));
  n += check_layer(graph, "dot", {{6, 12}, "bk", {}, false, 2}, einsum_formula("bk,bk->b", {{'b', 6}, {'k', 12}}, 0));
  n += check_layer(graph, "mul", {{6, 12}, "ab", {}, false, 2}, einsum_formula("ab,ab->ab", {{'a', 6}, {'b', 12}}, 0));
  // By hand for one configuration of "c": (t, d, e) = (3, 2, 2) is Bpp 2, m 1, n 5, k 2, cm 1, cn 2, ck 2.
  CHECK(einsum_formula("te,etd->td", {{'t', 6}, {'e', 4}, {'d', 10}}, 1)({3, 2, 2}, 5000) ==
        gemm(5000, 2, 1, 5, 2, 1, 2, 2, 1));
  CHECK(n > 60);
}

TEST_CASE("cost restated: matmul") {
  // (4, 10, 12) x (4, 12, 6) = einsum "bmk,bkn->bmn": domain (b, m, n, k).
  Graph graph = graph_of(R"("a": [4, 10, 12], "b": [4, 12, 6])",
                         R"({"name": "mm", "op": "matmul", "inputs": ["a", "b"], "pointwise": 3})");
  size_t n = check_layer(graph, "mm", {{4, 10, 6, 12}, "", {}, false, 2}, [](const Config& c, double r) {
    return gemm(r, 4.0 / c[0], 10.0 / c[1], 6.0 / c[2], 12.0 / c[3], c[1], c[2], c[3], 3);
  });
  CHECK(n > 50);
}

TEST_CASE("cost restated: conv2d") {
  // x (4, 6, 10, 8), filter (12, 6, 3, 2), stride (2, 1), padding (1, 0), pw 1:
  // ho = (10 - 3 + 2) / 2 + 1 = 5, wo = (8 - 2) / 1 + 1 = 7; domain (b, c, ho, wo, R, S, N).
  Graph graph = graph_of(R"("x": [4, 6, 10, 8])",
                         R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [12, 6, 3, 2], "stride": [2, 1],
                             "padding": [1, 0], "pointwise": 1, "cutoff": 1})");
  size_t n = check_layer(graph, "c", {{4, 6, 5, 7, 3, 2, 12}, "bchwrsn", {2, 3}, false, 1}, [](const Config& c, double r) {
    const double b = 4, ch = 6, ho = 5, wo = 7, R = 3, S = 2, N = 12;
    return gemm(r, 1, b * ho * wo / (c[0] * c[2] * c[3]), N / c[6], ch * R * S / (c[1] * c[4] * c[5]),
                c[0] * c[2] * c[3], c[6], c[1] * c[4] * c[5], 1);
  });
  CHECK(n > 100);
}

TEST_CASE("cost restated: conv2d with groups") {
  // x (4, 6, 10, 8), filter (12, 2, 3, 2) in 3 groups, stride (2, 1), padding (1, 0), pw 1:
  // domain (b, G, C/G, ho, wo, R, S, N/G) = (4, 3, 2, 5, 7, 3, 2, 4); one GEMM per group,
  // C/G, ho, wo and N/G unsplittable.
  Graph graph = graph_of(R"("x": [4, 6, 10, 8])",
                         R"({"name": "c", "op": "conv2d", "inputs": ["x"], "filter": [12, 2, 3, 2], "groups": 3,
                             "stride": [2, 1], "padding": [1, 0], "pointwise": 1, "cutoff": 1})");
  size_t n = check_layer(graph, "c", {{4, 3, 2, 5, 7, 3, 2, 4}, "bgchwrsn", {2, 3, 4, 7}, false, 1}, [](const Config& c, double r) {
    const double b = 4, groups = 3, cg = 2, ho = 5, wo = 7, R = 3, S = 2, ng = 4;
    return gemm(r, groups / c[1], b * ho * wo / c[0], ng, cg * R * S / (c[5] * c[6]), c[0], 1, c[5] * c[6], 1);
  });
  CHECK(n > 20);  // (b, G, R, S) splits within the device counts
}

TEST_CASE("cost restated: pool2d") {
  // x (4, 6, 12, 10), window (3, 2), stride 2, padding (1, 0): ho = (12 - 3 + 2) / 2 + 1 = 6,
  // wo = (10 - 2) / 2 + 1 = 5. Elements per device over the output, plus the halo
  // r (b/cb)(c/cc)[(h/ch + [ch>1] R)(w/cw + [cw>1] S) - (h/ch)(w/cw)] over the input h, w.
  Graph graph = graph_of(R"("x": [4, 6, 12, 10])",
                         R"({"name": "p", "op": "pool2d", "inputs": ["x"], "window": [3, 2], "stride": 2,
                             "padding": [1, 0], "cutoff": 1})");
  size_t n = check_layer(graph, "p", {{4, 6, 6, 5}, "bchw", {}, false, 1}, [](const Config& c, double r) {
    const double b = 4, ch = 6, h = 12, w = 10, ho = 6, wo = 5, R = 3, S = 2;
    const double elements = (b / c[0]) * (ch / c[1]) * (ho / c[2]) * (wo / c[3]);
    const double hh = h / c[2], ww = w / c[3];
    const double halo = r * (b / c[0]) * (ch / c[1]) *
                        ((hh + (c[2] > 1 ? R : 0.0)) * (ww + (c[3] > 1 ? S : 0.0)) - hh * ww);
    return elements + halo;
  });
  CHECK(n > 40);
}

TEST_CASE("cost restated: elementwise") {
  Graph graph = graph_of(R"("x": [12, 10], "y": [12, 10], "z": [6, 4, 10])",
                         R"({"name": "e", "op": "elementwise", "inputs": ["x", "y"], "pointwise": 2},
                            {"name": "f", "op": "elementwise", "inputs": ["z"]})");
  size_t n = check_layer(graph, "e", {{12, 10}, "", {}, false, 2},
                         [](const Config& c, double) { return 3.0 * product(per_device({12, 10}, c)); });
  n += check_layer(graph, "f", {{6, 4, 10}, "", {}, false, 2},
                   [](const Config& c, double) { return product(per_device({6, 4, 10}, c)); });
  CHECK(n > 40);
}

namespace {

/// norm over `axis`: 16e + 4 AR(e / x_ax, c_ax) + 4 AR(x_ax, prod_{i != ax} c_i), per-device e and x_ax.
Formula norm_formula(std::vector<double> extents, size_t axis) {
  return [=](const Config& c, double r) {
    const std::vector<double> x = per_device(extents, c);
    const double e = product(x);
    double others = 1.0;
    for (size_t i = 0; i < c.size(); ++i)
      if (i != axis) others *= c[i];
    return 16.0 * e + 4.0 * ring_all_reduce(e / x[axis], c[axis], r) + 4.0 * ring_all_reduce(x[axis], others, r);
  };
}

/// rmsnorm over `axis`: 12e + 2 AR(e / x_ax, c_ax) + 2 AR(x_ax, prod_{i != ax} c_i).
Formula rmsnorm_formula(std::vector<double> extents, size_t axis) {
  return [=](const Config& c, double r) {
    const std::vector<double> x = per_device(extents, c);
    const double e = product(x);
    double others = 1.0;
    for (size_t i = 0; i < c.size(); ++i)
      if (i != axis) others *= c[i];
    return 12.0 * e + 2.0 * ring_all_reduce(e / x[axis], c[axis], r) + 2.0 * ring_all_reduce(x[axis], others, r);
  };
}

}  // namespace

TEST_CASE("cost restated: norm, batchnorm and rmsnorm") {
  Graph graph = graph_of(R"("x": [6, 10, 12], "y": [12, 10])",
                         R"({"name": "last", "op": "norm", "inputs": ["x"]},
                            {"name": "middle", "op": "norm", "inputs": ["x"], "axis": 1},
                            {"name": "bn", "op": "batchnorm", "inputs": ["y"]},
                            {"name": "rms", "op": "rmsnorm", "inputs": ["x"]},
                            {"name": "rms1", "op": "rmsnorm", "inputs": ["x"], "axis": 1},
                            {"name": "bn_relu", "op": "batchnorm", "inputs": ["y"], "pointwise": 1},
                            {"name": "norm_act", "op": "norm", "inputs": ["x"], "pointwise": 2},
                            {"name": "rms_act", "op": "rmsnorm", "inputs": ["x"], "axis": 1, "pointwise": 1})");
  size_t n = check_layer(graph, "last", {{6, 10, 12}, "", {}, false, 2}, norm_formula({6, 10, 12}, 2));
  n += check_layer(graph, "middle", {{6, 10, 12}, "", {}, false, 2}, norm_formula({6, 10, 12}, 1));
  n += check_layer(graph, "bn", {{12, 10}, "", {}, false, 2}, norm_formula({12, 10}, 0));
  n += check_layer(graph, "rms", {{6, 10, 12}, "", {}, false, 2}, rmsnorm_formula({6, 10, 12}, 2));
  n += check_layer(graph, "rms1", {{6, 10, 12}, "", {}, false, 2}, rmsnorm_formula({6, 10, 12}, 1));
  // A `pointwise` count (an extension) leaves the paper's formulas as they are.
  n += check_layer(graph, "bn_relu", {{12, 10}, "", {}, false, 2}, norm_formula({12, 10}, 0));
  n += check_layer(graph, "norm_act", {{6, 10, 12}, "", {}, false, 2}, norm_formula({6, 10, 12}, 2));
  n += check_layer(graph, "rms_act", {{6, 10, 12}, "", {}, false, 2}, rmsnorm_formula({6, 10, 12}, 1));
  CHECK(n > 160);
}

namespace {

/// softmax over `axis`: 4e + e d_ax + 2 AR(f, c_ax) + AR(f d_ax, c_ax); e and f = prod_{i != ax} x_i
/// per device, d_ax the whole extent.
Formula softmax_formula(std::vector<double> extents, size_t axis) {
  return [=](const Config& c, double r) {
    const std::vector<double> x = per_device(extents, c);
    const double e = product(x), f = e / x[axis], d = extents[axis];
    return 4.0 * e + e * d + 2.0 * ring_all_reduce(f, c[axis], r) + ring_all_reduce(f * d, c[axis], r);
  };
}

/// softmax_xent: 4e + 2 beta + [c_last > 1] 2 r beta, beta = prod_{i < last} x_i per device.
Formula softmax_xent_formula(std::vector<double> extents) {
  return [=](const Config& c, double r) {
    const std::vector<double> x = per_device(extents, c);
    const double e = product(x), beta = e / x.back();
    return 4.0 * e + 2.0 * beta + (c.back() > 1 ? 2.0 * r * beta : 0.0);
  };
}

}  // namespace

TEST_CASE("cost restated: softmax and softmax_xent") {
  Graph graph = graph_of(R"("x": [6, 10, 12], "y": [12, 10])",
                         R"({"name": "s1", "op": "softmax", "inputs": ["x"]},
                            {"name": "s2", "op": "softmax", "inputs": ["x"], "axis": -1},
                            {"name": "s0", "op": "softmax", "inputs": ["y"], "axis": 0},
                            {"name": "l2", "op": "softmax_xent", "inputs": ["y"]},
                            {"name": "l3", "op": "softmax_xent", "inputs": ["x"]},
                            {"name": "s_drop", "op": "softmax", "inputs": ["x"], "axis": 2, "pointwise": 1})");
  size_t n = check_layer(graph, "s1", {{6, 10, 12}, "", {}, false, 2}, softmax_formula({6, 10, 12}, 1));
  n += check_layer(graph, "s2", {{6, 10, 12}, "", {}, false, 2}, softmax_formula({6, 10, 12}, 2));
  n += check_layer(graph, "s0", {{12, 10}, "", {}, false, 2}, softmax_formula({12, 10}, 0));
  n += check_layer(graph, "l2", {{12, 10}, "", {}, false, 2}, softmax_xent_formula({12, 10}));
  n += check_layer(graph, "l3", {{6, 10, 12}, "", {}, false, 2}, softmax_xent_formula({6, 10, 12}));
  n += check_layer(graph, "s_drop", {{6, 10, 12}, "", {}, false, 2}, softmax_formula({6, 10, 12}, 2));  // pointwise 1
  CHECK(n > 180);
}

TEST_CASE("cost restated: reduce_mean") {
  // AR(prod x_i per device, prod over the reduced axes of c_i); the domain is the input's.
  auto formula = [](std::vector<double> extents, std::vector<size_t> axes) -> Formula {
    return [=](const Config& c, double r) {
      double q = 1.0;
      for (size_t axis : axes) q *= c[axis];
      return ring_all_reduce(product(per_device(extents, c)), q, r);
    };
  };
  Graph graph = graph_of(R"("x": [6, 10, 12])",
                         R"({"name": "m1", "op": "reduce_mean", "inputs": ["x"], "axes": [1]},
                            {"name": "m02", "op": "reduce_mean", "inputs": ["x"], "axes": [0, -1], "keepdims": true})");
  size_t n = check_layer(graph, "m1", {{6, 10, 12}, "", {}, false, 2}, formula({6, 10, 12}, {1}));
  n += check_layer(graph, "m02", {{6, 10, 12}, "", {}, false, 2}, formula({6, 10, 12}, {0, 2}));
  CHECK(n > 80);
}

TEST_CASE("cost restated: data movement ops cost nothing") {
  const Formula zero = [](const Config&, double) { return 0.0; };
  Graph graph = graph_of(
      R"("a": [6, 4], "b": [6, 8], "x": [12, 10], "t": [6, 10, 12], "u": [3, 10, 12])",
      R"({"name": "cat", "op": "concat", "inputs": ["a", "b"], "axis": 1},
         {"name": "sp", "op": "split", "inputs": ["x"], "parts": [4, 8], "axis": 0},
         {"name": "tr", "op": "transpose", "inputs": ["t"], "perm": [2, 0, 1]},
         {"name": "st", "op": "stack", "inputs": ["x", "x"], "axis": 1},
         {"name": "un", "op": "unstack", "inputs": ["u"]},
         {"name": "rs", "op": "reshape", "inputs": ["x"], "shape": [6, -1], "cutoff": 1},
         {"name": "ex", "op": "expand", "inputs": ["a"], "shape": [3, 6, 4]})");
  // concat, split, unstack: the (first) input's shape, the axis unsplittable.
  size_t n = check_layer(graph, "cat", {{6, 4}, "", {1}, false, 2}, zero);
  n += check_layer(graph, "sp", {{12, 10}, "", {0}, false, 2}, zero);
  n += check_layer(graph, "un", {{3, 10, 12}, "", {0}, false, 2}, zero);
  // transpose: the input's shape; stack: a size-1 axis inserted.
  n += check_layer(graph, "tr", {{6, 10, 12}, "", {}, false, 2}, zero);
  n += check_layer(graph, "st", {{12, 1, 10}, "", {}, false, 2}, zero);
  // reshape: NAME/ravel over the input shape, NAME over the target, both row-major contiguous.
  n += check_layer(graph, "rs/ravel", {{12, 10}, "", {}, true, 1}, zero);
  n += check_layer(graph, "rs", {{6, 20}, "", {}, true, 1}, zero);
  CHECK(graph.vertices[static_cast<size_t>(graph.find_vertex("rs/ravel"))].kind == OpKind::Ravel);
  CHECK(graph.vertices[static_cast<size_t>(graph.find_vertex("rs"))].kind == OpKind::Unravel);
  // expand: the output's shape.
  n += check_layer(graph, "ex", {{3, 6, 4}, "", {}, false, 2}, zero);
  CHECK(n > 100);
}

TEST_CASE("cost restated: embedding") {
  // ids (6, 10), vocab 12, dim 6: einsum "abc,cd->abd" of the one-hot (6, 10, 12) and the weight (12, 6);
  // domain "abdc" = (b, s, dim, vocab), pw 0.
  Graph graph = graph_of(R"("ids": [6, 10])", R"({"name": "e", "op": "embedding", "inputs": ["ids"], "vocab": 12, "dim": 6})");
  std::map<char, double> extent = {{'a', 6}, {'b', 10}, {'c', 12}, {'d', 6}};
  size_t n = check_layer(graph, "e", {{6, 10, 6, 12}, "abdc", {}, false, 2}, einsum_formula("abc,cd->abd", extent, 0));
  CHECK(n > 50);
}

TEST_CASE("cost restated: lstm") {
  // x (6, 4, 12), 12 units, 2 layers: domain "lsbnk" = (L, s, b, U, U), s unsplittable.
  // GEMM with Bpp = L/cl, m = s b / (cs cb), n = 4U/cn, k = 2U/ck, pw 3, plus L s r A where A
  // moves the (b, U) state held split (cb, cn) to (cb, ck) (the edge rule without its factor 2).
  Graph graph = graph_of(R"("x": [6, 4, 12])",
                         R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": 12, "layers": 2, "cutoff": 1})");
  size_t n = check_layer(graph, "l", {{2, 4, 6, 12, 12}, "lsbnk", {1}, false, 1}, [](const Config& c, double r) {
    const double L = 2, s = 4, b = 6, U = 12;
    const double layers = gemm(r, L / c[0], s * b / (c[1] * c[2]), 4.0 * U / c[3], 2.0 * U / c[4], c[1] * c[2], c[3],
                               c[4], 3);
    return layers + L * s * r * words_to_move({b, U}, {c[2], c[3]}, {c[2], c[4]});
  });
  CHECK(n > 100);
}

TEST_CASE("cost restated: lstm with another input size and two directions") {
  // x (6, 4, 10), 12 units, input_size 10, 2 directions, 3 gates (a GRU):
  // domain "lsbnk" = (1, s, b, D·U, I). The directions' GEMMs side by side:
  // n = 3·D·U/cn; the input and the state: k = (I + U)/ck. The state moved
  // each step is (b, D·U), held split (cb, cn), needed split (cb, ck).
  Graph graph = graph_of(R"("x": [6, 4, 10])",
                         R"({"name": "l", "op": "lstm", "inputs": ["x"], "units": 12, "layers": 1, "gates": 3,
                             "input_size": 10, "directions": 2, "cutoff": 1})");
  size_t n = check_layer(graph, "l", {{1, 4, 6, 24, 10}, "lsbnk", {1}, false, 1}, [](const Config& c, double r) {
    const double s = 4, b = 6, U = 12, I = 10, D = 2;
    const double layer = gemm(r, 1.0 / c[0], s * b / (c[1] * c[2]), 3.0 * D * U / c[3], (I + U) / c[4], c[1] * c[2], c[3],
                              c[4], 3);
    return layer + s * r * words_to_move({b, D * U}, {c[2], c[3]}, {c[2], c[4]});
  });
  CHECK(n > 50);
}

TEST_CASE("cost restated: redistribution of a tensor between two splits") {
  for (const Pricing& pricing : kPricings) {
    CAPTURE(pricing.devices);
    Machine machine;
    machine.devices = pricing.devices;
    machine.flops_tflops = pricing.flops_tflops;
    machine.bandwidth_gbps = pricing.bandwidth_gbps;
    PaseCostModel model(machine);
    size_t compared = 0, nonzero = 0;
    for (const std::vector<int64_t>& tensor : std::vector<std::vector<int64_t>>{{12, 10}, {6, 4, 10}, {12}}) {
      // Every split of the tensor on up to p devices, as producer and as consumer.
      Domain domain{tensor, "", {}, false, 1};
      const std::vector<std::vector<int32_t>> splits = valid_configs(domain, pricing.devices);
      const std::vector<double> t(tensor.begin(), tensor.end());
      const Shape shape(tensor.begin(), tensor.end());
      std::vector<std::vector<int64_t>> splits64;
      for (const std::vector<int32_t>& split : splits) splits64.emplace_back(split.begin(), split.end());
      // The matrix form the cost tables are built with, over the same splits.
      std::vector<double> matrix(splits.size() * splits.size());
      model.redistribution_matrix(shape, splits64, splits64, matrix.data());
      for (size_t i = 0; i < splits.size(); ++i)
        for (size_t j = 0; j < splits.size(); ++j) {
          const std::vector<int32_t>& a = splits[i];
          const std::vector<int32_t>& b = splits[j];
          const double correct =
              redistribution(t, std::vector<double>(a.begin(), a.end()), std::vector<double>(b.begin(), b.end()), pricing.r());
          const double result = model.redistribution(shape, splits64[i].data(), splits64[j].data());
          CAPTURE(text_of(a));
          CAPTURE(text_of(b));
          REQUIRE(std::fabs(result - correct) <= 1e-12 * std::fabs(correct));
          REQUIRE(std::fabs(matrix[i * splits.size() + j] - correct) <= 1e-12 * std::fabs(correct));
          ++compared;
          if (correct > 0) ++nonzero;
        }
    }
    CHECK(compared > 300);
    CHECK(nonzero > compared / 2);
  }
  // The restatement itself by hand, r = 5000: (12, 10) held (2, 5), needed (4, 1): need = 3 * 10 = 30;
  // prod b = 4 <= prod a = 10, so overlap = min(6, 3) * min(2, 10) = 6; 2r * 24.
  CHECK(redistribution({12, 10}, {2, 5}, {4, 1}, 5000) == 2 * 5000.0 * 24);
}
