#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/count_option.h"
#include "cli/exit_status.h"
#include "cli/byte_size.h"
#include "cli/graph_input.h"
#include "cli/onnx_loader.h"
#include "cli/memory_options.h"
#include "cli/model_options.h"
#include "cli/process_memory.h"
#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "base/error.h"
#include "graphs/graph.h"
#include "cli/progress_line.h"
#include "cli/text_output.h"
#include "dp/bounded_solve.h"
#include "plans/build_plan.h"
#include "base/duration_text.h"
#include "memorycap/memory_cap.h"
#include "plans/mesh.h"
#include "dp/solve.h"
#include "strategy/strategy_file.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct SolveCliOptions {
  std::string graph;
  int64_t devices = 0;
  CostModelOptions model;
  MemoryCliOptions memory;
  std::string out;
  bool json = false;
  bool stats = false;
  bool plan_only = false;
  std::string order = "mindegree";
  uint64_t max_table_bytes = 0;  // 0: half of physical memory
  uint64_t max_work = DpOptions{}.max_work;
  int threads = 0;
  std::string mesh;              // empty: the default mesh, if it realizes the optimum
  bool no_plan = false;
  bool exact = false;
  bool no_fold = false;
  bool timings = false;
  int64_t devices_per_node = 0;  // 0: from the machine profile, if any
  // Import options for an ONNX model, as `pase import` takes them.
  int64_t batch = 0;  // 0: as exported
  std::string loss;   // empty: softmax_xent
  std::string lenient;  // empty: off; "true" (the bare flag) or "force"
};

// Placement steps (build_plan.h's PlanOptions::max_work) a solve without
// --mesh spends at most; about 0.2 s on one core. Past it the plan keeps the
// best assignment of fewer candidates and says it is not proven optimal.
constexpr uint64_t kDefaultPlacementWork = uint64_t{200} * 1000 * 1000;

uint64_t default_table_limit() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
}

std::string format_config(const std::vector<int32_t>& config) {
  std::string text = "(";
  for (size_t i = 0; i < config.size(); ++i) text += (i ? "," : "") + std::to_string(config[i]);
  return text + ")";
}

std::string format_cost(double cost) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", cost);
  return buffer;
}

void print_memory(std::ostream& out, const MemoryReport& memory, const std::string& unit) {
  out << "memory per device " << format_gib(memory.bytes.total()) << " GiB (weights " << format_gib(memory.bytes.weights)
      << " GiB with gradients and " << optimizer_name(memory.options.optimizer) << " state, activations "
      << format_gib(memory.bytes.activations) << " GiB; " << dtype_name(memory.options.dtype) << ")";
  if (memory.cap)
    out << ", cap " << format_gib(*memory.cap) << " GiB: lower bound " << format_total(*memory.lower_bound, unit) << " "
        << unit << ", gap " << (*memory.gap == 0 ? std::string("0 (optimal)") : format_cost(100 * *memory.gap) + "%");
  out << "\n";
}

std::string pad_left(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

void print_table(std::ostream& out, const Graph& graph, const CostTables& tables, const Solution& solution) {
  std::vector<LayerReport> reports = layer_reports(graph, tables, solution.choice);
  double layer_total = 0;
  for (const LayerReport& r : reports) layer_total += r.cost;
  size_t name_width = 5, dims_width = 4, config_width = 6;
  for (const LayerReport& r : reports) {
    name_width = std::max(name_width, r.name.size());
    dims_width = std::max(dims_width, r.dims.size());
    config_width = std::max(config_width, format_config(r.config).size());
  }
  char line[1024];
  out << graph.name << " on " << tables.machine.devices << " devices (" << tables.machine.flops_tflops << " TFLOP/s, "
      << tables.machine.bandwidth_gbps << " GB/s), cost model " << tables.cost_model << " (" << tables.unit << ")\n";
  // The pase model's FLOP (communication counted as the FLOP a word costs)
  // read as time on the modelled machine: cost / rate.
  const bool in_flop = tables.unit == "flop" && tables.machine.flops_tflops > 0;
  auto as_time = [&](double cost) { return in_flop ? format_duration(cost / (tables.machine.flops_tflops * 1e12)) : ""; };
  std::snprintf(line, sizeof line, "%-*s  %-12s  %-*s  %-*s  %7s  %12s  %6s%s\n", int(name_width), "layer", "op", int(dims_width),
                "dims", int(config_width), "config", "devices", "cost", "share", in_flop ? "       time" : "");
  out << line;
  size_t fewer = 0;
  for (const LayerReport& r : reports) {
    double share = solution.cost > 0 ? 100.0 * r.cost / solution.cost : 0.0;
    fewer += r.devices_used < tables.machine.devices;
    std::snprintf(line, sizeof line, "%-*s  %-12s  %-*s  %-*s  %7s  %12s  %5.1f%%%s%s\n", int(name_width), r.name.c_str(),
                  r.op.c_str(), int(dims_width), r.dims.c_str(), int(config_width), format_config(r.config).c_str(),
                  devices_cell(r.devices_used, tables.machine.devices).c_str(), format_cost(r.cost).c_str(), share,
                  in_flop ? "  " : "", in_flop ? pad_left(as_time(r.cost), 9).c_str() : "");
    out << line;
  }
  double edges = solution.cost - layer_total;
  out << "total cost " << format_total(solution.cost, tables.unit) << " " << tables.unit;
  if (in_flop) out << ", " << as_time(solution.cost) << " a step at " << tables.machine.flops_tflops << " TFLOP/s";
  out << " (layers " << format_cost(layer_total) << ", redistribution " << format_cost(edges) << "), solved in "
      << format_cost(solution.stats.seconds) << " s\n";
  out << fewer_devices_note(fewer, reports.size(), tables.machine.devices);
}

// What folding reused, in one line.
std::string folding_words(const Graph& graph, const Solution& solution) {
  if (!solution.chains.empty()) {
    std::string text = "folded: ";
    for (size_t i = 0; i < solution.chains.size(); ++i) {
      const ChainReport& chain = solution.chains[i];
      std::string separator;
      for (int v : chain.separator_vertices) separator += (separator.empty() ? "'" : ", '") + graph.vertices[v].name + "'";
      text += (i ? "; " : "") + std::to_string(chain.fold.blocks) + " repeated blocks of " + std::to_string(chain.fold.period) +
              " vertices (the first from '" + graph.vertices[chain.fold.first].name + "') between separators of " +
              std::to_string(chain.separator_vertices.size()) + (chain.separator_vertices.size() == 1 ? " vertex (" : " vertices (") +
              separator + ", " + std::to_string(chain.fold.separator_configs) +
              " configurations) as one block's transfer table (" + std::to_string(chain.block_entries) +
              " table entries), chained by min-plus products";
    }
    return text;
  }
  if (!solution.folding) return "folded: nothing (no repeated blocks the order treats alike)";
  const Folding& f = *solution.folding;
  return "folded: " + std::to_string(f.folded_blocks) + " of " + std::to_string(f.blocks) + " repeated blocks of " +
         std::to_string(f.period) + " vertices (the first from '" + graph.vertices[f.first].name + "') reuse one block's tables: " +
         std::to_string(f.followers) + " of " + std::to_string(graph.vertices.size()) + " tables not computed";
}

void print_stats(std::ostream& out, const Graph& graph, const Solution& solution, const std::string& order_kind) {
  out << "order: " << order_kind << ", " << graph.vertices.size() << " vertices, " << graph.component_count()
      << " component(s)\n";
  char line[512];
  std::snprintf(line, sizeof line, "%5s  %-40s  %4s  %14s  %s\n", "step", "vertex", "|D|", "table entries", "dependent set");
  out << line;
  for (size_t i = 0; i < solution.plan.order.size(); ++i) {
    int v = solution.plan.order[i];
    std::string dependent;
    for (int w : solution.plan.dependent[v]) dependent += (dependent.empty() ? "" : ", ") + graph.vertices[w].name;
    std::snprintf(line, sizeof line, "%5zu  %-40s  %4zu  %14llu  {%s}\n", i, graph.vertices[v].name.c_str(),
                  solution.plan.dependent[v].size(), static_cast<unsigned long long>(solution.tables.entries[v]),
                  dependent.c_str());
    out << line;
  }
  out << "max dependent set " << solution.stats.max_dependent_set << ", table entries " << solution.stats.table_entries
      << ", peak table bytes " << solution.stats.peak_table_bytes << ", time " << format_cost(solution.stats.seconds)
      << " s\n";
  out << folding_words(graph, solution) << "\n";
}

std::string placement_words(const PlanResult& placed, const std::string& unit) {
  switch (placed.proof) {
    case PlanProof::AllAssignments: return "exact (every assignment weighed)";
    case PlanProof::LowerBound: return "exact (every edge moves the least any assignment could)";
    case PlanProof::None: break;
  }
  return "best of the first " + std::to_string(placed.largest_candidate_set) +
         " per layer (not proven optimal; no placement costs under " +
         format_total(placed.plan.realized_total_lower_bound, unit) + " " + unit + ")";
}

void print_plan_summary(std::ostream& out, const PlanResult& placed, const std::string& unit) {
  const Mesh& mesh = placed.plan.mesh;
  std::string shape;
  for (size_t j = 0; j < mesh.shape.size(); ++j)
    shape += (j ? " x " : "") + mesh.axes[j] + "=" + std::to_string(mesh.shape[j]);
  out << "plan on mesh " << shape << ": redistribution realized " << format_cost(placed.realized_edge_cost)
      << " (model " << format_cost(placed.model_edge_cost) << "), realized total cost "
      << format_total(placed.plan.realized_total_cost, unit) << " " << unit << ", axis assignment "
      << placement_words(placed, unit) << "\n";
}

// `pase solve` once its options are parsed.
int run_solve(const std::shared_ptr<SolveCliOptions>& o) {
  std::unique_ptr<CostModel> model = make_cost_model(o->model, o->devices, memory_options(o->memory));
  const MemoryOptions memory_model = memory_options(o->memory);
  const std::optional<uint64_t> cap = memory_cap(o->memory, *model);
  const CapOptions search = cap_options(o->memory);
  if (o->threads < 0) throw UsageError("--threads: expected a non-negative count, got " + std::to_string(o->threads));
  SolveOptions options;
  try {
    options.order = parse_order_kind(o->order);
  } catch (const OptionError& error) {  // a command-line mistake, spelled as the flag
    throw UsageError(error.words().with("--order"));
  }
  options.dp.max_table_bytes = o->max_table_bytes ? o->max_table_bytes : default_table_limit();
  options.dp.threads = o->threads;
  options.dp.max_work = o->max_work;
  options.fold = !o->no_fold;

  // A bad mesh is a command-line mistake: refused before any input is read.
  std::optional<Mesh> mesh;
  int64_t per_node = o->devices_per_node;
  if (auto* calibrated = dynamic_cast<const CalibratedCostModel*>(model.get()); calibrated && per_node == 0)
    per_node = calibrated->profile().devices_per_node;
  if (!o->mesh.empty()) {
    try {
      mesh = parse_mesh(o->mesh, o->devices, per_node);
    } catch (const OptionError& error) {  // a command-line mistake, spelled as the flag
      std::cerr << "error: " << error.words().with("--mesh") << "\n";
      return kExitUsage;
    }
  }

  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  auto t0 = Clock::now();
  const bool import_options = o->batch != 0 || !o->loss.empty() || !o->lenient.empty();
  if (import_options && !is_onnx_file(o->graph))
    throw UsageError("--batch, --loss and --lenient apply to an ONNX model (.onnx); '" + o->graph +
                     "' is read as a pase-graph file");
  std::vector<std::string> notes;
  GraphInputImport import;
  if (o->batch != 0) import.options.batch = o->batch;
  if (!o->loss.empty()) import.options.loss = o->loss;
  set_lenient(import.options, o->lenient);
  import.notes = &notes;
  Graph graph = load_graph_input(o->graph, &import);
  for (const std::string& note : notes) std::cerr << "note: " << note << "\n";
  double load_seconds = seconds_since(t0);
  auto t1 = Clock::now();
  // On a mesh, the DP chooses among the configurations the mesh realizes.
  ConfigFilter on_mesh;
  if (mesh) on_mesh = [&mesh](const int32_t* config, int rank) { return realizable(*mesh, config, rank); };
  CostTables tables = build_cost_tables(graph, *model, kDefaultMaxConfigs, on_mesh);
  double price_seconds = seconds_since(t1);
  if (o->plan_only) {
    Solution plan = plan_only(tables.objective, options.order, options.dp.threads, options.fold);
    if (o->json) {
      nlohmann::ordered_json doc = {{"graph", graph.name},
                                    {"devices", tables.machine.devices},
                                    {"order_kind", o->order},
                                    {"vertices", graph.vertices.size()},
                                    {"max_dependent_set", plan.stats.max_dependent_set},
                                    {"largest_table_entries", plan.tables.entries[plan.tables.largest_vertex]},
                                    {"largest_table_vertex", graph.vertices[plan.tables.largest_vertex].name},
                                    {"table_entries", plan.tables.total_entries},
                                    {"table_bytes", plan.tables.total_bytes},
                                    {"work", plan.tables.total_work},
                                    {"threads", plan.tables.threads},
                                    {"estimated_seconds", estimated_solve_seconds(plan.tables.total_work, plan.tables.threads)}};
      std::cout << doc.dump(2) << "\n";
    } else {
      print_stats(std::cout, graph, plan, o->order);
      std::cout << "tables need " << plan.tables.total_bytes << " bytes (limit " << options.dp.max_table_bytes
                << "), work " << plan.tables.total_work << " steps (limit " << options.dp.max_work << ")\n"
                << "estimated solve time: at most about " << format_cost(estimated_solve_seconds(plan.tables.total_work, plan.tables.threads))
                << " s on " << plan.tables.threads << (plan.tables.threads == 1 ? " thread" : " threads")
                << " (10^9 steps per second per core)\n";
    }
    return 0;
  }
  auto t2 = Clock::now();
  const MemoryTables memory = build_memory_tables(graph, tables, memory_model);
  Solution solution;
  MemoryReport memory_report;
  memory_report.options = memory_model;
  std::optional<CappedSolution> capped;
  // Past the exact DP's limits, a bounded solve answers (unless --exact).
  std::optional<BoundedSolution> bounded;
  std::string refusal;
  if (!cap) {
    ProgressLine progress;
    if (progress.active()) options.dp.progress = [&progress](const DpProgress& done) { progress.update(done); };
    Answer answer = solve_or_bound(tables.objective, graph.vertex_names(), options, o->exact);
    solution = std::move(answer.solution);
    bounded = std::move(answer.bounded);
    if (answer.refusal)
      refusal = std::string("the exact DP is past ") + (answer.refusal->option == "max_work" ? "--max-work" : "--max-table-bytes") +
                " (vertex '" + graph.vertices[static_cast<size_t>(answer.refusal->vertex)].name + "' has a dependent set of " +
                std::to_string(answer.refusal->dependent_set) + ")";
    progress.finish();
  } else {
    MemoryPricedDp dp(graph, tables, memory, options);
    capped = solve_under_cap(dp, tables.objective, memory, *cap, search);
    solution = dp.plan();
    solution.cost = capped->cost;
    solution.choice = capped->choice;
    solution.stats = dp.last_stats();
    solution.stats.seconds = seconds_since(t2);
    memory_report.cap = *cap;
    if (capped->feasible) {
      memory_report.lower_bound = capped->lower_bound;
      memory_report.gap = capped->gap;
    }
  }
  memory_report.bytes = plan_memory(memory, solution.choice);
  double solve_seconds = seconds_since(t2);
  auto t3 = Clock::now();

  SolverReport report;
  report.order_kind = o->order;
  for (int v : solution.plan.order) report.order.push_back(graph.vertices[v].name);
  report.max_dependent_set = solution.stats.max_dependent_set;
  report.table_entries = solution.stats.table_entries;
  report.largest_table_entries = solution.tables.entries[solution.tables.largest_vertex];
  report.peak_table_bytes = solution.stats.peak_table_bytes;
  report.seconds = solution.stats.seconds;
  report.timings = o->timings;
  if (capped && !capped->feasible) {
    // The least-memory strategy shows what comes closest; the command still fails.
    if (!o->out.empty())
      write_text_file(o->out, write_strategy_file(graph, tables, solution.choice, solution.cost, &report, nullptr, &memory_report));
    throw ResourceError("no strategy fits in " + std::to_string(*cap) + " bytes (" + format_gib(*cap) +
                        " GiB) per device: the least any strategy needs is " + std::to_string(capped->least_memory) +
                        " bytes (" + format_gib(capped->least_memory) + " GiB)");
  }
  if (bounded) {
    report.lower_bound_cost = bounded->lower_bound;
    report.relaxed_edges = bounded->relaxed_edges;
    report.exact = bounded->proven_optimal();
    std::cerr << "note: " << refusal << "; a bounded solve relaxed " << bounded->relaxed_edges << " of "
              << tables.objective.pairs.size() << " edges and "
              << (report.exact ? std::string("proved its answer optimal (its lower bound meets the cost)")
                               : "is at most " + format_cost(100.0 * bounded->gap()) + "% above the optimum, which is at least " +
                                     format_total(bounded->lower_bound, tables.unit) + " " + tables.unit)
              << "; --exact refuses instead\n";
  }
  // With --mesh the strategy is placed on it. Without, the PaSE optimum is
  // placed on the default mesh when that mesh realizes it, with a bounded
  // effort (the plan says whether its placement is proven optimal).
  std::optional<PlanResult> placed;
  std::string no_plan_reason;
  PlanOptions plan_options;
  plan_options.threads = options.dp.threads > 0 ? options.dp.threads : 1;
  if (mesh) {
    placed = build_plan(graph, tables, solution.choice, *mesh, *model, plan_options);
  } else if (!o->no_plan) {
    const Mesh fallback = default_mesh(o->devices, per_node);
    no_plan_reason = unrealizable_reason(graph, tables, solution.choice, fallback);
    if (no_plan_reason.empty()) {
      plan_options.max_work = kDefaultPlacementWork;
      placed = build_plan(graph, tables, solution.choice, fallback, *model, plan_options);
    }
  }
  if (o->json || !o->out.empty()) {
    std::string text = write_strategy_file(graph, tables, solution.choice, solution.cost, &report,
                                           placed ? &placed->plan : nullptr, &memory_report, no_plan_reason);
    if (o->json) std::cout << text;
    if (!o->out.empty()) {
      write_text_file(o->out, text);
    }
  }
  if (!o->json) print_table(std::cout, graph, tables, solution);
  if (!o->json) print_memory(std::cout, memory_report, tables.unit);
  if (!o->json && placed) print_plan_summary(std::cout, *placed, tables.unit);
  if (!no_plan_reason.empty())
    (o->json ? std::cerr : std::cout) << "no plan on the default mesh: " << no_plan_reason
                                      << " (--mesh auto restricts the search to configurations it realizes)\n";
  if (o->stats) {
    std::ostream& out = o->json ? std::cerr : std::cout;
    print_stats(out, graph, solution, o->order);
    out << "phases: load " << format_cost(load_seconds) << " s, price " << format_cost(price_seconds) << " s, solve "
        << format_cost(solve_seconds) << " s, report " << format_cost(seconds_since(t3)) << " s\n";
    if (uint64_t peak = peak_resident_bytes()) out << "peak resident memory " << peak << " bytes\n";
    if (capped && capped->feasible)
      out << "capped search: " << capped->dp_runs << " DP runs, " << capped->nodes << " nodes, root bound "
          << format_total(capped->root_lower_bound, tables.unit) << " " << tables.unit << ", bound "
          << format_total(capped->lower_bound, tables.unit) << " " << tables.unit << "\n";
  }
  return 0;
}

}  // namespace

CommandRunner register_solve(CLI::App& app) {
  auto o = std::make_shared<SolveCliOptions>();
  CLI::App* cmd = app.add_subcommand("solve", "Find the optimal per-layer parallelization strategy of a graph");
  cmd->add_option("graph", o->graph, "Graph file (pase-graph JSON) or ONNX model (.onnx)")->required();
  cmd->add_option("--devices,-p", o->devices, "Number of devices")->required();
  cmd->add_option("--batch,-b", o->batch, "ONNX model: batch size, re-sizes dim 0 of the data inputs (default: as exported)");
  cmd->add_option("--loss", o->loss, "ONNX model: loss appended to each output, softmax_xent (default) or none");
  cmd->add_flag("--lenient{true}", o->lenient,
                "ONNX model: import unsupported ops as zero-cost pass-through vertices instead of refusing (above 5% of "
                "the model's estimated FLOP refused unless --lenient=force)");
  add_cost_model_options(cmd, o->model);
  add_memory_options(cmd, o->memory, /*with_cap=*/true);
  cmd->add_option("--out,-o", o->out, "Write the strategy file (pase-strategy JSON) here");
  cmd->add_flag("--json", o->json, "Print the strategy file to stdout instead of the table");
  cmd->add_flag("--stats", o->stats, "Print the order, dependent sets, table sizes and time");
  cmd->add_flag("--plan-only", o->plan_only, "Only order the vertices and size the DP tables (no solving)");
  cmd->add_option("--order", o->order, "Vertex order: mindegree (default: GenerateSeq, ties to the smaller table), generateseq, minfill or bfs");
  add_count_option(cmd, "--max-table-bytes", o->max_table_bytes, "Refuse if the DP tables, with the buffers they are computed with, may need more: bytes, or a size such as 8GiB (default: half of RAM)", true);
  add_count_option(cmd, "--max-work", o->max_work, "Refuse if the DP needs more (entry x configuration) steps (default 2e12)");
  cmd->add_option("--mesh", o->mesh, "Place the strategy on a device mesh and write its plan: auto (prime factors), 2x4, or dp=2,tp=4; the DP then uses only configurations the mesh realizes");
  cmd->add_flag("--no-fold", o->no_fold, "Compute every table, even those of repeated blocks that equal another block's (same optimum)");
  cmd->add_flag("--exact", o->exact, "Refuse when the exact DP is past its limits (by default a bounded solve answers, with its gap)");
  CLI::Option* mesh_option = cmd->get_option("--mesh");
  cmd->add_flag("--no-plan", o->no_plan, "Without --mesh, write no plan (by default the optimum is placed on the default mesh when that mesh realizes it)")
      ->excludes(mesh_option);
  cmd->add_option("--devices-per-node", o->devices_per_node, "Devices per node, recorded in the mesh (default: the --machine profile's)");
  cmd->add_flag("--timings", o->timings, "Also write solver.seconds and solver.peak_table_bytes to the strategy file (they vary from run to run)");
  cmd->add_option("--threads", o->threads, "Worker threads (default: all cores, or one for a DP under 2e7 steps, where threads cost more than they save)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    // The library's options that this command sets by flag.
    return with_option_spellings(
        {{"order", "--order"}, {"max_table_bytes", "--max-table-bytes"}, {"max_work", "--max-work"}},
        [&] { return run_solve(o); });
  };
}

}  // namespace pase
