// `pase export` (plans/plan_export.h): the document for each framework, and
// the one-line refusals.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "plans/plan_export.h"
#include "test_support.h"
#include "base/text_file.h"

using namespace pase;
using json = nlohmann::json;

namespace {

json fixture(const std::string& name) { return json::parse(read_text_file(test::source_path("tests/fixtures/" + name))); }

std::string exported(const json& plan, ExportFramework framework) {
  std::optional<PlanFile> file = read_plan(plan.dump(), "p.json");
  REQUIRE(file);
  return export_plan(*file, framework);
}

}  // namespace

TEST_CASE("export_plan: jax") {
  const std::string text = exported(fixture("plan_mesh3x2x2.json"), ExportFramework::Jax);
  CHECK(text.rfind("{\n  \"format\": \"pase-export\",\n  \"version\": 1,\n  \"framework\": \"jax\",\n", 0) == 0);
  json d = json::parse(text);
  CHECK(d["graph"] == "attention_head");
  CHECK(d["mesh"] == json::parse(R"({"shape": [3, 2, 2], "axis_names": ["dp", "tp", "sp"],
                                     "device_ids": [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]]],
                                     "devices_per_node": 4})"));
  CHECK(d["weights"] == json::parse(R"({"qk.weight": [null, ["sp", "tp"]], "out.weight": [["tp", "sp"], null]})"));
  CHECK(d["outputs"] == json::parse(R"({"qk": [["dp", null, ["sp", "tp"]]], "out": [["dp", null, null]]})"));
  CHECK(!d.contains("notes"));
  // One weight or layer per line.
  CHECK(text.find("\n    \"qk.weight\": [null,[\"sp\",\"tp\"]],\n") != std::string::npos);
}

TEST_CASE("export_plan: dtensor and hlo") {
  json plan = fixture("plan_mesh3x2x2.json");
  json dtensor = json::parse(exported(plan, ExportFramework::Dtensor));
  CHECK(dtensor["framework"] == "dtensor");
  CHECK(dtensor["weights"]["qk.weight"].is_null());
  CHECK(dtensor["weights"]["out.weight"] == json{"Replicate()", "Shard(0)", "Shard(0)"});
  CHECK(dtensor["outputs"]["qk"] == json::array({nullptr}));
  CHECK(dtensor["outputs"]["out"] == json::array({json{"Shard(0)", "Replicate()", "Replicate()"}}));
  REQUIRE(dtensor["notes"].size() == 2);
  CHECK(dtensor["notes"][0]["weight"] == "qk.weight");
  CHECK(dtensor["notes"][0]["note"] == plan["layers"][0]["weights"][0]["layout"]["dtensor_note"]);
  CHECK(dtensor["notes"][1] == json{{"output", "qk"}, {"index", 0}, {"note", plan["layers"][0]["outputs"][0]["layout"]["dtensor_note"]}});

  json hlo = json::parse(exported(plan, ExportFramework::Hlo));
  CHECK(hlo["framework"] == "hlo");
  CHECK(hlo["weights"]["qk.weight"] == plan["layers"][0]["weights"][0]["layout"]["hlo"]);
  CHECK(hlo["weights"]["out.weight"] == "{devices=[4,1,3]<=[3,4]T(1,0) last_tile_dim_replicate}");
  CHECK(hlo["outputs"]["qk"] == json{"{devices=[3,1,4]<=[3,2,2]T(0,2,1)}"});
  CHECK(!hlo.contains("notes"));

  json flat = json::parse(exported(fixture("plan_mesh2x4.json"), ExportFramework::Dtensor));
  CHECK(flat["notes"] == json::array());
  CHECK(flat["outputs"]["flat/ravel"] == json::array({json{"Shard(0)", "Shard(0)"}}));
  CHECK(flat["mesh"]["device_ids"] == json::parse("[[0, 1, 2, 3], [4, 5, 6, 7]]"));
}

TEST_CASE("export_plan: a weight read by several layers") {
  json plan = fixture("plan_mesh2x4.json");
  plan["layers"][1]["weights"][0]["name"] = "fc1.weight";  // fc2 reads fc1's weight name, with its own shape [16, 10]
  std::optional<PlanFile> file = read_plan(plan.dump(), "p.json");
  REQUIRE(file);
  CHECK_THROWS_WITH_AS((void)export_plan(*file, ExportFramework::Jax),
                       "p.json: weight 'fc1.weight' has shape [12, 16] in layer 'fc1' but [16, 10] in layer 'fc2'; a "
                       "framework holds one tensor per weight",
                       InputError);
  // The same shape in another layout (a tied weight): held as its first reader
  // lays it out, and resharded for the second. On mesh [2, 4], fc1 holds
  // columns [4c, 4c+4) of the 12 x 16 table on x1 = c, fc2 needs rows [3c,
  // 3c+3): of its 3 x 16 = 48 elements, the 3 x 4 = 12 in both it holds.
  plan["layers"][1]["weights"][0]["shape"] = {12, 16};
  json d = json::parse(exported(plan, ExportFramework::Jax));
  CHECK(d["weights"] == json::parse(R"({"fc1.weight": [null, "x1"]})"));
  CHECK(d["weight_reshards"] == json::parse(R"([{"weight": "fc1.weight", "layer": "fc2", "held_by": "fc1",
                                                 "layout": ["x1", null], "realized_words": 36}])"));
  json dtensor = json::parse(exported(plan, ExportFramework::Dtensor));
  CHECK(dtensor["weight_reshards"][0]["layout"] == json{"Replicate()", "Shard(0)"});
  plan["layers"][1]["weights"][0]["layout"]["spec"] = {json::array(), {"x1"}};  // now the same layout: listed once
  plan["layers"][1]["weights"][0]["split"] = {1, 4};
  d = json::parse(exported(plan, ExportFramework::Jax));
  CHECK(d["weights"] == json::parse(R"({"fc1.weight": [null, "x1"]})"));
  CHECK(!d.contains("weight_reshards"));
  plan["layers"][0].erase("weights");
  plan["layers"][1].erase("weights");
  const std::string none = exported(plan, ExportFramework::Jax);
  CHECK(none.find("\n  \"weights\": {},\n") != std::string::npos);
}

TEST_CASE("pase export") {
  const std::string plan = test::source_path("tests/fixtures/plan_mesh2x4.json");
  SUBCASE("to standard output and to a file") {
    test::CommandResult result = test::run_pase("export \"" + plan + "\" --format hlo");
    CHECK(result.status == 0);
    CHECK(result.error == "");
    json d = json::parse(result.output);
    CHECK(d["outputs"]["fc2"] == json{"{devices=[2,1,4]<=[8] last_tile_dim_replicate}"});
    std::string out = test::write_temp_file("export_out.json", "");
    test::CommandResult to_file = test::run_pase("export \"" + plan + "\" -f jax -o \"" + out + "\"");
    CHECK(to_file.status == 0);
    CHECK(to_file.output == "");
    CHECK(read_text_file(out) == test::run_pase("export \"" + plan + "\" --format jax").output);
  }
  SUBCASE("a strategy file without a plan") {
    json d = fixture("plan_mesh2x4.json");
    d.erase("mesh");
    std::string plain = test::write_temp_file("export_plain.json", d.dump());
    test::CommandResult result = test::run_pase("export \"" + plain + "\" --format jax");
    CHECK(result.status == 1);
    CHECK(result.output == "");
    CHECK(result.error == "error: " + plain + ": has no plan (solve with --mesh to make one)\n");
  }
  SUBCASE("a bad --format") {
    test::CommandResult result = test::run_pase("export \"" + plan + "\" --format flax");
    CHECK(result.status == 2);
    CHECK(result.output == "");
    CHECK(result.error == "error: --format: expected jax, dtensor, hlo, megatron, deepspeed or torch, got 'flax'\n");
  }
  SUBCASE("a malformed plan") {
    json d = fixture("plan_mesh2x4.json");
    d["mesh"]["axes"] = {"x0", "x0"};
    std::string bad = test::write_temp_file("export_bad.json", d.dump());
    test::CommandResult result = test::run_pase("export \"" + bad + "\" --format dtensor");
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + bad + ": field 'mesh.axes[1]': axis name 'x0' used twice (also axes[0])\n");
  }
}

// The issue's case: a GPT of the 1.7B shape (2 layers) on 64 devices of the
// calibrated dgx-a100 in bf16 holds its token table split 8 ways over d_model
// in transformer/wte, and lm_head reads it whole. The export was refused;
// now the table is held as the embedding lays it out and lm_head reshards it.
TEST_CASE("pase solve and export: a tied weight read in two layouts") {
  const std::string graph = test::write_temp_file("tied_gpt.json", "");
  REQUIRE(test::run_pase("models export gpt --layers 2 --d-model 2304 --heads 24 --ff 9216 --seq 2048 --vocab 51200 "
                         "--batch 512 -o \"" + graph + "\"").status == 0);
  const std::string plan = test::write_temp_file("tied_gpt.plan.json", "");
  test::CommandResult solved = test::run_pase("solve \"" + graph + "\" --devices 64 --cost-model calibrated --machine "
                                              "dgx-a100 --dtype bf16 --out \"" + plan + "\"");
  REQUIRE(solved.status == 0);
  // Each device holds 2304 / 8 of the table's columns and needs all of them.
  const double words = 51200.0 * 2304 * 7 / 8;
  CHECK(words == 103219200);
  CHECK(solved.output.find("\ntied weight 'transformer.wte.weight': held as layer 'transformer/wte' lays it out, read "
                           "by 'lm_head' in another layout: 1.03219e+08 words each way a step; the tied weights' "
                           "reshards cost ") != std::string::npos);
  test::CommandResult exported_plan = test::run_pase("export \"" + plan + "\" --format jax");
  REQUIRE(exported_plan.status == 0);
  json d = json::parse(exported_plan.output);
  CHECK(d["weights"]["transformer.wte.weight"] == json::parse(R"([null, ["x3", "x4", "x5"]])"));
  CHECK(d["weight_reshards"] == json::array({json{{"weight", "transformer.wte.weight"}, {"layer", "lm_head"},
                                                  {"held_by", "transformer/wte"}, {"layout", json{nullptr, nullptr}},
                                                  {"realized_words", words}}}));
}

// The reshard's price, restated for the pase model: an edge of W words costs
// 2 W word costs (in, and the gradient back), a word 8000 flop/TFLOP x 10
// TFLOP/s / 200 GB/s = 400 flop (PaSE's 8-byte words).
TEST_CASE("pase solve: a tied weight's reshard priced as an edge of its words") {
  const std::string graph = test::write_temp_file("tied_small_gpt.json", "");
  REQUIRE(test::run_pase("models export gpt --layers 2 --d-model 256 --heads 8 --ff 1024 --seq 32 --vocab 4096 "
                         "--batch 16 -o \"" + graph + "\"").status == 0);
  const std::string plan = test::write_temp_file("tied_small_gpt.plan.json", "");
  test::CommandResult solved =
      test::run_pase("solve \"" + graph + "\" --devices 8 --bandwidth 200 --out \"" + plan + "\"");
  REQUIRE(solved.status == 0);
  json d = json::parse(test::run_pase("export \"" + plan + "\" --format jax").output);
  REQUIRE(d["weight_reshards"].size() == 1);
  const double words = d["weight_reshards"][0]["realized_words"].get<double>();
  // lm_head needs a quarter of the table's rows (split over x1, x2), the
  // embedding holds eighths (over x0, x1, x2): most devices hold none of theirs.
  CHECK(words == 4096 * 256 / 4);
  const double cost = 2 * words * (8000.0 * 10 / 200);
  CHECK(cost == 209715200);
  CHECK(solved.output.find("\ntied weight 'transformer.wte.weight': held as layer 'transformer/wte' lays it out, read "
                           "by 'lm_head' in another layout: 262144 words each way a step; the tied weights' reshards "
                           "cost 209715200 flop more than the realized total (neither the search nor the placement "
                           "weighs them)\n") != std::string::npos);
}
