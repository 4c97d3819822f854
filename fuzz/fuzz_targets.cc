#include "fuzz/fuzz_targets.h"

#include <optional>
#include <stdexcept>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/machine_profile.h"
#include "costmodel/memory_model.h"
#include "base/error.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "graphs/zoo.h"
#include "dp/bounded_solve.h"
#include "plans/plan_check.h"
#include "plans/plan_export.h"
#include "plans/plan_reader.h"
#include "strategy/strategy_file.h"
#include "strategy/strategy_reader.h"

namespace pase::fuzz {
namespace {

// A small p keeps every vertex's configurations few (O(rank^2) at p = 4), so
// an input is priced and solved in milliseconds.
constexpr int64_t kDevices = 4;
// plan-check visits every device of a plan's mesh and export lists them; a
// smaller limit than the CLI's keeps each input fast.
constexpr int64_t kMaxPlanDevices = 4096;

// The graph the strategy and profile harnesses use: built once per process.
const Graph& alexnet() {
  static const Graph graph = build_graph(build_zoo_graph("alexnet", 8), "alexnet");
  return graph;
}

const CostTables& alexnet_tables() {
  static const CostTables tables = [] {
    Machine machine;
    machine.devices = kDevices;
    return build_cost_tables(alexnet(), machine);
  }();
  return tables;
}

// Something this program wrote that it does not read back the same: a bug.
[[noreturn]] void broken_round_trip(const std::string& what, const std::string& text) {
  throw std::logic_error(what + ":\n" + text);
}

// A file the reader accepted, written out, must read back and write the same text.
void check_graph_writer(const GraphFileV1& file) {
  const std::string written = write_graph_file(file);
  std::string again;
  try {
    again = write_graph_file(parse_graph_file(written, "written.json"));
  } catch (const InputError& error) {
    broken_round_trip(std::string("the written graph does not read back: ") + error.what(), written);
  }
  if (again != written) broken_round_trip("the written graph writes differently when read back", written + "\n" + again);
}

// The strategy the solver wrote must read back as the same choice.
void check_strategy_round_trip(const Graph& graph, const CostTables& tables, const Solution& solution) {
  const std::string text = write_strategy_file(graph, tables, solution.choice, solution.cost, nullptr);
  std::vector<int32_t> read;
  try {
    read = strategy_choice(parse_strategy_file(text, "written.json"), graph, tables);
  } catch (const InputError& error) {
    broken_round_trip(std::string("the written strategy does not read back: ") + error.what(), text);
  }
  if (read != solution.choice) broken_round_trip("the written strategy reads back as another choice", text);
}

}  // namespace

void graph_input(const std::string& text) {
  const GraphFileV1 file = parse_graph_file(text, "fuzz.json");
  check_graph_writer(file);
  const Graph graph = build_graph(file, "fuzz.json");
  Machine machine;
  machine.devices = kDevices;
  const CostTables tables = build_cost_tables(graph, machine, /*max_configs=*/size_t{1} << 12);
  SolveOptions options;
  options.dp.threads = 1;
  options.dp.max_table_bytes = uint64_t{16} << 20;
  options.dp.max_work = uint64_t{2} * 1000 * 1000;
  const Answer answer = solve_or_bound(tables.objective, graph.vertex_names(), options, /*exact=*/false);
  const MemoryTables memory = build_memory_tables(graph, tables, TrainingSetup{});
  (void)plan_memory(memory, answer.solution.choice);
  check_strategy_round_trip(graph, tables, answer.solution);
}

void strategy_input(const std::string& text) {
  (void)strategy_choice(parse_strategy_file(text, "fuzz.json"), alexnet(), alexnet_tables());
}

void plan_input(const std::string& text) {
  const std::optional<PlanFile> plan = read_plan(text, "fuzz.json");
  if (!plan) return;
  // `pase export` and `pase plan-check` read the same file independently.
  for (ExportFramework framework : {ExportFramework::Jax, ExportFramework::Dtensor, ExportFramework::Hlo})
    (void)export_plan(*plan, framework, kMaxPlanDevices);
  PlanCheckOptions options;
  options.max_devices = kMaxPlanDevices;
  (void)check_plan(*plan, options);
}

void machine_profile_input(const std::string& text) {
  const MachineProfile profile = parse_machine_profile(text, "fuzz.json");
  const std::string written = write_machine_profile(profile);
  try {
    (void)parse_machine_profile(written, "written.json");
  } catch (const InputError& error) {
    broken_round_trip(std::string("the written profile does not read back: ") + error.what(), written);
  }
  const CalibratedCostModel model(profile, kDevices);
  (void)build_cost_tables(alexnet(), model);
}

}  // namespace pase::fuzz
