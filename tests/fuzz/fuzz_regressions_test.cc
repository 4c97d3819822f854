// The fuzz harnesses' inputs replayed through the same calls
// (fuzz/fuzz_targets.h, docs/fuzzing.md), in every build, the sanitizer build
// included: each seed of fuzz/corpus/ is accepted or is one line of bad
// input, and each input a campaign found (tests/fixtures/fuzz/) now gives its
// exact one-line error.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.h"
#include "base/error.h"
#include "test_support.h"
#include "base/text_file.h"

using namespace pase;

namespace {

using Target = void (*)(const std::string&);

struct Harness {
  const char* name;  ///< fuzz/corpus/NAME, tests/fixtures/fuzz/NAME without "fuzz_"
  Target target;
};

std::vector<Harness> harnesses() {
  std::vector<Harness> all = {{"fuzz_graph_reader", fuzz::graph_input},
                              {"fuzz_strategy_reader", fuzz::strategy_input},
                              {"fuzz_plan_reader", fuzz::plan_input},
                              {"fuzz_machine_profile", fuzz::machine_profile_input}};
#ifdef PASE_HAVE_ONNX
  all.push_back({"fuzz_onnx_import", fuzz::onnx_input});
#endif
  return all;
}

// "" when the input is accepted, the one-line message when it is bad input,
// "refused: ..." when it is too large. Anything else (a broken round trip,
// an internal error) escapes and fails the test.
std::string outcome(Target target, const std::string& bytes) {
  try {
    target(bytes);
  } catch (const InputError& error) {
    return error.what();
  } catch (const ResourceError& error) {
    return std::string("refused: ") + error.what();
  }
  return "";
}

std::vector<std::filesystem::path> files_in(const std::string& relative) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path folder = test::source_path(relative);
  if (!std::filesystem::is_directory(folder)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("fuzz seeds: each is accepted or one line of bad input") {
  for (const Harness& harness : harnesses()) {
    const std::vector<std::filesystem::path> seeds = files_in(std::string("fuzz/corpus/") + harness.name);
    CHECK_MESSAGE(!seeds.empty(), harness.name);
    for (const std::filesystem::path& seed : seeds) {
      INFO(harness.name, " ", seed.filename().string());
      const std::string result = outcome(harness.target, read_text_file(seed.string()));
      CHECK(result.find('\n') == std::string::npos);
    }
  }
}

// Every file of tests/fixtures/fuzz/ with what its harness's calls now say:
// the exact line of bad input, "refused: ..." for a request over a limit, or
// "" for an input now accepted. A file missing from this table fails too.
TEST_CASE("fuzz regressions: each finding is now one exact line") {
  struct Finding {
    const char* harness;  ///< fuzz_NAME; the file lies in tests/fixtures/fuzz/NAME/
    const char* file;
    const char* outcome;
    const char* was;      ///< what it did before the fix
  };
  const std::vector<Finding> findings = {
      {"fuzz_graph_reader", "fold_run_starting_at_vertex_9_of_period_12.json", "",
       "the Transformer with two inputs rewired: a run of repeated blocks found from vertex 9 with a period of 12, "
       "whose separator before its first block would be vertices -2 and 8: an out-of-range read (UBSan) folding it; "
       "\"refused: out of memory\" in a release build"},
      {"fuzz_plan_reader", "mesh_of_16777216_devices.json",
       "refused: fuzz.json: the plan's mesh has 16777216 devices, above the limit of 4096 (the device limit of the "
       "export); the export lists every device's id",
       "plan-check visited all 2^24 devices: 90 s and 5 GiB for 2.6 KB of plan; export took 5 s and 1.7 GiB"},
      {"fuzz_plan_reader", "mesh_of_2_to_the_62_devices.json",
       "refused: fuzz.json: the plan's mesh has 4611686018427387904 devices, above the limit of 4096 (the device "
       "limit of the export); the export lists every device's id",
       "export listed every device id: killed past 22 GB of memory"},
      {"fuzz_plan_reader", "replicated_20_letter_layer_on_256_devices.json", "",
       "every device computed the whole 2^20-point shrunk problem: 28 s and 4 GiB for 2.4 KB of plan"},
      {"fuzz_onnx_import", "conv_stride_0.onnx",
       "fuzz.onnx: node '/features/features.8/Conv' (Conv): attribute 'strides' must be positive, got 0",
       "AlexNet with one Conv's strides set to 0: a division by zero (SIGFPE) inside libonnx's shape inference"},
      {"fuzz_onnx_import", "gemm_with_one_input.onnx",
       "fuzz.onnx: node '/classifier/classifier.4/Gemm' (Gemm): 1 inputs, its ONNX schema takes 2 to 3",
       "the lowering read the Gemm's second input past the end of its list (heap-buffer-overflow)"},
  };
  std::vector<std::string> listed;
  for (const Finding& finding : findings) {
    const std::string name = std::string(finding.harness).substr(5);  // without "fuzz_"
    listed.push_back(name + "/" + finding.file);
    Target target = nullptr;
    for (const Harness& harness : harnesses())
      if (harness.name == std::string(finding.harness)) target = harness.target;
    if (!target) continue;  // an ONNX finding in a build without the importer
    INFO(finding.harness, " ", finding.file, " (was: ", finding.was, ")");
    const std::string bytes = read_text_file(test::source_path("tests/fixtures/fuzz/" + name + "/" + finding.file));
    CHECK(outcome(target, bytes) == finding.outcome);
  }
  for (const Harness& harness : harnesses()) {
    const std::string name = std::string(harness.name).substr(5);
    for (const std::filesystem::path& file : files_in("tests/fixtures/fuzz/" + name)) {
      INFO("tests/fixtures/fuzz/", name, "/", file.filename().string(), " needs an entry in the table");
      CHECK(std::count(listed.begin(), listed.end(), name + "/" + file.filename().string()) == 1);
    }
  }
}

TEST_CASE("pase plan-check: a mesh past --max-devices is refused, exit 3, in an instant") {
  const std::string file = test::source_path("tests/fixtures/fuzz/plan_reader/mesh_of_16777216_devices.json");
  const test::CommandResult refused = test::run_pase("plan-check " + file);
  CHECK(refused.status == 3);
  CHECK(refused.error == "error: refused: " + file +
                             ": the plan's mesh has 16777216 devices, above the limit of 65536 (--max-devices); the "
                             "check visits every device's tiles\n");
  const test::CommandResult small = test::run_pase("plan-check " + file + " --max-devices 0");
  CHECK(small.status == 2);
}

TEST_CASE("pase plan-check: a layer replicated on every device is computed on a smaller shrunk problem") {
  const std::string file = test::source_path("tests/fixtures/fuzz/plan_reader/replicated_20_letter_layer_on_256_devices.json");
  const test::CommandResult result = test::run_pase("plan-check " + file);
  CHECK(result.status == 0);
  CHECK(result.output ==
        "plan-check: 1 layer checked (1 computed on a shrunk problem, 0 layout only), 0 edges checked, all consistent\n");
}

TEST_CASE("pase export: a mesh past --max-devices is refused, exit 3, in an instant") {
  const std::string file = test::source_path("tests/fixtures/fuzz/plan_reader/mesh_of_2_to_the_62_devices.json");
  const test::CommandResult refused = test::run_pase("export " + file + " --format jax");
  CHECK(refused.status == 3);
  CHECK(refused.error == "error: refused: " + file +
                             ": the plan's mesh has 4611686018427387904 devices, above the limit of 1048576 "
                             "(--max-devices); the export lists every device's id\n");
  const std::string small = test::source_path("tests/fixtures/fuzz/plan_reader/replicated_20_letter_layer_on_256_devices.json");
  CHECK(test::run_pase("export " + small + " --format jax").status == 0);
  const test::CommandResult limited = test::run_pase("export " + small + " --format jax --max-devices 255");
  CHECK(limited.status == 3);
  CHECK(limited.error == "error: refused: " + small +
                             ": the plan's mesh has 256 devices, above the limit of 255 (--max-devices); the export "
                             "lists every device's id\n");
}
