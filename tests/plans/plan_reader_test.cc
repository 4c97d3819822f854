// Reading plans (plans/plan_reader.h): the fields of the fixtures, and a
// one-line error naming file, layer and field for each malformed one.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "plans/plan_reader.h"
#include "plan_fixture.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

json fixture(const std::string& name) { return test::plan_fixture(name); }

json& layer(json& document, const std::string& name) { return test::plan_layer(document, name); }

// The error read_plan raises for the document ("" if none).
std::string error(const json& document) {
  try {
    (void)read_plan(document.dump(), "p.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("read_plan: the fields of a plan") {
  std::optional<PlanFile> file = read_plan(fixture("plan_mesh2x4.json").dump(), "p.json");
  REQUIRE(file);
  CHECK(file->source == "p.json");
  CHECK(file->graph == "two_fc");
  CHECK(file->devices == 8);
  const Plan& plan = file->plan;
  CHECK(plan.mesh.shape == std::vector<int64_t>{2, 4});
  CHECK(plan.mesh.axes == std::vector<std::string>{"x0", "x1"});
  CHECK(plan.mesh.devices_per_node == 8);
  CHECK(plan.realized_total_cost == 1160.0);
  REQUIRE(plan.layers.size() == 4);
  REQUIRE(file->written.size() == 4);

  const PlannedLayer& fc1 = plan.layers[0];
  CHECK(fc1.name == "fc1");
  CHECK(fc1.op == "fc");
  CHECK(fc1.dims == "bnk");
  CHECK(fc1.config == std::vector<int64_t>{2, 4, 1});
  CHECK(fc1.mesh_axes == std::vector<std::vector<int>>{{0}, {1}, {}});
  REQUIRE(fc1.inputs.size() == 1);
  CHECK(fc1.inputs[0].name == "x");
  CHECK(fc1.inputs[0].shape == Shape{8, 12});
  CHECK(fc1.inputs[0].split == std::vector<int64_t>{2, 1});
  CHECK(fc1.inputs[0].dims == std::vector<std::string>{"b", "k"});
  CHECK(fc1.inputs[0].spec == AxisSpec{{0}, {}});
  CHECK(!fc1.inputs[0].realized_words);
  REQUIRE(fc1.weights.size() == 1);
  CHECK(fc1.weights[0].name == "fc1.weight");
  CHECK(fc1.weights[0].spec == AxisSpec{{}, {1}});
  CHECK(fc1.weights[0].grad_allreduce_axes == std::vector<int>{0});
  REQUIRE(fc1.outputs.size() == 1);
  CHECK(fc1.outputs[0].name == "");
  CHECK(fc1.outputs[0].spec == AxisSpec{{0}, {1}});
  const WrittenLayout& weight_texts = file->written[0].weights[0];
  CHECK(weight_texts.jax == "P(None, 'x1')");
  CHECK(weight_texts.hlo == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  CHECK(weight_texts.has_dtensor);
  CHECK(weight_texts.dtensor == std::vector<std::string>{"Replicate()", "Shard(1)"});

  const PlannedLayer& add = plan.layers[2];
  CHECK(add.inputs[0].model_words == 10.0);
  CHECK(add.inputs[0].realized_words == 10.0);
  CHECK(add.weights.empty());
  const PlannedLayer& ravel = plan.layers[3];
  CHECK(ravel.outputs[0].dims == std::vector<std::string>{"bn"});
  CHECK(ravel.outputs[0].spec == AxisSpec{{0, 1}});

  std::optional<PlanFile> other = read_plan(fixture("plan_mesh3x2x2.json").dump(), "q.json");
  REQUIRE(other);
  CHECK(other->plan.mesh.devices() == 12);
  CHECK(other->plan.layers[0].mesh_axes[2] == std::vector<int>{2, 1});  // h: sp, tp
  const WrittenLayout& null_texts = other->written[0].weights[0];
  CHECK(null_texts.has_dtensor);
  CHECK(!null_texts.dtensor);
  CHECK(null_texts.dtensor_note);
}

TEST_CASE("read_plan: a strategy without a plan") {
  json document = fixture("plan_mesh2x4.json");
  document.erase("mesh");
  CHECK(!read_plan(document.dump(), "p.json"));
  document["format"] = "pase-graph";
  CHECK(error(document) == "p.json: field 'format': expected \"pase-strategy\", got \"pase-graph\": this is a graph file, not a strategy file");
}

TEST_CASE("read_plan: one-line errors") {
  json d = fixture("plan_mesh2x4.json");
  SUBCASE("mesh sizes whose product is not the device count") {
    d["mesh"]["shape"] = {2, 3};
    CHECK(error(d) == "p.json: field 'mesh.shape': the axis sizes [2, 3] make 6 devices, but 'devices' is 8");
  }
  SUBCASE("an axis name used twice") {
    d["mesh"]["axes"] = {"x0", "x0"};
    CHECK(error(d) == "p.json: field 'mesh.axes[1]': axis name 'x0' used twice (also axes[0])");
  }
  SUBCASE("a name per axis") {
    d["mesh"]["axes"] = {"x0"};
    CHECK(error(d) == "p.json: field 'mesh.axes': expected 2 names (one per size in 'shape'), got 1");
  }
  SUBCASE("an axis of size 0") {
    d["mesh"]["shape"] = {2, 0};
    CHECK(error(d) == "p.json: field 'mesh.shape[1]': expected a positive axis size, got 0");
  }
  SUBCASE("mesh not an object") {
    d["mesh"] = {2, 4};
    CHECK(error(d) == "p.json: field 'mesh': expected an object, got an array");
  }
  SUBCASE("an unknown axis in a spec") {
    layer(d, "fc1")["inputs"][0]["layout"]["spec"][0] = {"x9"};
    CHECK(error(d) ==
          "p.json: layer 'fc1': field 'inputs[0].layout.spec[0][0]': unknown mesh axis 'x9' (the mesh's axes are x0, x1)");
  }
  SUBCASE("a spec that does not make the split") {
    layer(d, "fc1")["inputs"][0]["layout"]["spec"][0] = {"x1"};
    CHECK(error(d) == "p.json: layer 'fc1': field 'inputs[0].layout.spec[0]': the axes [x1] make 4 pieces, but split[0] is 2");
  }
  SUBCASE("an axis in two dimensions of a tensor") {
    layer(d, "fc1")["outputs"][0]["layout"]["spec"][1] = {"x0"};
    CHECK(error(d) == "p.json: layer 'fc1': field 'outputs[0].layout.spec[1][0]': axis 'x0' is also in spec[0]");
  }
  SUBCASE("an axis under two letters") {
    layer(d, "fc1")["mesh_axes"]["k"] = {"x0"};
    CHECK(error(d) == "p.json: layer 'fc1': field 'mesh_axes.k[0]': axis 'x0' is also under letter 'b'");
  }
  SUBCASE("mesh axes that do not make the config") {
    layer(d, "fc1")["mesh_axes"]["n"] = json::array();
    CHECK(error(d) == "p.json: layer 'fc1': field 'mesh_axes.n': the axes [] make 1 piece, but config[1] (letter 'n') is 4");
  }
  SUBCASE("a letter without mesh axes") {
    layer(d, "fc1")["mesh_axes"].erase("k");
    CHECK(error(d) == "p.json: layer 'fc1': field 'mesh_axes.k': missing");
  }
  SUBCASE("mesh axes for a letter the layer lacks") {
    layer(d, "fc1")["mesh_axes"]["z"] = json::array();
    CHECK(error(d) == "p.json: layer 'fc1': field 'mesh_axes.z': not a letter of the layer's dims 'bnk'");
  }
  SUBCASE("a tensor dimension following an unknown letter") {
    layer(d, "fc1")["inputs"][0]["dims"][1] = "z";
    CHECK(error(d) == "p.json: layer 'fc1': field 'inputs[0].dims[1]': 'z' is not a letter of the layer's dims 'bnk'");
  }
  SUBCASE("a split per dimension") {
    layer(d, "fc1")["inputs"][0]["split"] = {2, 1, 1};
    CHECK(error(d) == "p.json: layer 'fc1': field 'inputs[0].split': expected 2 entries (one per dimension of 'shape'), got 3");
  }
  SUBCASE("a spec per dimension") {
    layer(d, "fc2")["weights"][0]["layout"]["spec"] = json::array({json::array()});  // {json::array()} is [] under clang
    CHECK(error(d) == "p.json: layer 'fc2': field 'weights[0].layout.spec': expected 2 entries (one per dimension of 'shape'), got 1");
  }
  SUBCASE("a config entry per letter") {
    layer(d, "fc1")["config"] = {2, 4};
    CHECK(error(d) == "p.json: layer 'fc1': field 'config': expected 3 entries (one per letter of dims 'bnk'), got 2");
  }
  SUBCASE("a weight without gradient axes") {
    layer(d, "fc1")["weights"][0].erase("grad_allreduce_axes");
    CHECK(error(d) == "p.json: layer 'fc1': field 'weights[0].grad_allreduce_axes': missing");
  }
  SUBCASE("negative realized words") {
    layer(d, "add")["inputs"][0]["redistribution"]["realized_words"] = -1;
    CHECK(error(d) == "p.json: layer 'add': field 'inputs[0].redistribution.realized_words': expected a non-negative number, got -1");
  }
  SUBCASE("a layout without a spec") {
    layer(d, "add")["outputs"][0]["layout"].erase("spec");
    CHECK(error(d) == "p.json: layer 'add': field 'outputs[0].layout.spec': missing (the mesh axes of each dimension)");
  }
  SUBCASE("dtensor placements that are not strings") {
    layer(d, "add")["outputs"][0]["layout"]["dtensor"] = {0, 1};
    CHECK(error(d) == "p.json: layer 'add': field 'outputs[0].layout.dtensor[0]': expected a string, got an integer");
  }
  SUBCASE("a layer listed twice") {
    d["layers"].push_back(layer(d, "fc1"));
    CHECK(error(d) == "p.json: layer 'fc1': listed twice (layers[0] and layers[4])");
  }
}

TEST_CASE("find_producer: layer names and output ports") {
  std::optional<PlanFile> file = read_plan(fixture("plan_mesh2x4.json").dump(), "p.json");
  REQUIRE(file);
  auto fc2 = find_producer(file->plan, "fc2");
  REQUIRE(fc2);
  CHECK(fc2->layer == 1);
  CHECK(fc2->port == 0);
  auto port = find_producer(file->plan, "flat/ravel:1");
  REQUIRE(port);
  CHECK(port->layer == 3);
  CHECK(port->port == 1);
  CHECK(!find_producer(file->plan, "skip"));
  CHECK(!find_producer(file->plan, "fc2:"));
  CHECK(!find_producer(file->plan, "fc2:x"));
}
