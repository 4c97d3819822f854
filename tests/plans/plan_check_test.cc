// plan-check (plans/plan_check.h, `pase plan-check`): the fixtures pass, a
// plan with a wrong layout, wrong texts or wrong realized words does not, and
// realized words equal a count over materialized tiles.
#include <doctest/doctest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "plans/plan_check.h"
#include "plan_fixture.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

json fixture(const std::string& name) { return test::plan_fixture(name); }

json& layer(json& document, const std::string& name) { return test::plan_layer(document, name); }

PlanCheckReport check(const json& document, uint64_t seed = 1) {
  std::optional<PlanFile> file = read_plan(document.dump(), "p.json");
  REQUIRE(file);
  PlanCheckOptions options;
  options.seed = seed;
  return check_plan(*file, options);
}

// The 3x2x2 fixture with out.weight laid out over (sp, tp) where its letter h
// runs over (tp, sp); its texts say what the wrong spec says.
json wrong_weight_order() {
  json d = fixture("plan_mesh3x2x2.json");
  json& layout = layer(d, "out")["weights"][0]["layout"];
  layout["spec"] = {{"sp", "tp"}, json::array()};
  layout["jax"] = "P(('sp', 'tp'), None)";
  layout["hlo"] = "{devices=[4,1,3]<=[3,2,2]T(2,1,0) last_tile_dim_replicate}";
  layout["dtensor"] = nullptr;
  layout["dtensor_note"] = "sp before tp";
  return d;
}

Mesh make_mesh(std::vector<int64_t> shape, std::vector<std::string> axes) {
  Mesh mesh;
  mesh.shape = std::move(shape);
  mesh.axes = std::move(axes);
  return mesh;
}

// The elements (flat indices) of a tensor that a device holds under `spec`,
// listed one by one: ceil(size / pieces) per block along each dimension.
std::set<int64_t> tile_elements(const Shape& shape, const AxisSpec& spec, const Mesh& mesh, int64_t device) {
  std::vector<int64_t> coords(mesh.shape.size());
  for (size_t a = mesh.shape.size(), rest = static_cast<size_t>(device); a-- > 0;) {
    coords[a] = static_cast<int64_t>(rest) % mesh.shape[a];
    rest /= static_cast<size_t>(mesh.shape[a]);
  }
  std::vector<int64_t> begin, end;
  for (size_t t = 0; t < shape.size(); ++t) {
    int64_t pieces = 1, block = 0;
    for (int axis : spec[t]) {
      pieces *= mesh.shape[axis];
      block = block * mesh.shape[axis] + coords[axis];
    }
    int64_t each = (shape[t] + pieces - 1) / pieces;
    begin.push_back(std::min(shape[t], block * each));
    end.push_back(std::min(shape[t], (block + 1) * each));
  }
  std::set<int64_t> elements;
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  for (int64_t flat = 0; flat < total; ++flat) {
    bool inside = true;
    for (size_t t = shape.size(), rest = static_cast<size_t>(flat); t-- > 0;) {
      int64_t i = static_cast<int64_t>(rest) % shape[t];
      rest /= static_cast<size_t>(shape[t]);
      inside = inside && i >= begin[t] && i < end[t];
    }
    if (inside) elements.insert(flat);
  }
  return elements;
}

}  // namespace

TEST_CASE("plan-check: the fixtures are consistent") {
  PlanCheckReport flat = check(fixture("plan_mesh2x4.json"));
  CHECK(flat.problems == std::vector<std::string>{});
  CHECK(flat.layers_computed == 3);     // fc1, fc2 (einsums with their weights), add (a sum)
  CHECK(flat.layers_layout_only == 1);  // flat/ravel: its output follows two letters
  CHECK(flat.edges == 3);
  PlanCheckReport heads = check(fixture("plan_mesh3x2x2.json"), 12345);
  CHECK(heads.problems == std::vector<std::string>{});
  CHECK(heads.layers_computed == 2);
  CHECK(heads.edges == 1);
}

TEST_CASE("plan-check: a layer without its weights is checked for layout only") {
  json d = fixture("plan_mesh2x4.json");
  layer(d, "fc1").erase("weights");  // x alone does not make fc1's output letter n
  PlanCheckReport report = check(d);
  CHECK(report.problems.empty());
  CHECK(report.layers_computed == 2);
  CHECK(report.layers_layout_only == 2);
}

TEST_CASE("plan-check: a deliberately wrong plan") {
  SUBCASE("a weight's axes in the wrong order: the devices compute the wrong result") {
    PlanCheckReport report = check(wrong_weight_order());
    REQUIRE(report.problems.size() == 1);
    const std::string& line = report.problems[0];
    CHECK(line.rfind("layer 'out': weight 'out.weight': spec[0] is [sp, tp], but its dims 'h' run over [tp, sp]; "
                     "computed: device ", 0) == 0);
    CHECK(line.find(", but the unsharded result is ") != std::string::npos);
    CHECK(line.find("(shrunk problem: b=6 s=2 d=2 h=8)") != std::string::npos);
  }
  SUBCASE("an output not split along its letter") {
    json d = fixture("plan_mesh2x4.json");
    json& output = layer(d, "fc2")["outputs"][0];
    output["split"] = {1, 1};
    output["layout"] = {{"spec", {json::array(), json::array()}}, {"jax", "P(None, None)"}, {"hlo", "{replicated}"},
                        {"dtensor", {"Replicate()", "Replicate()"}}};
    PlanCheckReport report = check(d);
    REQUIRE(report.problems.size() == 2);
    CHECK(report.problems[0] ==
          "layer 'fc2': output 0: spec[0] is [], but its dims 'b' run over [x0]; computed: device 0 computes an output "
          "tile of shape [2, 2], but its output layout gives it [4, 2] (shrunk problem: b=4 n=2 k=8)");
    CHECK(report.problems[1] ==
          "edge 'fc2' -> 'add' (input 0): realized_words is 10, but the layouts leave a device at most 0 elements to fetch");
  }
  SUBCASE("gradient all-reduce axes") {
    json d = fixture("plan_mesh2x4.json");
    layer(d, "fc1")["weights"][0]["grad_allreduce_axes"] = {"x0", "x1"};
    CHECK(check(d).problems == std::vector<std::string>{"layer 'fc1': weight 'fc1.weight': grad_allreduce_axes is [x0, x1], "
                                                        "but the layer's axes outside its dims are [x0]"});
  }
}

TEST_CASE("plan-check: the written texts must say what the spec says") {
  json d = fixture("plan_mesh2x4.json");
  json& layout = layer(d, "fc1")["outputs"][0]["layout"];
  SUBCASE("an HLO text is compared by meaning") {
    layout["hlo"] = "{devices=[2,4]0,1,2,3,4,5,6,7}";
    CHECK(check(d).problems.empty());
    layout["hlo"] = "{devices=[2,4]0,1,2,3,4,5,7,6}";
    CHECK(check(d).problems == std::vector<std::string>{
                                   "layer 'fc1': output 0: layout.hlo \"{devices=[2,4]0,1,2,3,4,5,7,6}\" gives device 6 "
                                   "tile [1, 3], but the spec gives it [1, 2]"});
    layout["hlo"] = "{devices=[2,4]<=[8] last_tile_dims={0}}";
    CHECK(check(d).problems == std::vector<std::string>{
                                   "layer 'fc1': output 0: layout.hlo \"{devices=[2,4]<=[8] last_tile_dims={0}}\": "
                                   "unexpected text before the closing }"});
  }
  SUBCASE("jax and dtensor") {
    layout["jax"] = "P('x1', 'x0')";
    layout["dtensor"] = {"Shard(1)", "Shard(0)"};
    CHECK(check(d).problems == std::vector<std::string>{
                                   "layer 'fc1': output 0: layout.jax is \"P('x1', 'x0')\", but the spec says "
                                   "\"P('x0', 'x1')\"; output 0: layout.dtensor is [Shard(1), Shard(0)], but the spec "
                                   "says [Shard(0), Shard(1)]"});
    layout["jax"] = "P( \"x0\",\"x1\" )";  // spacing and quotes do not matter
    layout.erase("dtensor");
    CHECK(check(d).problems == std::vector<std::string>{"layer 'fc1': output 0: layout.dtensor is missing"});
  }
  SUBCASE("a null placement list needs a note") {
    json heads = fixture("plan_mesh3x2x2.json");
    layer(heads, "qk")["weights"][0]["layout"].erase("dtensor_note");
    CHECK(check(heads).problems == std::vector<std::string>{
                                       "layer 'qk': weight 'qk.weight': layout.dtensor is null without a dtensor_note"});
  }
}

TEST_CASE("plan-check: realized words") {
  SUBCASE("a wrong record") {
    json d = fixture("plan_mesh2x4.json");
    layer(d, "add")["inputs"][0]["redistribution"]["realized_words"] = 5;
    CHECK(check(d).problems == std::vector<std::string>{
                                   "edge 'fc2' -> 'add' (input 0): realized_words is 5, but the layouts leave a device "
                                   "at most 10 elements to fetch"});
  }
  SUBCASE("a missing record") {
    json d = fixture("plan_mesh2x4.json");
    layer(d, "fc2")["inputs"][0].erase("redistribution");
    CHECK(check(d).problems == std::vector<std::string>{"edge 'fc1' -> 'fc2' (input 0): no redistribution record"});
  }
  SUBCASE("the model's words and the realized ones differ") {
    // qk -> out: the same split counts (the cost model moves nothing), but h
    // runs over (sp, tp) in qk's output and (tp, sp) in out's input.
    json d = fixture("plan_mesh3x2x2.json");
    CHECK(layer(d, "out")["inputs"][0]["redistribution"] == json{{"model_words", 0}, {"realized_words", 16}});
    CHECK(check(d).problems.empty());
  }
  SUBCASE("uneven blocks: ceil(size / pieces) each, the last ones shorter or empty") {
    Mesh mesh = make_mesh({3, 2}, {"a", "b"});
    CHECK(block_interval(10, 6, 5).length() == 0);
    CHECK(block_interval(10, 3, 2).begin == 8);
    CHECK(realized_words({10}, {{0}}, {{0, 1}}, mesh) == 0);  // finer blocks inside the held ones
    CHECK(realized_words({10}, {{0, 1}}, {{0}}, mesh) == 2);
    CHECK(realized_words({10}, {{}}, {{1, 0}}, mesh) == 0);   // everything held
    CHECK(realized_words({10}, {{1, 0}}, {{}}, mesh) == 10);  // the sixth block is empty
  }
  SUBCASE("against tiles materialized element by element") {
    Mesh mesh = make_mesh({3, 2, 2}, {"x", "y", "z"});
    const std::vector<AxisSpec> specs = {{{}, {}},     {{0}, {}},   {{}, {0}},      {{1}, {2}},     {{2}, {1}},
                                         {{0, 1}, {}}, {{1, 0}, {2}}, {{}, {2, 1, 0}}, {{2, 0}, {1}}, {{0}, {1, 2}}};
    const std::vector<Shape> shapes = {{12, 8}, {7, 5}, {3, 13}};
    for (const Shape& shape : shapes)
      for (const AxisSpec& held : specs)
        for (const AxisSpec& needed : specs) {
          int64_t most = 0;
          for (int64_t d = 0; d < mesh.devices(); ++d) {
            std::set<int64_t> have = tile_elements(shape, held, mesh, d);
            int64_t missing = 0;
            for (int64_t e : tile_elements(shape, needed, mesh, d)) missing += have.count(e) ? 0 : 1;
            most = std::max(most, missing);
          }
          CAPTURE(shape_to_string(shape));
          CHECK(realized_words(shape, held, needed, mesh) == most);
        }
  }
}

TEST_CASE("pase plan-check") {
  std::string flat = test::source_path("tests/fixtures/plan_mesh2x4.json");
  SUBCASE("a consistent plan") {
    test::CommandResult result = test::run_pase("plan-check \"" + flat + "\"");
    CHECK(result.status == 0);
    CHECK(result.output ==
          "plan-check: 4 layers checked (3 computed on a shrunk problem, 1 layout only), 3 edges checked, all consistent\n");
    CHECK(result.error == "");
    test::CommandResult seeded = test::run_pase("plan-check \"" + test::source_path("tests/fixtures/plan_mesh3x2x2.json") +
                                                "\" --seed 99");
    CHECK(seeded.status == 0);
    CHECK(seeded.output ==
          "plan-check: 2 layers checked (2 computed on a shrunk problem, 0 layout only), 1 edge checked, all consistent\n");
  }
  SUBCASE("an inconsistent plan") {
    std::string wrong = test::write_temp_file("plan_check_wrong.json", wrong_weight_order().dump(1));
    test::CommandResult result = test::run_pase("plan-check \"" + wrong + "\"");
    CHECK(result.status == 1);
    CHECK(result.output.rfind("layer 'out': weight 'out.weight': spec[0] is [sp, tp]", 0) == 0);
    CHECK(result.output.find(
              "\nplan-check: 2 layers checked (2 computed on a shrunk problem, 0 layout only), 1 edge checked, 1 "
              "inconsistent\n") != std::string::npos);
    CHECK(result.error == "");
  }
  SUBCASE("a strategy without a plan") {
    json d = fixture("plan_mesh2x4.json");
    d.erase("mesh");
    std::string plain = test::write_temp_file("plan_check_plain.json", d.dump());
    test::CommandResult result = test::run_pase("plan-check \"" + plain + "\"");
    CHECK(result.status == 1);
    CHECK(result.output == "");
    CHECK(result.error == "error: " + plain + ": has no plan (solve with --mesh to make one)\n");
  }
}

TEST_CASE("pase plan-check: contractions with an empty letter group compute their partial sums") {
  // combine (te,etd->td: no m letter) splits d, its n letter; score (td,d->t: no n letter) splits d, its
  // reduction letter, so each device's partial sum over its block of d is all-reduced.
  const std::string graph = test::write_temp_file("plan_check_contraction.json", R"({
    "format": "pase-graph", "version": 1, "name": "combine", "cutoff": 1,
    "tensors": {"g": [4, 8], "y": [8, 4, 4096], "v": [4096]}, "parameters": ["y", "v"],
    "nodes": [{"name": "combine", "op": "contraction", "equation": "te,etd->td", "inputs": ["g", "y"]},
              {"name": "score", "op": "contraction", "equation": "td,d->t", "inputs": ["combine", "v"]}]})");
  const std::string plan = graph + ".plan.json";
  test::CommandResult solved =
      test::run_pase("solve \"" + graph + "\" --devices 8 --mesh 2x4 --bandwidth 1000 -o \"" + plan + "\"");
  REQUIRE(solved.status == 0);
  // r = 80: combine Bpp 4 · (3 · 512 · 8 + AR(mk = 8, cn = 8) = 14r) = 53632; score 3 · 4 · 512 + AR(4, 8) = 6704.
  const json layers = json::parse(pase::read_text_file(plan))["layers"];
  CHECK(layers[0]["config"] == json::parse("[1, 8, 1]"));
  CHECK(layers[0]["cost"] == 53632);
  CHECK(layers[1]["config"] == json::parse("[1, 8]"));
  CHECK(layers[1]["cost"] == 6704);
  CHECK(solved.output.find("combine  contraction  d8            8  53.6 kFLOP") != std::string::npos);  // e, d: d split
  test::CommandResult checked = test::run_pase("plan-check \"" + plan + "\"");
  CHECK(checked.status == 0);
  CHECK(checked.output ==
        "plan-check: 2 layers checked (2 computed on a shrunk problem, 0 layout only), 1 edge checked, all consistent\n");
}
