// libFuzzer harness: bytes as a pase-machine profile, read, written and read
// back, then used to price a small graph with the calibrated model at p = 4.
// InputError is the answer to bad input; anything else escaping, a sanitizer
// report or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/machine_profile.h"
#include "graphs/error.h"
#include "graphs/graph.h"
#include "graphs/zoo.h"

namespace {

const pase::Graph& small_graph() {
  static const pase::Graph graph = pase::build_graph(pase::build_zoo_graph("alexnet", 8), "alexnet");
  return graph;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  pase::MachineProfile profile;
  try {
    profile = pase::parse_machine_profile(text, "fuzz.json");
  } catch (const pase::InputError&) {
    return 0;
  }
  // A profile that was accepted must survive its own writer.
  const std::string written = pase::write_machine_profile(profile);
  try {
    (void)pase::parse_machine_profile(written, "written.json");
  } catch (const pase::InputError& error) {
    std::fprintf(stderr, "the written profile does not read back: %s\n%s\n", error.what(), written.c_str());
    std::abort();
  }
  try {
    const pase::CalibratedCostModel model(profile, 4);
    (void)pase::build_cost_tables(small_graph(), model);
  } catch (const pase::InputError&) {
  } catch (const pase::ResourceError&) {
  }
  return 0;
}
