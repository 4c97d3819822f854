// `pase evaluate GRAPH (--strategy FILE | --baseline NAME) [--devices N]`:
// prices a given strategy under the chosen cost model, layer by layer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/file_model.h"
#include "cli/layer_table.h"
#include "cli/text_output.h"
#include "base/byte_size.h"
#include "cli/graph_input.h"
#include "cli/training_solve.h"
#include "cli/mesh_choice.h"
#include "graphs/rebatch.h"
#include "cli/memory_options.h"
#include "cli/pipeline_solve.h"
#include "cli/model_options.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "solve/solve_request.h"
#include "cli/step_report.h"
#include "strategy/plan_summary.h"
#include "strategy/config_lookup.h"
#include "strategy/strategy_file.h"
#include "strategy/strategy_reader.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct EvaluateCliOptions {
  std::string graph;
  std::string strategy;
  std::string baseline;
  int64_t devices = 0;  // 0: the strategy file's
  CostModelOptions model;
  bool model_given = false;  // --cost-model, --machine, --flops or --bandwidth: else a file's own model
  MemoryCliOptions memory;
  McmcOptions mcmc;
  int64_t tensor_parallel = 0;  // megatron: 0, the best
  bool sequence_parallel = false;  // megatron: Megatron-LM's --sequence-parallel
  std::string mesh;             // --baseline: placed on it (search: the cheapest dp x tp mesh)
  PipelineCliOptions pipeline;  // --baseline: in pipeline stages of equal blocks
  std::string out;
  bool json = false;
  bool all_layers = false;  // every row of the table, no block folded
  SimulateCliOptions simulate;  // `simulate`: the step simulated instead of the table
};

// --baseline fsdp is data parallelism with every layer's state sharded:
// ZeRO-3 whatever --zero says, unless it says otherwise.
TrainingSetup baseline_setup(const EvaluateCliOptions& o, TrainingSetup training) {
  if (o.tensor_parallel != 0 && o.baseline != "megatron")
    throw UsageError("--tensor-parallel: applies to --baseline megatron");
  if (o.sequence_parallel && o.baseline != "megatron")
    throw UsageError("--sequence-parallel: applies to --baseline megatron");
  if (!o.baseline.empty() && training.zero == kZeroAuto)
    throw UsageError("--zero auto: the solver chooses each layer's stage; --baseline " + o.baseline +
                     " takes one (0, 1, 2 or 3)");
  if (!o.baseline.empty() && training.recompute == Recompute::Auto)
    throw UsageError("--recompute auto: the solver chooses each layer's; --baseline " + o.baseline +
                     " takes one mode (none or full)");
  if (o.baseline != "fsdp") return training;
  if (!o.memory.zero.empty() && training.zero != 3)
    throw UsageError("--baseline fsdp: shards every layer's state at ZeRO-3; --zero " + o.memory.zero + " contradicts it");
  training.zero = 3;
  return training;
}

// The strategy file of --strategy, the cost model to price it with (its own
// unless the command line names one) and the device count to price it for.
std::optional<FileAndModel> read_given(const EvaluateCliOptions& o, int64_t& devices) {
  if (o.strategy.empty() == o.baseline.empty())
    throw InputError(std::string(o.simulate.on ? "simulate" : "evaluate") +
                     ": give exactly one of --strategy FILE or --baseline NAME");
  devices = o.devices;
  if (o.strategy.empty()) {
    if (devices == 0) throw UsageError("--devices: required with --baseline");
    return std::nullopt;
  }
  FileAndModel read = read_file_and_model(o.strategy, o.model, o.model_given, std::cerr);
  const StrategyDocument& file = read.file;
  if (devices == 0 && file.devices) {
    devices = *file.devices;
    // The file's count, not the command line's: bad input named by its field (make_cost_model's limit).
    if (devices > kMaxDevices)
      throw InputError(o.strategy + ": field 'devices': at most 2^30 devices, got " + std::to_string(devices) +
                       "; pass --devices");
  }
  if (devices == 0) throw InputError(o.strategy + ": field 'devices': missing; pass --devices");
  if (file.devices && *file.devices != devices)
    std::cerr << "warning: " << o.strategy << " was written for " << *file.devices << " devices; pricing it for "
              << devices << "\n";
  return read;
}

// --baseline with --mesh: the baseline placed on the mesh (search: on each
// dp x tp mesh, the cheapest kept, their lines in `mesh_words`), its axes
// chosen with its configurations on the calibrated model.
std::unique_ptr<TrainingSolve> baseline_on_mesh(const EvaluateCliOptions& o, const GraphFileV1& graph_file,
                                                const std::vector<int64_t>& counts, const ModelMaker& make_model,
                                                SolveRequest request, int64_t devices, std::string& mesh_words) {
  if (o.baseline.empty()) throw UsageError("--mesh: applies to --baseline (a strategy file's plan has its own mesh)");
  const MeshPlan plan = mesh_plan(o.mesh, devices, *make_model(request.memory));
  Mesh mesh;
  return solve_on_meshes(graph_file, o.graph, counts, make_model, request, plan, mesh, &mesh_words);
}

// `pase evaluate` once its options are parsed.
// A baseline in pipeline stages (docs/pipeline.md): each stage an equal
// share of the blocks, each stage the baseline on its devices.
int evaluate_pipeline(const EvaluateCliOptions& o, const GraphFileV1& file, const std::vector<int64_t>& counts,
                      const SolveRequest& request, int64_t devices) {
  if (o.baseline.empty()) throw UsageError("--pipeline-stages: applies to --baseline (a strategy file records its own stages)");
  if (!o.mesh.empty() && o.mesh != "auto")
    throw UsageError("--mesh: with pipeline stages only auto (each stage on the default mesh of its devices; docs/pipeline.md)");
  PipelineSolveInput input = pipeline_input(file, o.graph, devices, counts, request, o.model, o.out, o.json);
  input.stage_layouts = stages_on_layouts(o.mesh, *make_cost_model(o.model, devices, request.memory));
  if (o.simulate.on) input.simulate = &o.simulate;
  return run_pipeline_solve(o.pipeline, input);
}

// A pipeline strategy file (docs/pipeline.md): its stages, devices and
// schedule as it records them, each stage's strategy priced on its devices.
int evaluate_pipeline_file(const EvaluateCliOptions& o, const GraphFileV1& graph_file, const std::vector<int64_t>& counts,
                           const SolveRequest& request, int64_t devices, const StrategyDocument& file) {
  if (o.pipeline.requested()) throw UsageError("--pipeline-stages: applies to --baseline (a strategy file records its own stages)");
  if (!o.mesh.empty()) throw UsageError("--mesh: applies to --baseline (a strategy file records its own meshes)");
  const TrainingRecord& training = *file.training;
  PipelineCliOptions recorded;
  recorded.stages = std::to_string(training.stages);
  recorded.schedule = training.schedule;
  for (size_t k = 0; k < training.stage_devices.size(); ++k)
    recorded.stage_devices += (k ? "," : "") + std::to_string(training.stage_devices[k]);
  PipelineSolveInput input = pipeline_input(graph_file, o.graph, devices, counts, request, o.model, o.out, o.json);
  input.given = &file;
  // A file whose stages' layouts were searched is priced on them, as it was.
  input.stage_layouts = file.plan && !file.plan->stages.empty() &&
                        std::all_of(file.plan->stages.begin(), file.plan->stages.end(),
                                    [](const PlanStage& stage) { return stage.assignment_proof == "searched"; });
  input.given_path = o.strategy;
  if (o.simulate.on) input.simulate = &o.simulate;
  return run_pipeline_solve(recorded, input);
}

int run_evaluate(const EvaluateCliOptions& given) {
  int64_t devices = 0;
  std::optional<FileAndModel> read = read_given(given, devices);
  EvaluateCliOptions o = given;
  std::optional<StrategyDocument> file;
  if (read) {
    o.model = read->model;
    file = std::move(read->file);
  }
  const TrainingSetup training = baseline_setup(o, memory_options(o.memory, file));
  std::ostringstream differences;  // said once the file is priced (not before an error about it)
  if (file) note_training_differences(*file, training, o.strategy, differences);
  const ModelMaker make_model = [&](const TrainingSetup& setup) { return make_cost_model(o.model, devices, setup); };
  const std::unique_ptr<CostModel> setup_model = make_model(training);  // the options' errors before the graph's
  SolveRequest request = pricing_request(training, file ? &*file : nullptr);
  request.min_row = search_min_row(o.model);
  request.given_path = o.strategy;
  if (file) price_on_searched_plan(request, *file, devices, *setup_model);
  if (!file) {
    request.source = StrategySource::Baseline;
    request.baseline = o.baseline;
    request.mcmc = o.mcmc;
    request.tensor_parallel = o.tensor_parallel;
    request.sequence_parallel = o.sequence_parallel;
  }
  const GraphFileV1 graph_file = read_graph_input(o.graph);
  const std::vector<int64_t> counts =
      micro_batch_counts(o.memory, training, micro_batches_auto(o.memory) ? graph_batch(graph_file, o.graph) : 1);
  if (file && file->training && file->training->stages > 1)
    return evaluate_pipeline_file(o, graph_file, counts, request, devices, *file);
  if (o.pipeline.requested()) return evaluate_pipeline(o, graph_file, counts, request, devices);
  TrainingSearch search;
  std::string mesh_words;
  if (o.mesh.empty()) {
    search = solve_training(graph_file, o.graph, counts, make_model, request);
    if (counts.size() > 1) std::cerr << "note: " << micro_batch_search_words(search) << "\n";
  } else {
    search.best = baseline_on_mesh(o, graph_file, counts, make_model, request, devices, mesh_words);
  }
  const TrainingSolve& solved = *search.best;
  const Graph& graph = solved.graph;
  const CostModel* model = solved.model.get();
  const SolveOutcome& out = solved.outcome;
  std::cerr << differences.str();
  if (file && !file->graph.empty() && file->graph != graph.name)
    std::cerr << "warning: " << o.strategy << " is for graph '" << file->graph << "', pricing it on '" << graph.name
              << "'\n";
  const std::vector<int32_t>& choice = out.solution.choice;
  if (o.simulate.on)
    return report_solve_simulation(solved, devices, graph.name + " on " + std::to_string(devices) + " devices, strategy " +
                                                        (o.strategy.empty() ? o.baseline : o.strategy),
                                   o.simulate, std::cout);
  const double total = placed_cost(out);
  const Plan* plan = out.placed ? &out.placed->plan : nullptr;
  MemoryReport memory;
  memory.options = solved.setup;
  memory.micro_batch_size = solved.micro_batch_size;
  memory.bytes = out.bytes;
  if (const std::string over = over_machine_memory_words(*model, memory.bytes.total(), memory_reserve(o.memory, *model)); !over.empty())
    std::cerr << "warning: " << over << "\n";
  if (o.json || !o.out.empty()) {
    const std::string text = write_strategy_file(graph, out.tables, choice, total, nullptr, plan, &memory);
    if (o.json) std::cout << text;
    if (!o.out.empty()) write_text_file(o.out, text);
  }
  if (o.json) return 0;
  const std::string label = file ? o.strategy : o.baseline + (out.note.empty() ? "" : " (" + out.note + ")");
  std::cout << strategy_table({&graph, &out.tables, &choice, total, &solved.setup, o.all_layers}, ", strategy " + label, "");
  std::cout << "memory per device " << format_gib(memory.bytes.total()) << " GiB (weights "
            << format_gib(memory.bytes.weights) << " GiB, activations " << format_gib(memory.bytes.activations) << " GiB; "
            << dtype_name(memory.options.dtype) << ", " << optimizer_name(memory.options.optimizer)
            << training_words(graph, memory.options, memory.micro_batch_size) << ")\n";
  std::cout << "strategy: " << plan_summary(graph, out.tables, choice, memory.options, plan) << "\n";
  if (plan)
    std::cout << mesh_words << "plan on mesh " << mesh_shape_words(plan->mesh) << ": realized total cost "
              << format_total(total, out.tables.unit) << " " << out.tables.unit
              << (out.layouts.empty() ? " (the layers as the tables price them, the edges as the plan moves them)"
                                      : " (every collective over the links it crosses, as priced)")
              << "\n" << weight_reshard_lines(*out.placed, out.tables.unit);
  if (file && file->total_cost && std::fabs(*file->total_cost - total) > 1e-9 * std::fabs(total))
    std::cout << "note: the file records total_cost " << format_total(*file->total_cost, out.tables.unit)
              << " (another machine, cost model or edit)\n";
  return 0;
}

}  // namespace

namespace {

// The options `evaluate` and `simulate` share: what is priced, and how.
void add_pricing_options(CLI::App* cmd, EvaluateCliOptions& options) {
  EvaluateCliOptions* o = &options;
  cmd->add_option("graph", o->graph, "Graph file (pase-graph JSON)")->required();
  auto* strategy = cmd->add_option("--strategy,-s", o->strategy, "Strategy file (pase-strategy JSON) to price");
  auto* baseline = cmd->add_option("--baseline,-b", o->baseline,
                                   "Built-in strategy: data-parallel, owt, megatron, fsdp (data parallel at ZeRO-3), mcmc");
  strategy->excludes(baseline);
  baseline->excludes(strategy);
  cmd->add_option("--devices,-p", o->devices, "Number of devices (default: the strategy file's)");
  add_cost_model_options(cmd, o->model);
  add_memory_options(cmd, o->memory, /*with_cap=*/false);
  add_pipeline_options(cmd, o->pipeline);
  add_mcmc_options(cmd, o->mcmc);
  cmd->add_option("--tensor-parallel", o->tensor_parallel,
                  "megatron: ways of tensor parallelism inside a stage (default: the best divisor of the devices)");
  cmd->add_flag("--sequence-parallel", o->sequence_parallel,
                "megatron: Megatron-LM's sequence parallelism (norms and residual adds split over the sequence on the "
                "tensor-parallel ways)");
  cmd->add_option("--mesh", o->mesh,
                  "With --baseline: place it on a device mesh, its cost the placed plan's: search (each dp x tp mesh "
                  "with tp inside a node, the cheapest kept; needs --cost-model calibrated), auto, 2x4 or dp=2,tp=4");
}

}  // namespace

CommandRunner register_evaluate(CLI::App& app) {
  auto o = std::make_shared<EvaluateCliOptions>();
  CLI::App* cmd = app.add_subcommand("evaluate", "Price a given strategy (a pase-strategy file or a baseline)");
  add_pricing_options(cmd, *o);
  cmd->add_option("--out,-o", o->out, "Write the priced strategy (pase-strategy JSON) here");
  cmd->add_flag("--json", o->json, "Print the priced strategy file to stdout instead of the table");
  cmd->add_flag("--all-layers", o->all_layers, "Print every layer's row (by default a repeated block's identical copies fold into one line)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->model_given = model_options_given(*cmd);
    return with_option_spellings({{"baseline", "--baseline"}, {"tensor_parallel", "--tensor-parallel"}},
                                 [&] { return run_evaluate(*o); });
  };
}

CommandRunner register_simulate(CLI::App& app) {
  auto o = std::make_shared<EvaluateCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Simulate one training step of a strategy (FlexFlow's simulator): overlap, bubbles, a timeline");
  add_pricing_options(cmd, *o);
  add_simulate_options(cmd, o->simulate);
  o->simulate.on = true;
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->model_given = model_options_given(*cmd);
    return with_option_spellings({{"baseline", "--baseline"}, {"tensor_parallel", "--tensor-parallel"}},
                                 [&] { return run_evaluate(*o); });
  };
}

}  // namespace pase
