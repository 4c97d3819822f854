// `pase solve --mesh` end to end: plans of the zoo and of the ONNX fixtures
// pass `pase plan-check`, export to every framework, and a bad mesh is one
// line with exit status 2.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "base/text_file.h"

using namespace pase;

TEST_CASE("pase solve --mesh: a bad mesh is a command-line error") {
  const std::string alexnet = test::source_path("data/graphs/alexnet.json");
  struct Case {
    std::string mesh, error;
  };
  for (const Case& c : {Case{"2x2", "error: --mesh '2x2': its sizes multiply to 4, not to the 8 devices\n"},
                        Case{"2xq", "error: --mesh '2xq': expected a size, got 'q'\n"},
                        Case{"dp=2,dp=4", "error: --mesh 'dp=2,dp=4': axis 'dp' is named twice\n"},
                        Case{"dp=2,t-p=4", "error: --mesh 'dp=2,t-p=4': 't-p' is not an axis name (a letter, then letters, digits or _)\n"}}) {
    CAPTURE(c.mesh);
    test::CommandResult result = test::run_pase("solve " + alexnet + " --devices 8 --mesh '" + c.mesh + "'");
    CHECK(result.status == 2);
    CHECK(result.error == c.error);
    CHECK(result.output.empty());
  }
}

TEST_CASE("pase solve --mesh: zoo plans at p = 4, 8, 12 and 32 pass plan-check and export") {
  for (const char* name : {"alexnet", "resnet101", "inception3", "rnnlm", "transformer"}) {
    for (int p : {4, 8, 12, 32}) {
      CAPTURE(name);
      CAPTURE(p);
      std::string plan = test::write_temp_file(std::string(name) + "-" + std::to_string(p) + ".json", "");
      test::CommandResult solved = test::run_pase("solve " + test::source_path(std::string("data/graphs/") + name + ".json") +
                                                  " --devices " + std::to_string(p) + " --mesh auto -o " + plan);
      REQUIRE(solved.status == 0);
      CHECK(solved.output.find("plan on mesh ") != std::string::npos);
      test::CommandResult checked = test::run_pase("plan-check " + plan);
      CHECK(checked.status == 0);
      CHECK(checked.output.find("all consistent") != std::string::npos);
      if (p == 12) {
        for (const char* format : {"jax", "dtensor", "hlo"}) {
          test::CommandResult exported = test::run_pase("export " + plan + " --format " + format);
          CHECK(exported.status == 0);
          CHECK(exported.output.find("\"mesh\"") != std::string::npos);
        }
      }
    }
  }
}

TEST_CASE("pase solve --mesh: named axes and a mesh the optimum must respect") {
  const std::string alexnet = test::source_path("data/graphs/alexnet.json");
  std::string plan = test::write_temp_file("alexnet-dp-tp.json", "");
  test::CommandResult solved = test::run_pase("solve " + alexnet + " --devices 8 --mesh dp=2,tp=4 --devices-per-node 4 -o " + plan);
  REQUIRE(solved.status == 0);
  CHECK(solved.output.find("plan on mesh dp=2 x tp=4") != std::string::npos);
  test::CommandResult checked = test::run_pase("plan-check " + plan);
  CHECK(checked.status == 0);
  CHECK(read_text_file(plan).find("\"mesh\": {\"shape\":[2,4],\"axes\":[\"dp\",\"tp\"],\"devices_per_node\":4}") !=
        std::string::npos);
  // Without a node size, the whole mesh is recorded as one node.
  test::CommandResult one_node = test::run_pase("solve " + alexnet + " --devices 8 --mesh auto --json");
  CHECK(one_node.output.find("\"devices_per_node\":8}") != std::string::npos);
  std::string text = test::run_pase("export " + plan + " --format dtensor").output;
  CHECK(text.find("\"axis_names\":[\"dp\",\"tp\"]") != std::string::npos);
}

#ifdef PASE_HAVE_ONNX
TEST_CASE("pase solve --mesh: plans of the ONNX fixtures pass plan-check") {
  for (const char* name : {"alexnet", "vgg16", "resnet50", "inception_v3", "transformer_encoder", "parameter_layouts"}) {
    CAPTURE(name);
    std::string plan = test::write_temp_file(std::string("onnx-") + name + ".json", "");
    test::CommandResult solved =
        test::run_pase("solve " + test::source_path(std::string("data/onnx/") + name + ".onnx") + " --devices 8 --mesh auto -o " + plan);
    REQUIRE(solved.status == 0);
    test::CommandResult checked = test::run_pase("plan-check " + plan);
    CHECK(checked.status == 0);
    CHECK(checked.output.find("all consistent") != std::string::npos);
  }
}
#endif

TEST_CASE("pase solve without --mesh: the PaSE optimum, placed on the default mesh when it realizes it") {
  const std::string alexnet = test::source_path("data/graphs/alexnet.json");
  // p = 8: every chosen configuration fits [2, 2, 2]; the optimum is the
  // reference's (no restriction) and the plan passes the check.
  std::string plan = test::write_temp_file("alexnet-default-8.json", "");
  test::CommandResult solved = test::run_pase("solve " + alexnet + " --devices 8 -o " + plan);
  REQUIRE(solved.status == 0);
  CHECK(solved.output.find("total cost 97098296512 flop") != std::string::npos);
  CHECK(solved.output.find("plan on mesh x0=2 x x1=2 x x2=2: redistribution realized") != std::string::npos);
  CHECK(solved.output.find("axis assignment exact (every assignment weighed)") != std::string::npos);
  const std::string text = read_text_file(plan);
  CHECK(text.find("\"mesh\": {\"shape\":[2,2,2],\"axes\":[\"x0\",\"x1\",\"x2\"],\"devices_per_node\":8}") != std::string::npos);
  CHECK(text.find("\"axis_assignment\": {\"method\":\"dp\",\"exact\":true,\"proof\":\"all_assignments\"") != std::string::npos);
  CHECK(test::run_pase("plan-check " + plan).status == 0);
  // p = 12: the optimum splits conv1's batch 8 ways, which [3, 2, 2] cannot
  // realize: no plan, and one line that says why.
  std::string bare = test::write_temp_file("alexnet-default-12.json", "");
  test::CommandResult twelve = test::run_pase("solve " + alexnet + " --devices 12 -o " + bare);
  REQUIRE(twelve.status == 0);
  CHECK(twelve.output.find("no plan on the default mesh: layer 'conv1' splits (8,1,1,1,1,1,1), which mesh [3,2,2] cannot "
                           "realize (--mesh auto restricts the search to configurations it realizes)\n") != std::string::npos);
  const std::string bare_text = read_text_file(bare);
  CHECK(bare_text.find("\"mesh\"") == std::string::npos);
  CHECK(bare_text.find("\"plan_unavailable\": \"layer 'conv1' splits (8,1,1,1,1,1,1), which mesh [3,2,2] cannot realize\"") !=
        std::string::npos);
  test::CommandResult refused = test::run_pase("export " + bare + " --format jax");
  CHECK(refused.status != 0);
  // With --json the note goes to stderr, keeping stdout one JSON document.
  test::CommandResult json = test::run_pase("solve " + alexnet + " --devices 12 --json");
  CHECK(json.status == 0);
  CHECK(json.error.find("no plan on the default mesh: layer 'conv1'") == 0);
  // --no-plan: the strategy alone; it excludes --mesh.
  test::CommandResult plain = test::run_pase("solve " + alexnet + " --devices 8 --no-plan --json");
  REQUIRE(plain.status == 0);
  CHECK(plain.output.find("\"mesh\"") == std::string::npos);
  CHECK(plain.output.find("\"plan_unavailable\"") == std::string::npos);
  test::CommandResult both = test::run_pase("solve " + alexnet + " --devices 8 --no-plan --mesh auto");
  CHECK(both.status == 2);
  CHECK(both.error == "error: --mesh excludes --no-plan\n");
}

TEST_CASE("pase export: pase's LLaMA graph lays its attention weights out on the checkpoint's shapes") {
  const std::string graph = test::write_temp_file("llama-ckpt.json", "");
  const std::string plan = test::write_temp_file("llama-ckpt.plan.json", "");
  REQUIRE(test::run_pase("models export llama --layers 1 --d-model 256 --heads 4 --kv-heads 2 --ff 512 --seq 32 "
                         "--vocab 4096 --batch 4 -o " + graph).status == 0);
  REQUIRE(test::run_pase("solve " + graph + " --devices 4 --bandwidth 1000 --mesh tp=4 -o " + plan).status == 0);
  const nlohmann::json exported = nlohmann::json::parse(test::run_pase("export " + plan + " --format dtensor").output);
  // q_proj splits its input dimension: [2, 2, 64, 256] with Shard(3) in the
  // graph, [256, 256] with Shard(1) as Hugging Face's Linear holds it.
  CHECK(exported["weights"]["model.layers.0.self_attn.q_proj.weight"] == nlohmann::json{"Shard(1)"});
  CHECK(exported["weight_shapes"]["model.layers.0.self_attn.q_proj.weight"] ==
        nlohmann::json::parse(R"({"shape": [256, 256], "graph_shape": [2, 2, 64, 256], "merges": [[0, 1, 2], [3]]})"));
  // o_proj splits the head dimension, the minor one of the merged [heads · head dim]:
  // laid out on the graph's shape, and the note says why.
  const nlohmann::json& o = exported["weight_shapes"]["model.layers.0.self_attn.o_proj.weight"];
  CHECK(o["shape"] == nlohmann::json{256, 2, 2, 64});
  CHECK(o["checkpoint_shape"] == nlohmann::json{256, 256});
  CHECK(o["note"].get<std::string>().find("dimension 3 is split 4 ways while dimension 1 is split 1 of 2") !=
        std::string::npos);
  CHECK(exported["weights"]["model.layers.0.self_attn.o_proj.weight"] == nlohmann::json{"Shard(3)"});
  CHECK(exported["weight_shapes"]["model.embed_tokens.weight"] == nlohmann::json::parse(R"({"shape": [4096, 256]})"));

  // The plan's "checkpoint" must follow from the weight's layout.
  nlohmann::json document = nlohmann::json::parse(read_text_file(plan));
  for (nlohmann::json& layer : document["layers"])
    if (layer["name"] == "model/layers.0/self_attn/q_proj") layer["weights"][0]["checkpoint"]["merges"] = {{0, 1}, {2, 3}};
  const std::string tampered = test::write_temp_file("llama-ckpt.tampered.json", document.dump());
  test::CommandResult refused = test::run_pase("export " + tampered + " --format jax");
  CHECK(refused.status == 1);
  CHECK(refused.error == "error: " + tampered + ": layer 'model/layers.0/self_attn/q_proj': field "
                         "'weights[0].checkpoint.merges': expected [[0, 1, 2], [3]], the weight's [2, 2, 64, 256] "
                         "merged into [256, 256]\n");
}
