// libFuzzer harness: bytes as a pase-strategy file, read and matched against
// AlexNet (batch 8) priced at p = 4. InputError is the answer to bad input;
// anything else escaping, a sanitizer report or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "costmodel/cost_tables.h"
#include "graphs/error.h"
#include "graphs/graph.h"
#include "graphs/zoo.h"
#include "solver/strategy_reader.h"

namespace {

struct Target {
  pase::Graph graph;
  pase::CostTables tables;
};

const Target& target() {
  static const Target built = [] {
    Target t;
    t.graph = pase::build_graph(pase::build_zoo_graph("alexnet", 8), "alexnet");
    pase::Machine machine;
    machine.devices = 4;
    t.tables = pase::build_cost_tables(t.graph, machine);
    return t;
  }();
  return built;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Target& t = target();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const pase::StrategyFileV1 file = pase::parse_strategy_file(text, "fuzz.json");
    (void)pase::strategy_choice(file, t.graph, t.tables);
  } catch (const pase::InputError&) {
  }
  return 0;
}
