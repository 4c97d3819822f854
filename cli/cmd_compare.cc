// `pase compare GRAPH --devices 4,8,16`: the DP optimum against the baselines
// (data-parallel, owt, megatron, mcmc) at each device count, as a table, CSV,
// JSON and an SVG bar chart of the speed-up over data parallelism.
#include <algorithm>
#include <exception>
#include <chrono>
#include <cmath>
#include <optional>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "base/duration_text.h"
#include "cli/layer_table.h"
#include "cli/text_output.h"
#include "base/byte_size.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/mesh_choice.h"
#include "cli/training_solve.h"
#include "graphs/rebatch.h"
#include "cli/memory_options.h"
#include "cli/model_options.h"
#include "cli/pipeline_solve.h"
#include "plans/mesh.h"
#include "cli/svg_chart.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "strategy/baselines.h"
#include "strategy/simulated_mcmc.h"
#include "simulate/step_simulation.h"
#include "simulate/step_tasks.h"
#include "solve/solve_request.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct CompareCliOptions {
  std::string graph;
  std::vector<int64_t> devices;
  CostModelOptions model;
  MemoryCliOptions memory;
  McmcOptions mcmc;
  int64_t tensor_parallel = 0;  // megatron's n; 0: the best
  bool sequence_parallel = false;  // megatron with Megatron-LM's sequence parallelism
  std::string mesh;             // empty: unplaced costs; search, auto or a shape: every row placed
  bool uniform_blocks = false;  // the optimum: every block of a run one configuration per layer
  std::string pipeline_stages;  // empty: no pipeline rows; a number or auto
  std::string csv, json, svg;
  bool timings = false;  // search_seconds in --csv and --json
  bool simulate = false;  // every row's step simulated, and FlexFlow's search on the simulated step
  std::string mcmc_simulation = "delta";  // how mcmc-simulated re-simulates a move: delta or full
};

/// One strategy at one device count.
struct CompareRow {
  int64_t devices = 0;
  std::string strategy;
  double cost = 0.0;
  double speedup = 1.0;   ///< data-parallel cost / cost
  double seconds = -1.0;  ///< search time; < 0: not a search
  std::string note;
  uint64_t memory = 0;    ///< bytes per device
  std::string mesh;       ///< with --mesh: the mesh its cost is placed on ("dp=8 x tp=8"), else empty
  double simulated = NAN; ///< with --simulate: its step simulated (NaN: not simulated)
};

const char* const kOptimum = "pase";  // the DP optimum's row

/// Every row of a comparison, and what the table and files need besides.
struct Comparison {
  std::vector<CompareRow> rows;
  std::vector<std::string> shown;  ///< strategies with rows, in column order
  std::vector<std::pair<std::string, std::string>> skipped;  ///< baselines that do not apply, and why
  std::vector<int64_t> devices;  ///< the device counts compared (those where something fits)
  std::string unit = "flop";
  Machine machine;
};

// "no strategy fits ..." at device count p.
std::string no_fit_at(const CappedSolution& capped, int64_t p) {
  return "no strategy fits in " + std::to_string(capped.cap) + " bytes (" + format_gib(capped.cap) +
         " GiB) per device at p = " + std::to_string(p) + ": the least any strategy needs is " +
         std::to_string(capped.least_memory) + " bytes (" + format_gib(capped.least_memory) + " GiB)";
}

// How the optimum was found: under a cap its gap, past the DP's limits the bounded solve's.
std::string search_note(const SolveOutcome& out) {
  if (out.capped)
    return out.capped->gap == 0 ? "under the cap, optimal" : "under the cap, gap " + format_number("%.3g", 100 * out.capped->gap) + "%";
  if (out.bounded && !out.bounded->proven_optimal())
    return "bounded solve, at most " + format_number("%.3g", 100 * out.bounded->gap()) + "% above the optimum";
  return "";
}

// The optimum's note: how it was found, and under uniform blocks what the free optimum costs.
std::string optimum_note(const SolveOutcome& out) {
  const std::string searched = search_note(out);
  if (!out.uniform || out.uniform->runs.empty()) return searched;
  return "uniform blocks (the free " + std::string(out.uniform->free_exact ? "optimum " : "search's best ") +
         format_number("%.9g", out.uniform->free_cost) + ")" + (searched.empty() ? "" : "; " + searched);
}

// The lower bound on any strategy (within the cap): the optimum itself when exact.
double optimum_bound(const SolveOutcome& out) {
  if (out.capped) return out.capped->lower_bound;
  if (out.bounded) return out.bounded->lower_bound;
  return out.solution.cost;
}

// One device count: the optimum (capped search under a cap) and every baseline on the same priced graph.
// A row's note, and "over the machine's memory" where the strategy cannot run on the --machine's devices.
std::string with_machine_memory(const std::string& note, const CostModel& model, uint64_t bytes,
                                std::optional<uint64_t> reserve) {
  if (over_machine_memory_words(model, bytes, reserve).empty()) return note;
  return note + (note.empty() ? "" : "; ") + "over the machine's memory";
}

// A row of its own for a baseline solved apart (on its own tables).
CompareRow separate_row(const TrainingSolve& solved, const std::string& name, int64_t p,
                        std::optional<uint64_t> reserve) {
  const SolveOutcome& out = solved.outcome;
  return {p, name, out.solution.cost, 1.0, -1.0, with_machine_memory(out.note, *solved.model, out.bytes.total(), reserve),
          out.bytes.total(), ""};
}

// How --simulate runs `solved`'s step: its micro-batches, the gradient syncs beside the backward pass, over the
// network where its devices span nodes.
SimulatedStepOptions step_options(const TrainingSolve& solved, bool delta) {
  const int64_t devices = solved.model->devices();
  return {solved.setup.micro_batches, true, delta,
          devices_across_nodes(0, devices, 0, devices, solved.model->devices_per_node())};
}

// --simulate: `choice` of `solved`'s tables as one simulated step (docs/simulate.md).
double simulated_step(const TrainingSolve& solved, const std::vector<int32_t>& choice) {
  return simulated_step_of(solved.graph, solved.outcome.tables, *solved.model, step_options(solved, true), choice);
}

// --simulate: the rows solved apart and the optimum simulated, and FlexFlow's
// search with the simulated step as its objective (mcmc-simulated), from
// data parallelism; its cost column is its strategy's additive cost.
void simulate_rows(Comparison& c, const TrainingSolve& solved, const CompareCliOptions& o, int64_t p,
                   std::optional<uint64_t> cap, const TrainingSolve* fsdp, const TrainingSolve* megatron) {
  for (CompareRow& row : c.rows) {
    if (row.devices != p) continue;
    if (row.strategy == "fsdp" && fsdp) row.simulated = simulated_step(*fsdp, fsdp->outcome.solution.choice);
    if (row.strategy == "megatron" && megatron) row.simulated = simulated_step(*megatron, megatron->outcome.solution.choice);
    if (row.strategy == kOptimum) row.simulated = simulated_step(solved, solved.outcome.solution.choice);
  }
  const SolveOutcome& out = solved.outcome;
  const SimulatedStepOptions step = step_options(solved, o.mcmc_simulation == "delta");
  const SimulatedMcmcResult run = simulated_mcmc_search(solved.graph, out.tables, *solved.model, step,
                                                        data_parallel_choice(solved.graph, out.tables), o.mcmc);
  const McmcResult& chain = run.chain;
  std::string note = "objective: the simulated step; seed " + std::to_string(o.mcmc.seed) + ", " +
                     std::to_string(chain.iterations) + " iterations, " + std::to_string(chain.accepted) +
                     " accepted, stopped by " + mcmc_stop_name(chain.stop) + "; " + std::to_string(run.tasks) +
                     " tasks, " + format_number("%.0f", run.tasks_per_move) + " re-timed a move (" +
                     (step.delta ? "delta" : "full") + " simulation)";
  const uint64_t bytes = plan_memory(out.memory, chain.choice).total();
  if (cap && bytes > *cap) note += "; over the memory cap";
  CompareRow row{p, "mcmc-simulated", run.additive, 1.0, chain.seconds, note, bytes, ""};
  row.simulated = chain.cost;
  // After the mcmc row, so the two chains sit together.
  auto at = std::find_if(c.rows.begin(), c.rows.end(), [&](const CompareRow& r) { return r.devices == p && r.strategy == "mcmc"; });
  c.rows.insert(at == c.rows.end() ? c.rows.end() : at + 1, row);
}

// With --micro-batches auto the baselines run at the count the optimum chose.
// Baselines solved apart, each a row of its own: `fsdp` (the data-parallel
// strategy priced at ZeRO-3) and `megatron` (under sequence parallelism,
// whose GEMMs are priced as they run it: their tables are not the optimum's,
// so the DP's bound does not hold for it).
void compare_at(Comparison& c, const TrainingSolve& solved, const SolveRequest& request, const CompareCliOptions& o,
                std::optional<uint64_t> reserve, int64_t p, bool first, const TrainingSolve* fsdp,
                const TrainingSolve* megatron) {
  const McmcOptions& mcmc = o.mcmc;
  const Graph& graph = solved.graph;
  const CostModel& model = *solved.model;
  const SolveOutcome& out = solved.outcome;
  if (out.capped && !out.capped->feasible) throw ResourceError(no_fit_at(*out.capped, p));
  c.unit = out.tables.unit;
  c.machine = out.tables.machine;
  const double bound = optimum_bound(out);
  double data_parallel = 0.0;
  for (const std::string& name : baseline_names()) {
    if (name == "megatron" && megatron) {
      c.rows.push_back(separate_row(*megatron, name, p, reserve));
      continue;
    }
    BaselineResult result = run_baseline(name, graph, out.tables, mcmc, request.tensor_parallel);
    if (!result.applicable) {
      if (first) c.skipped.emplace_back(name, result.note);
      continue;
    }
    if (name == "data-parallel") data_parallel = result.cost;
    const uint64_t bytes = plan_memory(out.memory, result.choice).total();
    const bool over_cap = request.cap && bytes > *request.cap;
    // The DP is exact over the same configurations, so a baseline below
    // its bound is a bug (under a cap: one that fits, below the proven bound).
    // (Under uniform blocks the optimum is over fewer strategies than a baseline may take.)
    const bool uniform = out.uniform && !out.uniform->runs.empty();
    if (!over_cap && !uniform && result.cost < bound * (1 - 1e-9))
      throw std::logic_error(name + " at p = " + std::to_string(p) + " costs " + format_number("%.17g", result.cost) +
                             ", below the DP's bound " + format_number("%.17g", bound));
    std::string note = result.note;
    if (over_cap) note += std::string(note.empty() ? "" : "; ") + "over the memory cap";
    c.rows.push_back({p, name, result.cost, 1.0, name == "mcmc" ? result.seconds : -1.0,
                      with_machine_memory(note, model, bytes, reserve), bytes, ""});
    c.rows.back().simulated = o.simulate ? simulated_step(solved, result.choice) : NAN;
  }
  if (fsdp) c.rows.push_back(separate_row(*fsdp, "fsdp", p, reserve));
  c.rows.push_back({p, kOptimum, out.solution.cost, 1.0, out.seconds.solve,
                    with_machine_memory(optimum_note(out), model, out.bytes.total(), reserve), out.bytes.total(), ""});
  if (o.simulate) simulate_rows(c, solved, o, p, request.cap, fsdp, megatron);
  for (CompareRow& row : c.rows)
    if (row.devices == p) row.speedup = row.cost > 0 ? data_parallel / row.cost : 1.0;
}

// A pipeline's row: its step, the largest stage's bytes, what it is.
CompareRow pipeline_row(const PipelineAnswer& answer, const std::string& name, int64_t p, const std::string& unit,
                        const std::string& mesh) {
  const PipelineOutcome& o = answer.outcome;
  uint64_t bytes = 0;
  for (const PipelineStage& stage : o.stages) bytes = std::max(bytes, stage.bytes.total());
  std::string note = std::to_string(o.stages.size()) + " stages of " + std::to_string(o.stages.front().devices) +
                     " devices, " + std::to_string(answer.setup.micro_batches) + " micro-batches";
  if (!std::isnan(o.lower_bound))
    note += o.step - o.lower_bound <= 1e-12 * o.step ? ", optimal"
                                                     : ", at least " + format_total(o.lower_bound, unit);
  return {p, name, o.step, 1.0, std::isnan(o.lower_bound) ? -1.0 : answer.seconds, note, bytes, mesh};
}

// With --pipeline-stages: pase's pipeline search (`pase-pipeline`) and
// Megatron-LM's equal stages at the same stage and micro-batch counts
// (`megatron-pipeline`, the baseline of `evaluate --baseline megatron
// --pipeline-stages S`), their speed-ups over the data-parallel row.
void compare_pipelines(Comparison& c, const GraphFileV1& file, const CompareCliOptions& o, const SolveRequest& request,
                       const std::vector<int64_t>& counts, int64_t p) {
  PipelineCliOptions searched;
  searched.stages = o.pipeline_stages;
  // --mesh auto: each stage priced on the layouts of its default mesh, as placed.
  const auto input = [&](const std::vector<int64_t>& ms, const SolveRequest& r) {
    PipelineSolveInput in = pipeline_input(file, o.graph, p, ms, r, o.model, "", false);
    in.stage_layouts = stages_on_layouts(o.mesh, *make_cost_model(o.model, p, r.memory));
    return in;
  };
  std::optional<PipelineAnswer> best;
  try {
    best = best_pipeline(searched, input(counts, request));
  } catch (const ResourceError& refused) {
    c.skipped.emplace_back("pase-pipeline", "at p = " + std::to_string(p) + ": " + refused.what());
    return;
  }
  const std::string mesh = o.mesh == "auto" ? "each stage's default mesh" : "";
  // --simulate: the pipeline's step simulated in its schedule (docs/simulate.md).
  const auto simulated = [&](const PipelineAnswer& answer, const PipelineSolveInput& in) {
    if (!o.simulate) return static_cast<double>(NAN);
    const StepModel step = pipeline_step_model(answer, in, SimulateCliOptions{});
    return simulate_step(step_tasks(step), static_cast<int>(step.stages.size())).step;
  };
  c.rows.push_back(pipeline_row(*best, "pase-pipeline", p, c.unit, mesh));
  c.rows.back().simulated = simulated(*best, input(counts, request));
  PipelineCliOptions fixed;
  fixed.stages = std::to_string(best->outcome.stages.size());
  SolveRequest megatron = request;
  megatron.source = StrategySource::Baseline;
  megatron.baseline = "megatron";
  try {
    const PipelineSolveInput baseline = input({best->setup.micro_batches}, megatron);
    const PipelineAnswer answer = best_pipeline(fixed, baseline);
    c.rows.push_back(pipeline_row(answer, "megatron-pipeline", p, c.unit, mesh));
    c.rows.back().simulated = simulated(answer, baseline);
  } catch (const InputError& refused) {  // nothing fits, or fewer blocks than stages (UsageError)
    c.skipped.emplace_back("megatron-pipeline", "at p = " + std::to_string(p) + ": " + refused.what());
  } catch (const ResourceError& refused) {
    c.skipped.emplace_back("megatron-pipeline", "at p = " + std::to_string(p) + ": " + refused.what());
  }
  double data_parallel = NAN;
  for (const CompareRow& row : c.rows)
    if (row.devices == p && row.strategy == "data-parallel") data_parallel = row.cost;
  for (CompareRow& row : c.rows)
    if (row.devices == p && row.strategy.find("-pipeline") != std::string::npos)
      row.speedup = std::isnan(data_parallel) || row.cost <= 0 ? 1.0 : data_parallel / row.cost;
}

// Whether `a` is a better baseline answer than `b` under `cap`: one that
// fits beats one that does not; then the cheaper, or the one needing less.
bool better_fit(const TrainingSolve& a, const TrainingSolve& b, std::optional<uint64_t> cap) {
  const auto fits = [&](const TrainingSolve& s) { return !cap || s.outcome.bytes.total() <= *cap; };
  if (fits(a) != fits(b)) return fits(a);
  if (fits(a)) return placed_cost(a.outcome) < placed_cost(b.outcome);
  return a.outcome.bytes.total() < b.outcome.bytes.total();
}

// One baseline on the plan's meshes. A baseline takes one stage and one
// mode; where the optimum's are left to the solver it takes what its runs
// use: FSDP ZeRO-3, the others ZeRO-1 (Megatron-LM's distributed
// optimizer), and of no recomputation and full recomputation the better
// (better_fit). Of the micro-batch counts (one unless auto) it tries the
// fewest first and stops at the first that fits without recomputing (more
// would cost more), keeping the best answer seen.
std::unique_ptr<TrainingSolve> baseline_at_its_best(const GraphFileV1& file, const std::string& path,
                                                    const ModelMaker& make_model, SolveRequest baseline,
                                                    const std::vector<int64_t>& counts, const MeshPlan& plan,
                                                    Mesh& mesh) {
  const std::optional<uint64_t> cap = baseline.cap;
  baseline.cap.reset();
  if (baseline.baseline == "fsdp") baseline.memory.zero = 3;
  else if (baseline.memory.zero == kZeroAuto) baseline.memory.zero = 1;
  std::vector<Recompute> modes = {baseline.memory.recompute};
  if (baseline.memory.recompute == Recompute::Auto) modes = {Recompute::None, Recompute::Full};
  std::unique_ptr<TrainingSolve> best;
  for (int64_t m : counts) {
    for (Recompute mode : modes) {
      baseline.memory.recompute = mode;
      Mesh here;
      std::unique_ptr<TrainingSolve> solved;
      try {
        solved = solve_on_meshes(file, path, {m}, make_model, baseline, plan, here);
      } catch (const InputError&) {  // the graph does not build at this micro-batch size
        if (m == counts.back() && !best) throw;
        continue;
      }
      if (!best || better_fit(*solved, *best, cap)) {
        best = std::move(solved);
        mesh = here;
      }
    }
    // Once it fits without recomputing, more micro-batches would only cost more.
    const bool fits = best && (!cap || best->outcome.bytes.total() <= *cap);
    if (fits && (modes.size() == 1 || best->setup.recompute == Recompute::None)) break;
  }
  std::string& note = best->outcome.note;
  if (modes.size() > 1) note += std::string(note.empty() ? "" : "; ") +
                                (best->setup.recompute == Recompute::Full ? "recompute full" : "no recomputation");
  if (counts.size() > 1) note += "; " + std::to_string(best->setup.micro_batches) + " micro-batches";
  return best;
}

// With --mesh: every row priced as placed, the optimum and each baseline on
// its own cheapest mesh under `search` (on a calibrated model, over the
// links each collective crosses), each baseline as baseline_at_its_best
// runs it.
void compare_on_meshes(Comparison& c, const GraphFileV1& file, const std::string& path, const ModelMaker& make_model,
                       const SolveRequest& request, const std::vector<int64_t>& counts, const MeshPlan& plan,
                       std::optional<uint64_t> reserve, int64_t p, bool first, const TrainingSolve& optimum,
                       const Mesh& optimum_mesh, bool fsdp) {
  const SolveOutcome& out = optimum.outcome;
  if (out.capped && !out.capped->feasible) throw ResourceError(no_fit_at(*out.capped, p));
  c.unit = out.tables.unit;
  c.machine = out.tables.machine;
  SolveRequest baseline = request;
  baseline.source = StrategySource::Baseline;
  std::vector<std::string> names = baseline_names();
  if (fsdp) names.push_back("fsdp");
  double data_parallel = 0.0;
  for (const std::string& name : names) {
    baseline.baseline = name;
    Mesh mesh;
    std::unique_ptr<TrainingSolve> solved;
    try {
      solved = baseline_at_its_best(file, path, make_model, baseline, counts, plan, mesh);
    } catch (const BaselineNotApplicable& error) {
      if (first) c.skipped.emplace_back(name, error.reason());
      continue;
    }
    const SolveOutcome& b = solved->outcome;
    const double cost = placed_cost(b);
    if (name == "data-parallel") data_parallel = cost;
    const uint64_t bytes = b.bytes.total();
    std::string note = b.note;
    if (request.cap && bytes > *request.cap) note += std::string(note.empty() ? "" : "; ") + "over the memory cap";
    c.rows.push_back({p, name, cost, 1.0, name == "mcmc" ? b.solution.stats.seconds : -1.0,
                      with_machine_memory(note, *solved->model, bytes, reserve), bytes, mesh_shape_words(mesh)});
  }
  c.rows.push_back({p, kOptimum, placed_cost(out), 1.0, out.seconds.solve,
                    with_machine_memory(optimum_note(out), *optimum.model, out.bytes.total(), reserve),
                    out.bytes.total(), mesh_shape_words(optimum_mesh)});
  for (CompareRow& row : c.rows)
    if (row.devices == p) row.speedup = row.cost > 0 && data_parallel > 0 ? data_parallel / row.cost : 1.0;
}

void print_comparison(const Comparison& c, const Graph& graph, const std::string& model_name, bool placed,
                      bool placed_search) {
  std::cout << graph.name << ": predicted cost per strategy, cost model " << model_name << " (" << c.unit << "), "
            << c.machine.flops_tflops << " TFLOP/s, " << c.machine.bandwidth_gbps << " GB/s\n";
  int width = 14;  // the strategy column: the longest name
  for (const CompareRow& row : c.rows) width = std::max(width, static_cast<int>(row.strategy.size()));
  // Costs in units; with the pase model also as time on the modelled machine.
  const bool timed = c.unit == "flop" && c.machine.flops_tflops > 0;
  auto step = [&](double cost) { return timed ? "  " + pad_left(format_duration(cost / (c.machine.flops_tflops * 1e12)), 9) : ""; };
  // With --simulate, each row's simulated step beside it ("-": not simulated).
  const bool simulated = std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& row) { return !std::isnan(row.simulated); });
  const auto simulated_text = [&](const CompareRow& row) -> std::string {
    if (!simulated) return "";
    return "  " + pad_left(std::isnan(row.simulated) ? "-" : format_cost_text(row.simulated, c.unit), 11);
  };
  char line[1024];
  std::snprintf(line, sizeof line, "%6s  %-*s  %11s%s%s  %9s  %9s  %10s  %s\n", "p", width, "strategy",
                c.unit == "seconds" ? "step" : "cost", timed ? "       step" : "", simulated ? "    simulated" : "",
                "speed-up", "search", "memory GiB", "note");
  std::cout << line;
  for (const CompareRow& row : c.rows) {
    std::string seconds = row.seconds < 0 ? "-" : format_duration(row.seconds);
    std::snprintf(line, sizeof line, "%6lld  %-*s  %11s%s%s  %8.2fx  %9s  %10s  %s\n", static_cast<long long>(row.devices),
                  width, row.strategy.c_str(), format_cost_text(row.cost, c.unit).c_str(), step(row.cost).c_str(),
                  simulated_text(row).c_str(),
                  row.speedup, seconds.c_str(), format_gib(row.memory).c_str(),
                  (row.mesh.empty() ? row.note : "on " + row.mesh + (row.note.empty() ? "" : "; " + row.note)).c_str());
    std::cout << line;
  }
  for (const auto& [name, reason] : c.skipped) std::cout << "note: " << name << " skipped: " << reason << "\n";
  if (simulated)
    std::cout << "note: simulated: one step of each strategy as pase simulate runs it, gradient collectives beside the "
                 "backward pass (docs/simulate.md); mcmc-simulated searches on it, its cost column its strategy's sum\n";
  if (placed)
    std::cout << "note: every cost is its plan's as placed on the mesh named (--mesh"
              << (placed_search ? " search: each strategy on its cheapest mesh" : "") << ")\n";
  else if (c.unit == "seconds")
    std::cout << "note: costs unplaced: each collective priced by the size of its group (--mesh search prices every "
                 "strategy as placed, over the links it crosses)\n";
}

std::string comparison_csv(const Comparison& c, const Graph& graph, bool timings) {
  std::ostringstream csv;
  // The mesh column only where rows are placed: files without --mesh keep their bytes.
  const bool placed = std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& row) { return !row.mesh.empty(); });
  const bool simulated = std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& row) { return !std::isnan(row.simulated); });
  csv << "graph,devices,strategy,cost,unit,speedup,search_seconds,note,per_device_bytes" << (placed ? ",mesh" : "")
      << (simulated ? ",simulated" : "") << "\n";
  for (const CompareRow& row : c.rows)
    csv << csv_field(graph.name) << "," << row.devices << "," << row.strategy << "," << format_number("%.17g", row.cost)
        << "," << c.unit << "," << format_number("%.6f", row.speedup) << ","
        << (row.seconds < 0 || !timings ? "" : format_number("%.6f", row.seconds)) << "," << csv_field(row.note) << ","
        << row.memory << (placed ? "," + csv_field(row.mesh) : "")
        << (!simulated ? "" : std::isnan(row.simulated) ? "," : "," + format_number("%.17g", row.simulated)) << "\n";
  return csv.str();
}

nlohmann::ordered_json comparison_json(const Comparison& c, const Graph& graph, const CompareCliOptions& o,
                                       const std::string& model_name, const SolveRequest& request) {
  using json = nlohmann::ordered_json;
  json doc;
  doc["format"] = "pase-compare";
  doc["version"] = 1;
  doc["graph"] = graph.name;
  doc["cost_model"] = model_name;
  doc["cost_unit"] = c.unit;
  doc["machine"] = {{"flops_tflops", c.machine.flops_tflops}, {"bandwidth_gbps", c.machine.bandwidth_gbps}};
  doc["dtype"] = dtype_name(request.memory.dtype);
  doc["optimizer"] = optimizer_name(request.memory.optimizer);
  doc["cap_bytes"] = request.cap ? json(*request.cap) : json(nullptr);
  if (!request.memory.plain_step() || micro_batches_auto(o.memory)) doc["training"] = training_json(request.memory, o.memory);
  doc["mcmc"] = {{"seed", o.mcmc.seed}, {"max_iterations", o.mcmc.max_iterations}, {"max_seconds", o.mcmc.max_seconds}};
  doc["strategies"] = c.shown;
  doc["skipped"] = json::array();
  for (const auto& [name, reason] : c.skipped) doc["skipped"].push_back({{"strategy", name}, {"reason", reason}});
  doc["results"] = json::array();
  for (int64_t p : c.devices) {
    json entry;
    entry["devices"] = p;
    entry["strategies"] = json::array();
    for (const CompareRow& row : c.rows) {
      if (row.devices != p) continue;
      json item = {{"name", row.strategy}, {"cost", row.cost}, {"speedup", row.speedup}};
      // Without --timings the file is the same bytes on every run.
      item["search_seconds"] = row.seconds < 0 || !o.timings ? json(nullptr) : json(row.seconds);
      item["note"] = row.note;
      item["per_device_bytes"] = row.memory;
      if (!row.mesh.empty()) item["mesh"] = row.mesh;
      if (o.simulate) item["simulated_step"] = std::isnan(row.simulated) ? json(nullptr) : json(row.simulated);
      entry["strategies"].push_back(item);
    }
    doc["results"].push_back(entry);
  }
  return doc;
}

std::string comparison_svg(const Comparison& c, const Graph& graph, const std::vector<int64_t>& devices,
                           const std::string& model_name) {
  BarChart chart;
  chart.title = graph.name + ": predicted speed-up over data parallelism (" + model_name + " cost model)";
  chart.x_label = "devices (p)";
  chart.y_label = "speed-up over data-parallel";
  chart.series = c.shown;
  chart.reference = 1.0;
  for (int64_t p : devices) {
    chart.groups.push_back(std::to_string(p));
    std::vector<double> values(c.shown.size(), std::nan(""));
    for (const CompareRow& row : c.rows)
      if (row.devices == p) values[std::find(c.shown.begin(), c.shown.end(), row.strategy) - c.shown.begin()] = row.speedup;
    chart.values.push_back(values);
  }
  return render_svg(chart);
}

// Megatron under sequence parallelism, unplaced, at the optimum's
// micro-batch count: a stage and a mode where the optimum's are left to the
// solver, ZeRO-1 (Megatron-LM's distributed optimizer) and full
// recomputation. Null where Megatron does not apply (its row says why).
std::unique_ptr<TrainingSolve> megatron_apart(const GraphFileV1& file, const std::string& path,
                                              const ModelMaker& make_model, SolveRequest request, int64_t micro_batches) {
  request.source = StrategySource::Baseline;
  request.baseline = "megatron";
  request.cap.reset();
  if (request.memory.zero == kZeroAuto) request.memory.zero = 1;
  if (request.memory.recompute == Recompute::Auto) request.memory.recompute = Recompute::Full;
  try {
    return std::move(solve_training(file, path, {micro_batches}, make_model, request).best);
  } catch (const BaselineNotApplicable&) {
    return nullptr;
  }
}

// `pase compare` once its options are parsed.
int run_compare(const CompareCliOptions& o) {
  if (o.simulate && !o.mesh.empty())
    throw UsageError("--simulate: not with --mesh (the simulator takes a strategy's unplaced terms; docs/simulate.md)");
  if (o.mcmc_simulation != "delta" && o.mcmc_simulation != "full")
    throw UsageError("--mcmc-simulation: expected delta or full, got '" + o.mcmc_simulation + "'");
  if (!o.pipeline_stages.empty() && !o.mesh.empty() && o.mesh != "auto")
    throw UsageError("--pipeline-stages: with --mesh auto only in compare (each stage on its default mesh's layouts)");
  const TrainingSetup training = memory_options(o.memory);
  std::vector<std::unique_ptr<CostModel>> models;
  for (int64_t p : o.devices) models.push_back(make_cost_model(o.model, p, training));  // validates every p first
  SolveRequest request;  // the policy every command shares: past the DP's limits, a bounded solve
  request.memory = training;
  request.min_row = search_min_row(o.model);
  request.cap = memory_cap(o.memory, *models.front());
  request.cap_search = cap_options(o.memory);
  request.place = false;
  request.tensor_parallel = o.tensor_parallel;
  request.sequence_parallel = o.sequence_parallel;
  request.uniform_blocks = o.uniform_blocks;
  const GraphFileV1 file = read_graph_input(o.graph);
  const std::vector<int64_t> counts =
      micro_batch_counts(o.memory, training, micro_batches_auto(o.memory) ? graph_batch(file, o.graph) : 1);
  Comparison c;
  std::optional<Graph> graph;  // as the first device count priced it (names and notes)
  // One device count's rows; a count nothing fits under the cap is skipped
  // (with a note), and the comparison goes on with the others.
  const auto compare_count = [&](size_t i) {
    const int64_t p = o.devices[i];
    const ModelMaker make_model = [&](const TrainingSetup& setup) { return make_cost_model(o.model, p, setup); };
    if (!o.mesh.empty()) {
      const MeshPlan plan = mesh_plan(o.mesh, p, *models[i]);
      Mesh mesh;
      std::string words;
      const std::unique_ptr<TrainingSolve> best =
          solve_on_meshes(file, o.graph, counts, make_model, request, plan, mesh, &words);
      if (!words.empty()) std::cerr << "note: p = " << p << ":\n" << words;
      compare_on_meshes(c, file, o.graph, make_model, request, counts, plan, memory_reserve(o.memory, *models[i]), p, i == 0,
                        *best, mesh, !training.plain_step());
      if (!o.pipeline_stages.empty()) compare_pipelines(c, file, o, request, counts, p);
      if (!graph) graph = best->graph;
      return;
    }
    const TrainingSearch search = solve_training(file, o.graph, counts, make_model, request);
    if (counts.size() > 1) std::cerr << "note: p = " << p << ": " << micro_batch_search_words(search) << "\n";
    // Under a training setup, FSDP at the optimum's micro-batch count.
    std::optional<TrainingSearch> fsdp;
    if (!training.plain_step()) {
      SolveRequest sharded = request;
      sharded.source = StrategySource::Baseline;
      sharded.baseline = "fsdp";
      sharded.memory.zero = 3;
      // Recomputation left to the solver: FSDP's runs recompute fully.
      if (sharded.memory.recompute == Recompute::Auto) sharded.memory.recompute = Recompute::Full;
      sharded.cap.reset();
      fsdp = solve_training(file, o.graph, {search.best->setup.micro_batches}, make_model, sharded);
    }
    const std::unique_ptr<TrainingSolve> megatron =
        o.sequence_parallel ? megatron_apart(file, o.graph, make_model, request, search.best->setup.micro_batches)
                            : nullptr;
    compare_at(c, *search.best, request, o, memory_reserve(o.memory, *models[i]), p, i == 0,
               fsdp ? fsdp->best.get() : nullptr, megatron.get());
    if (!o.pipeline_stages.empty()) compare_pipelines(c, file, o, request, counts, p);
    if (!graph) graph = search.best->graph;
  };
  std::exception_ptr refused;
  for (size_t i = 0; i < o.devices.size(); ++i) {
    try {
      compare_count(i);
      c.devices.push_back(o.devices[i]);
    } catch (const ResourceError& error) {
      if (!refused) refused = std::current_exception();
      c.skipped.emplace_back("every strategy at p = " + std::to_string(o.devices[i]), error.what());
    }
  }
  if (!graph) std::rethrow_exception(refused);  // no device count fits
  for (const CompareRow& row : c.rows)
    if (std::find(c.shown.begin(), c.shown.end(), row.strategy) == c.shown.end()) c.shown.push_back(row.strategy);
  const std::string model_name = models[0]->name();
  print_comparison(c, *graph, model_name, !o.mesh.empty(), o.mesh == "search");
  if (!o.csv.empty()) write_text_file(o.csv, comparison_csv(c, *graph, o.timings));
  if (!o.json.empty()) write_text_file(o.json, comparison_json(c, *graph, o, model_name, request).dump(2) + "\n");
  if (!o.svg.empty()) write_text_file(o.svg, comparison_svg(c, *graph, c.devices, model_name));
  return 0;
}

}  // namespace

CommandRunner register_compare(CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare the optimal strategy with data parallelism, OWT, Megatron and MCMC");
  cmd->add_option("graph", o->graph, "Graph file (pase-graph JSON)")->required();
  cmd->add_option("--devices,-p", o->devices, "Device counts, comma-separated (4,8,16,32,64)")->required()->delimiter(',');
  add_cost_model_options(cmd, o->model);
  add_memory_options(cmd, o->memory, /*with_cap=*/true);
  add_mcmc_options(cmd, o->mcmc);
  cmd->add_option("--tensor-parallel", o->tensor_parallel,
                  "megatron: ways of tensor parallelism inside a stage (default: the best divisor of each device count)");
  cmd->add_flag("--sequence-parallel", o->sequence_parallel,
                "megatron: Megatron-LM's sequence parallelism (norms and residual adds split over the sequence on the "
                "tensor-parallel ways)");
  cmd->add_option("--mesh", o->mesh,
                  "Price every strategy as placed on a device mesh: search (each dp x tp mesh with tp inside a node, "
                  "every strategy on its cheapest; needs --cost-model calibrated), auto, 2x4 or dp=2,tp=4 "
                  "(default: costs unplaced)");
  cmd->add_flag("--uniform-blocks", o->uniform_blocks,
                "The optimum gives every block of a run of identical blocks one configuration per layer (as the "
                "baselines do); its note says what the free optimum costs");
  cmd->add_option("--pipeline-stages", o->pipeline_stages,
                  "Also rows for pipelines: pase's pipeline search over this many stages (or auto) and Megatron-LM's "
                  "equal stages at its stage and micro-batch counts (docs/pipeline.md)");
  cmd->add_option("--csv", o->csv, "Also write the results as CSV");
  cmd->add_option("--json", o->json, "Also write the results as JSON");
  cmd->add_option("--svg", o->svg, "Also write an SVG bar chart of the speed-ups");
  cmd->add_flag("--simulate", o->simulate,
                "Also each strategy's step simulated (as pase simulate runs it) and a row mcmc-simulated: FlexFlow's "
                "MCMC with the simulated step as its objective (docs/simulate.md)");
  cmd->add_option("--mcmc-simulation", o->mcmc_simulation,
                  "mcmc-simulated: delta (default: each move re-simulates from its first changed task on, as "
                  "FlexFlow's delta simulation) or full (every task, every move)");
  cmd->add_flag("--timings", o->timings, "Also write search_seconds to --csv and --json (they vary from run to run)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return with_option_spellings({{"tensor_parallel", "--tensor-parallel"}}, [&] { return run_compare(*o); });
  };
}

}  // namespace pase
