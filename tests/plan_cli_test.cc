// `pase solve --mesh` end to end: plans of the zoo and of the ONNX fixtures
// pass `pase plan-check`, export to every framework, and a bad mesh is one
// line with exit status 2.
#include <doctest/doctest.h>

#include "graphs/graph_file.h"
#include "test_support.h"

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
