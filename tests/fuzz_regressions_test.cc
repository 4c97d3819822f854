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
#include "graphs/error.h"
#include "graphs/graph_file.h"
#include "test_support.h"

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
