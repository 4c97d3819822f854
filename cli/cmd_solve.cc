#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/byte_size.h"
#include "base/duration_text.h"
#include "base/error.h"
#include "base/text_file.h"
#include "cli/commands.h"
#include "cli/count_option.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/memory_options.h"
#include "cli/mesh_choice.h"
#include "cli/model_options.h"
#include "cli/onnx_loader.h"
#include "cli/pipeline_solve.h"
#include "cli/step_report.h"
#include "cli/process_memory.h"
#include "cli/progress_line.h"
#include "cli/layer_table.h"
#include "cli/text_output.h"
#include "cli/training_solve.h"
#include "graphs/rebatch.h"
#include "graphs/graph.h"
#include "plans/mesh.h"
#include "plans/mesh_pricing.h"
#include "solve/solve_request.h"
#include "strategy/plan_summary.h"
#include "strategy/strategy_file.h"

namespace pase {
namespace {

struct SolveCliOptions {
  std::string graph;
  int64_t devices = 0;
  CostModelOptions model;
  MemoryCliOptions memory;
  std::string out;
  bool json = false;
  bool all_layers = false;  // every row of the table, no block folded
  SimulateCliOptions simulate;  // --simulate: one step of the answer simulated after the table
  bool stats = false;
  bool plan_only = false;
  std::string order = "mindegree";
  uint64_t max_table_bytes = 0;  // 0: the policy's (half of physical memory)
  uint64_t max_work = DpOptions{}.max_work;
  int threads = 0;
  std::string mesh;              // empty: the default mesh, if it realizes the optimum
  bool no_plan = false;
  bool exact = false;
  bool no_fold = false;
  bool timings = false;
  bool uniform_blocks = false;
  PipelineCliOptions pipeline;
  int64_t devices_per_node = 0;  // 0: from the machine profile, if any
  // Import options for an ONNX model, as `pase import` takes them.
  int64_t batch = 0;  // 0: as exported
  std::string loss;   // empty: softmax_xent
  std::string lenient;  // empty: off; "true" (the bare flag) or "force"
};

std::string format_cost(double cost) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", cost);
  return buffer;
}

void print_memory(std::ostream& out, const Graph& graph, const MemoryReport& memory, const std::string& unit) {
  out << "memory per device " << format_gib(memory.bytes.total()) << " GiB (weights " << format_gib(memory.bytes.weights)
      << " GiB with gradients and " << optimizer_name(memory.options.optimizer) << " state, activations "
      << format_gib(memory.bytes.activations) << " GiB; " << dtype_name(memory.options.dtype)
      << training_words(graph, memory.options, memory.micro_batch_size) << ")";
  if (memory.cap)
    out << ", cap " << format_gib(*memory.cap) << " GiB: lower bound " << format_total(*memory.lower_bound, unit) << " "
        << unit << ", gap " << (*memory.gap == 0 ? std::string("0 (optimal)") : format_cost(100 * *memory.gap) + "%");
  out << "\n";
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
    case PlanProof::Searched:
      return layout_space(placed.plan.mesh) == LayoutSpace::Grouped
                 ? "searched with the configurations (the layouts of its axes grouped in two, each priced over its links)"
                 : "searched with the configurations (every layout priced over its links)";
    case PlanProof::None: break;
  }
  return "best of the first " + std::to_string(placed.largest_candidate_set) +
         " per layer (not proven optimal; no placement costs under " +
         format_total(placed.plan.realized_total_lower_bound, unit) + " " + unit + ")";
}

void print_plan_summary(std::ostream& out, const PlanResult& placed, const std::string& unit) {
  out << "plan on mesh " << mesh_shape_words(placed.plan.mesh) << ": redistribution realized "
      << format_cost_text(placed.realized_edge_cost, unit) << " (model " << format_cost_text(placed.model_edge_cost, unit)
      << "), realized total cost "
      << format_total(placed.plan.realized_total_cost, unit) << " " << unit << ", axis assignment "
      << placement_words(placed, unit) << "\n";
  out << weight_reshard_lines(placed, unit);
}

// The request the options make: the DP's order, limits and threads, the
// memory model and cap, the mesh (a bad mesh is a command-line mistake).
SolveRequest make_request(const SolveCliOptions& o, const CostModel& model) {
  SolveRequest request;
  request.memory = memory_options(o.memory);
  request.min_row = search_min_row(o.model);
  request.cap = memory_cap(o.memory, model);
  request.cap_search = cap_options(o.memory);
  if (o.threads < 0) throw UsageError("--threads: expected a non-negative count, got " + std::to_string(o.threads));
  try {
    request.solve.order = parse_order_kind(o.order);
  } catch (const OptionError& error) {  // a command-line mistake, spelled as the flag
    throw UsageError(error.words().with("--order"));
  }
  if (o.max_table_bytes) request.solve.dp.max_table_bytes = o.max_table_bytes;
  request.solve.dp.threads = o.threads;
  request.solve.dp.max_work = o.max_work;
  request.solve.fold = !o.no_fold;
  request.exact = o.exact;
  request.place = !o.no_plan;
  request.devices_per_node = o.devices_per_node;
  request.plan_only = o.plan_only;
  request.uniform_blocks = o.uniform_blocks;
  if (o.mesh == "search") {
    require_links_for_mesh_search(model);
    request.search_layouts = true;  // run_solve tries each mesh
  } else if (!o.mesh.empty() || (prices_links(model) && !o.no_plan)) {
    const int64_t per_node = o.devices_per_node ? o.devices_per_node : model.devices_per_node();
    try {
      request.mesh = parse_mesh(o.mesh.empty() ? "auto" : o.mesh, o.devices, per_node);
      // A model that knows the links searches the layouts of its mesh (the
      // default one too), so the plan is what was priced; the paper's model
      // is device-order-free, and its optimum is placed after.
      request.search_layouts = prices_links(model);
    } catch (const OptionError& error) {  // a command-line mistake, spelled as the flag
      throw UsageError(error.words().with("--mesh"));
    }
  }
  return request;
}

// The graph file or ONNX model, with the import options; the importer's notes on stderr.
GraphFileV1 read_solve_graph(const SolveCliOptions& o) {
  const bool import_options = o.batch != 0 || !o.loss.empty() || !o.lenient.empty();
  if (import_options && !is_onnx_file(o.graph))
    throw UsageError("--batch, --loss and --lenient apply to an ONNX model (.onnx); '" + o.graph +
                     "' is read as a pase-graph file");
  std::vector<std::string> notes;
  GraphInputImport import;
  if (o.batch != 0) import.options.batch = o.batch;
  if (!o.loss.empty()) import.options.loss = o.loss;
  set_lenient(import.options, o.lenient);
  import.notes = &notes;
  GraphFileV1 file = read_graph_input(o.graph, &import);
  for (const std::string& note : notes) std::cerr << "note: " << note << "\n";
  return file;
}

// --plan-only: the order and table sizes, as text or JSON.
void print_plan_only(const SolveCliOptions& o, const Graph& graph, const SolveRequest& request, const Solution& plan) {
  if (o.json) {
    nlohmann::ordered_json doc = {{"graph", graph.name},
                                  {"devices", o.devices},
                                  {"order_kind", o.order},
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
    return;
  }
  print_stats(std::cout, graph, plan, o.order);
  std::cout << "tables need " << plan.tables.total_bytes << " bytes (limit " << request.solve.dp.max_table_bytes
            << "), work " << plan.tables.total_work << " steps (limit " << request.solve.dp.max_work << ")\n"
            << "estimated solve time: at most about "
            << format_cost(estimated_solve_seconds(plan.tables.total_work, plan.tables.threads)) << " s on "
            << plan.tables.threads << (plan.tables.threads == 1 ? " thread" : " threads")
            << " (10^9 steps per second per core)\n";
}

// What the strategy file records of the solver.
SolverReport solver_report(const SolveCliOptions& o, const Graph& graph, const SolveOutcome& out) {
  const Solution& solution = out.solution;
  SolverReport report;
  report.order_kind = o.order;
  for (int v : solution.plan.order) report.order.push_back(graph.vertices[v].name);
  report.max_dependent_set = solution.stats.max_dependent_set;
  report.table_entries = solution.stats.table_entries;
  report.largest_table_entries = solution.tables.entries[solution.tables.largest_vertex];
  report.peak_table_bytes = solution.stats.peak_table_bytes;
  report.seconds = solution.stats.seconds;
  report.timings = o.timings;
  if (out.uniform) {
    report.uniform = true;
    report.free_optimum_cost = out.uniform->free_cost;
    for (const UniformRun& run : out.uniform->runs)
      report.uniform_runs.push_back(
          {graph.vertices[static_cast<size_t>(run.first)].name, run.blocks, run.period, run.extended});
  }
  if (out.bounded) {
    report.lower_bound_cost = out.bounded->lower_bound;
    report.relaxed_edges = out.bounded->relaxed_edges;
    report.exact = out.bounded->proven_optimal();
  }
  return report;
}

// The strategy's memory and, under a cap, its bound and gap: over every
// count searched (a count left out is bounded by its own bound), not only
// the best count's.
MemoryReport memory_report(const TrainingSearch& search) {
  const TrainingSolve& solved = *search.best;
  const SolveOutcome& out = solved.outcome;
  MemoryReport report;
  report.options = solved.setup;
  report.micro_batch_size = solved.micro_batch_size;
  report.bytes = out.bytes;
  if (out.capped) {
    report.cap = out.capped->cap;
    if (out.capped->feasible) {
      const double bound = std::fmin(out.capped->lower_bound, search.least_bound);  // fmin: NaN is no bound
      report.lower_bound = std::min(bound, out.solution.cost);
      report.gap = relative_gap(out.solution.cost, *report.lower_bound);
    }
  }
  return report;
}

// Said when the capped search stopped at its time: what it answers and proves.
void note_out_of_time(const TrainingSearch& search, const MemoryReport& memory) {
  const std::optional<CappedSolution>& capped = search.best->outcome.capped;
  if (!(capped && capped->timed_out) && search.out_of_time() == 0) return;
  std::cerr << "note: the search stopped at its time limit (--cap-seconds, --time-limit): the answer is the best "
               "strategy found that fits"
            << (memory.gap ? ", at most " + format_cost(100 * *memory.gap) + "% above the optimum" : std::string())
            << "\n";
}

// What --uniform-blocks restricted and what it cost: "uniform blocks: 31
// blocks of 17 layers (from 'h.0/ln_2', and one more cut in two by its ends),
// one configuration each: 0.824 seconds, the free optimum 0.8238 (+0.02%)".
std::string uniform_words(const Graph& graph, const UniformOutcome& uniform, double cost, const std::string& unit) {
  if (uniform.runs.empty()) return "uniform blocks: no run of identical blocks, the optimum is free";
  const std::string runs = uniform_runs_words(graph, uniform.runs);
  // The two sums differ in order: a difference within rounding is none.
  double extra = uniform.free_cost > 0 ? 100.0 * (cost - uniform.free_cost) / uniform.free_cost : 0.0;
  if (std::fabs(extra) < 1e-9) extra = 0;
  return "uniform blocks: " + runs + ", one configuration each: " + format_total(cost, unit) + " " + unit + ", the free " +
         (uniform.free_exact ? "optimum " : "search's best ") + format_total(uniform.free_cost, unit) + " (" +
         (extra == 0 ? std::string("the same") : "+" + format_cost(extra) + "%") + ")";
}

// The note a bounded solve leaves on stderr: why the exact DP could not run, and the gap.
void note_bounded(const Graph& graph, const SolveOutcome& out) {
  const ExactRefusal& refusal = *out.refusal;
  const BoundedSolution& bounded = *out.bounded;
  std::cerr << "note: the exact DP is past " << (refusal.option == "max_work" ? "--max-work" : "--max-table-bytes")
            << " (vertex '" << graph.vertices[static_cast<size_t>(refusal.vertex)].name << "' has a dependent set of "
            << refusal.dependent_set << "); "
            << (out.capped ? "the capped search ran over a relaxation of " : "a bounded solve relaxed ")
            << bounded.relaxed_edges << " of " << out.tables.objective.pairs.size() << " edges and "
            << (bounded.proven_optimal()
                    ? std::string("proved its answer optimal (its lower bound meets the cost)")
                    : "is at most " + format_cost(100.0 * bounded.gap()) + "% above the optimum, which is at least " +
                          format_total(bounded.lower_bound, out.tables.unit) + " " + out.tables.unit)
            << "; --exact refuses instead\n";
}

// --stats: the order and tables, each step's time, the process's memory, the capped search.
void print_solve_stats(std::ostream& out, const SolveCliOptions& o, const Graph& graph, const SolveOutcome& outcome,
                       double load_seconds, double report_seconds) {
  print_stats(out, graph, outcome.solution, o.order);
  out << "phases: load " << format_cost(load_seconds) << " s, price " << format_cost(outcome.seconds.price)
      << " s, solve " << format_cost(outcome.seconds.solve + outcome.seconds.place) << " s, report "
      << format_cost(report_seconds) << " s\n";
  if (uint64_t peak = peak_resident_bytes()) out << "peak resident memory " << peak << " bytes\n";
  const std::string& unit = outcome.tables.unit;
  if (outcome.capped && outcome.capped->feasible)
    out << "capped search: " << outcome.capped->dp_runs << " DP runs, " << outcome.capped->nodes << " nodes, root bound "
        << format_total(outcome.capped->root_lower_bound, unit) << " " << unit << ", bound "
        << format_total(outcome.capped->lower_bound, unit) << " " << unit << "\n";
}

// With pipeline stages: what the stage search does not take yet is refused by name.
int run_pipeline(const SolveCliOptions& o, const GraphFileV1& file, const std::vector<int64_t>& counts,
                 const SolveRequest& request) {
  const char* refused = o.mesh == "search"                   ? "--mesh search"
                        : !o.mesh.empty() && o.mesh != "auto" ? "--mesh"
                        : o.uniform_blocks  ? "--uniform-blocks"
                        : o.plan_only       ? "--plan-only"
                        : o.stats           ? "--stats"
                                            : nullptr;
  if (refused)
    throw UsageError(std::string(refused) + ": not with pipeline stages yet (each stage is solved without a mesh, or " +
                     "with --mesh auto on the default mesh of its devices; docs/pipeline.md)");
  PipelineSolveInput input = pipeline_input(file, o.graph, o.devices, counts, request, o.model, o.out, o.json);
  input.stage_layouts = stages_on_layouts(o.mesh, *make_cost_model(o.model, o.devices, request.memory), o.no_plan);
  if (o.simulate.after_solve) input.simulate = &o.simulate;
  return run_pipeline_solve(o.pipeline, input);
}

// `pase solve` once its options are parsed.
int run_solve(const SolveCliOptions& o) {
  if (!o.simulate.after_solve && (!o.simulate.trace.empty() || !o.simulate.svg.empty() || o.simulate.no_overlap))
    throw UsageError(std::string(!o.simulate.trace.empty() ? "--trace" : !o.simulate.svg.empty() ? "--svg" : "--no-overlap") +
                     ": applies with --simulate");
  const TrainingSetup training = memory_options(o.memory);
  const ModelMaker make_model = [&](const TrainingSetup& setup) { return make_cost_model(o.model, o.devices, setup); };
  SolveRequest request = make_request(o, *make_model(training));
  using Clock = std::chrono::steady_clock;
  const auto loading = Clock::now();
  const GraphFileV1 file = read_solve_graph(o);
  const double load_seconds = std::chrono::duration<double>(Clock::now() - loading).count();
  const std::vector<int64_t> counts =
      micro_batch_counts(o.memory, training, micro_batches_auto(o.memory) ? graph_batch(file, o.graph) : 1);
  if (o.pipeline.requested()) return run_pipeline(o, file, counts, request);
  ProgressLine progress;  // on a terminal: every DP run of every candidate, and the clock
  if (progress.active() && !o.plan_only) {
    request.solve.dp.progress = [&progress](const DpProgress& done) { progress.update(done); };
    request.on_phase = [](const char* phase) { set_progress_phase(phase); };
  }
  std::optional<MeshChoice> meshes;
  if (o.mesh == "search") {
    const int64_t per_node = o.devices_per_node ? o.devices_per_node : make_model(training)->devices_per_node();
    meshes = choose_mesh(file, o.graph, counts, make_model, request, node_meshes(o.devices, per_node));
    request.mesh = meshes->trials[meshes->chosen].mesh;
  }
  const TrainingSearch search =
      meshes ? std::move(meshes->search) : solve_training(file, o.graph, counts, make_model, request);
  progress.finish();
  const TrainingSolve& solved = *search.best;
  const Graph& graph = solved.graph;
  const CostModel* model = solved.model.get();
  const SolveOutcome& out = solved.outcome;
  request.memory = solved.setup;
  if (counts.size() > 1) std::cerr << "note: " << micro_batch_search_words(search) << "\n";
  if (o.plan_only) {
    print_plan_only(o, graph, request, out.solution);
    return 0;
  }
  const auto reporting = Clock::now();
  const SolverReport report = solver_report(o, graph, out);
  const MemoryReport memory = memory_report(search);
  note_out_of_time(search, memory);
  if (out.capped && !out.capped->feasible) {
    // The least-memory strategy shows what comes closest; the command still fails.
    if (!o.out.empty())
      write_text_file(o.out, write_strategy_file(graph, out.tables, out.solution.choice, out.solution.cost, &report,
                                                 nullptr, &memory));
    throw ResourceError(no_fit_words(*out.capped));
  }
  if (out.bounded) note_bounded(graph, out);
  if (o.json || !o.out.empty()) {
    const std::string text = write_strategy_file(graph, out.tables, out.solution.choice, out.solution.cost, &report,
                                                 out.placed ? &out.placed->plan : nullptr, &memory, out.no_plan_reason);
    if (o.json) std::cout << text;
    if (!o.out.empty()) write_text_file(o.out, text);
  }
  if (!o.json) {
    std::cout << strategy_table({&graph, &out.tables, &out.solution.choice, out.solution.cost, &memory.options, o.all_layers},
                                "", ", solved in " + format_duration(out.solution.stats.seconds));
    print_memory(std::cout, graph, memory, out.tables.unit);
    std::cout << "strategy: "
              << plan_summary(graph, out.tables, out.solution.choice, memory.options,
                              out.placed ? &out.placed->plan : nullptr)
              << "\n";
    if (out.uniform) std::cout << uniform_words(graph, *out.uniform, out.solution.cost, out.tables.unit) << "\n";
    if (meshes) std::cout << mesh_choice_words(*meshes, out.tables.unit);
    if (out.placed) print_plan_summary(std::cout, *out.placed, out.tables.unit);
  }
  if (o.simulate.after_solve)
    (void)report_solve_simulation(solved, o.devices, graph.name + " on " + std::to_string(o.devices) + " devices, the optimum",
                                  o.simulate, o.json ? std::cerr : std::cout);
  if (const std::string over = over_machine_memory_words(*model, out.bytes.total(), memory_reserve(o.memory, *model)); !over.empty())
    std::cerr << "warning: " << over << "\n";
  if (meshes && o.json) std::cerr << mesh_choice_words(*meshes, out.tables.unit);
  if (!out.no_plan_reason.empty())
    (o.json ? std::cerr : std::cout) << "no plan on the default mesh: " << out.no_plan_reason
                                     << " (--mesh auto restricts the search to configurations it realizes)\n";
  if (o.stats)
    print_solve_stats(o.json ? std::cerr : std::cout, o, graph, out, load_seconds,
                      std::chrono::duration<double>(Clock::now() - reporting).count());
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
  add_simulate_options(cmd, o->simulate, /*switch_flag=*/true);
  cmd->add_flag("--all-layers", o->all_layers, "Print every layer's row (by default a repeated block's identical copies fold into one line)");
  cmd->add_flag("--stats", o->stats, "Print the order, dependent sets, table sizes and time");
  cmd->add_flag("--plan-only", o->plan_only, "Only order the vertices and size the DP tables (no solving)");
  cmd->add_option("--order", o->order, "Vertex order: mindegree (default: GenerateSeq, ties to the smaller table), generateseq, minfill or bfs");
  add_count_option(cmd, "--max-table-bytes", o->max_table_bytes, "Refuse if the DP tables, with the buffers they are computed with, may need more: bytes, or a size such as 8GiB (default: half of RAM)", true);
  add_count_option(cmd, "--max-work", o->max_work, "Refuse if the DP needs more (entry x configuration) steps (default 2e12)");
  cmd->add_option("--mesh", o->mesh, "Place the strategy on a device mesh and write its plan: auto (prime factors), 2x4, or dp=2,tp=4 (the DP then uses only configurations the mesh realizes; with --cost-model calibrated it chooses each layer's axes too, priced over the links they cross), or search (each dp x tp mesh with tp inside a node, the cheapest kept)");
  cmd->add_flag("--no-fold", o->no_fold, "Compute every table, even those of repeated blocks that equal another block's (same optimum)");
  cmd->add_flag("--exact", o->exact, "Refuse when the exact DP is past its limits (by default a bounded solve answers, with its gap)");
  CLI::Option* mesh_option = cmd->get_option("--mesh");
  cmd->add_flag("--no-plan", o->no_plan, "Without --mesh, write no plan (by default the optimum is placed on the default mesh when that mesh realizes it)")
      ->excludes(mesh_option);
  cmd->add_option("--devices-per-node", o->devices_per_node, "Devices per node, recorded in the mesh (default: the --machine profile's)");
  cmd->add_flag("--uniform-blocks", o->uniform_blocks, "Give every block of a run of identical blocks one configuration per layer (as Megatron-LM, FSDP and a scan over layers run), and print what that costs against the free optimum");
  add_pipeline_options(cmd, o->pipeline);
  cmd->add_flag("--timings", o->timings, "Also write solver.seconds and solver.peak_table_bytes to the strategy file (they vary from run to run)");
  cmd->add_option("--threads", o->threads, "Worker threads (default: all cores, or one for a DP under 2e7 steps, where threads cost more than they save)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    // The library's options that this command sets by flag.
    return with_option_spellings(
        {{"order", "--order"}, {"max_table_bytes", "--max-table-bytes"}, {"max_work", "--max-work"}},
        [&] { return run_solve(*o); });
  };
}

}  // namespace pase
