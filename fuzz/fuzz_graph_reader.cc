// libFuzzer harness: bytes as a pase-graph file, through the reader (whose
// accepted files must survive the writer: written, read and written again
// gives the same text), shape inference, pricing at p = 4, a solve within small limits (the bounded solve
// answers past them), the strategy file written and read back.
//
// InputError and ResourceError are the answers bad or oversized input may
// get; anything else escaping (an assertion's logic_error, bad_alloc, a
// library's own exception), a sanitizer report or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "graphs/error.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "solver/bounded_solve.h"
#include "solver/strategy_file.h"
#include "solver/strategy_reader.h"

namespace {

// A file the reader accepted, written out, must read back and write the same text.
void check_writer(const pase::GraphFileV1& file) {
  const std::string written = pase::write_graph_file(file);
  try {
    const std::string again = pase::write_graph_file(pase::parse_graph_file(written, "written.json"));
    if (again == written) return;
    std::fprintf(stderr, "the written graph writes differently when read back:\n%s\n%s\n", written.c_str(), again.c_str());
  } catch (const pase::InputError& error) {
    std::fprintf(stderr, "the written graph does not read back: %s\n%s\n", error.what(), written.c_str());
  }
  std::abort();
}

// The strategy the solver wrote must read back as the same choice.
void check_round_trip(const pase::Graph& graph, const pase::CostTables& tables, const pase::Solution& solution) {
  const std::string text = pase::write_strategy_file(graph, tables, solution.choice, solution.cost, nullptr);
  try {
    const pase::StrategyFileV1 file = pase::parse_strategy_file(text, "written.json");
    if (pase::strategy_choice(file, graph, tables) == solution.choice) return;
    std::fprintf(stderr, "the written strategy reads back as another choice:\n%s\n", text.c_str());
  } catch (const pase::InputError& error) {
    std::fprintf(stderr, "the written strategy does not read back: %s\n%s\n", error.what(), text.c_str());
  }
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const pase::GraphFileV1 file = pase::parse_graph_file(text, "fuzz.json");
    check_writer(file);
    const pase::Graph graph = pase::build_graph(file, "fuzz.json");
    pase::Machine machine;
    machine.devices = 4;
    // Few configurations per vertex: at p = 4 a vertex of rank r has O(r^2).
    const pase::CostTables tables = pase::build_cost_tables(graph, machine, /*max_configs=*/size_t{1} << 12);
    pase::SolveOptions options;
    options.dp.threads = 1;
    options.dp.max_table_bytes = uint64_t{16} << 20;
    options.dp.max_work = uint64_t{2} * 1000 * 1000;
    const pase::Answer answer = pase::solve_or_bound(graph, tables, options, /*exact=*/false);
    const pase::MemoryTables memory = pase::build_memory_tables(graph, tables, pase::MemoryOptions{});
    (void)pase::plan_memory(memory, answer.solution.choice);
    check_round_trip(graph, tables, answer.solution);
  } catch (const pase::InputError&) {
  } catch (const pase::ResourceError&) {
  }
  return 0;
}
