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
  plan["layers"][1]["weights"][0]["name"] = "fc1.weight";  // fc2 reads fc1's weight name, laid out another way
  std::optional<PlanFile> file = read_plan(plan.dump(), "p.json");
  REQUIRE(file);
  CHECK_THROWS_WITH_AS((void)export_plan(*file, ExportFramework::Jax),
                       "p.json: weight 'fc1.weight' is laid out as [null,\"x1\"] by layer 'fc1' but as [\"x1\",null] by "
                       "layer 'fc2'; a framework needs one layout per weight",
                       InputError);
  plan["layers"][1]["weights"][0]["layout"]["spec"] = {json::array(), {"x1"}};  // now the same layout: listed once
  plan["layers"][1]["weights"][0]["split"] = {1, 4};
  json d = json::parse(exported(plan, ExportFramework::Jax));
  CHECK(d["weights"] == json::parse(R"({"fc1.weight": [null, "x1"]})"));
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
    CHECK(result.error == "error: --format: expected jax, dtensor or hlo, got 'flax'\n");
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
