// `pase frontier GRAPH --devices N`: the cost-memory Pareto frontier, from
// the strategy of least memory per device to the cheapest one, as a table,
// CSV, JSON and an SVG step chart (docs/memory.md).
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/byte_size.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/layer_table.h"
#include "cli/memory_options.h"
#include "cli/mesh_choice.h"
#include "cli/model_options.h"
#include "cli/pipeline_frontier.h"
#include "cli/svg_step_chart.h"
#include "cli/text_output.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "solve/solve_request.h"
#include "plans/mesh.h"
#include "base/text_file.h"
#include "graphs/rebatch.h"

namespace pase {
namespace {

struct FrontierCliOptions {
  std::string graph;
  int64_t devices = 0;
  CostModelOptions model;
  MemoryCliOptions memory;
  std::string mesh;
  int64_t devices_per_node = 0;
  std::string csv, json, svg;
  size_t max_rows = 0;  // 0: every point in the table
  bool uniform_blocks = false;  // every block of a run one configuration per layer
  PipelineCliOptions pipeline;  // --pipeline-stages: the frontier of pipelines
  size_t max_points = 24;       // with --pipeline-stages: searches stop after this many points
  double memory_step = 0.05;    // with --pipeline-stages: each cap this share below the last point's memory
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string format_gap(double gap) { return gap == 0 ? "0" : format_number("%.3g", 100 * gap) + "%"; }

// The frontier as CSV, one point a row.
std::string frontier_csv(const std::vector<FrontierPoint>& frontier, const std::string& graph, int64_t devices,
                         const std::string& unit) {
  std::ostringstream csv;
  csv << "graph,devices,point,per_device_bytes,memory_gib,weights_bytes,activations_bytes,cost,unit,lower_bound_cost,"
         "gap,on_hull\n";
  for (size_t i = 0; i < frontier.size(); ++i) {
    const FrontierPoint& p = frontier[i];
    csv << csv_field(graph) << "," << devices << "," << i << "," << p.bytes.total() << ","
        << format_number("%.6f", static_cast<double>(p.bytes.total()) / kGiB) << "," << p.bytes.weights << ","
        << p.bytes.activations << "," << format_number("%.17g", p.cost) << "," << unit << ","
        << format_number("%.17g", p.lower_bound) << "," << format_number("%.9g", p.gap) << ","
        << (p.on_hull ? "true" : "false") << "\n";
  }
  return csv.str();
}

// The frontier as a pase-frontier document (docs/memory.md).
nlohmann::ordered_json frontier_json(const std::vector<FrontierPoint>& frontier, const std::string& graph,
                                     const FrontierCliOptions& o, const std::string& cost_model, const std::string& unit,
                                     const TrainingSetup& memory_model, const std::vector<int64_t>* counts) {
  nlohmann::ordered_json doc;
  doc["format"] = "pase-frontier";
  doc["version"] = 1;
  doc["graph"] = graph;
  doc["devices"] = o.devices;
  doc["cost_model"] = cost_model;
  doc["cost_unit"] = unit;
  doc["dtype"] = dtype_name(memory_model.dtype);
  doc["optimizer"] = optimizer_name(memory_model.optimizer);
  doc["mesh"] = o.mesh.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.mesh);
  if (!memory_model.plain_step() || micro_batches_auto(o.memory))
    doc["training"] = training_json(memory_model, o.memory);
  doc["points"] = nlohmann::ordered_json::array();
  for (const FrontierPoint& p : frontier)
    doc["points"].push_back({{"per_device_bytes", p.bytes.total()},
                             {"weights_bytes", p.bytes.weights},
                             {"activations_bytes", p.bytes.activations},
                             {"cost", p.cost},
                             {"lower_bound_cost", p.lower_bound},
                             {"gap", p.gap},
                             {"on_hull", p.on_hull}});
  if (o.uniform_blocks) doc["uniform_blocks"] = true;  // every point gives identical blocks one plan
  if (counts)  // --micro-batches auto: each point's count
    for (size_t i = 0; i < frontier.size(); ++i) doc["points"][i]["micro_batches"] = (*counts)[frontier[i].source];
  return doc;
}

// What a frontier chart says besides its points.
struct FrontierChartWords {
  std::string title, what, series;  ///< what: "cost" or "step"
  bool pipeline = false;             ///< points proven by their gap, not by the hull
  std::optional<double> machine_gib; ///< the machine's memory for training, a line on the chart
};

// The frontier as an SVG step chart of `what` (cost, step) against memory per device.
std::string frontier_svg(const std::vector<FrontierPoint>& frontier, const std::string& unit,
                         const FrontierChartWords& words) {
  StepChart chart;
  chart.title = words.title;
  chart.x_label = "memory per device (GiB)";
  // FLOP counts in TFLOP: tick labels of a few digits, not 4e+13.
  const double y_scale = unit == "flop" ? 1e12 : 1.0;
  chart.y_label = unit == "flop" ? words.what + " (TFLOP per step)" : words.what + " (" + unit + " per step)";
  chart.series = words.series;
  chart.bound_series = "lower bound (convex hull)";
  chart.proven_series = words.pipeline ? "gap 0: the fastest within its memory" : "on the hull: the least within its memory";
  chart.unproven_series = words.pipeline ? "within its gap (capped search)" : "found by moves, within its gap";
  for (const FrontierPoint& p : frontier) {
    chart.x.push_back(static_cast<double>(p.bytes.total()) / kGiB);
    chart.y.push_back(p.cost / y_scale);
    chart.proven.push_back(words.pipeline ? p.gap <= 1e-12 : p.on_hull);
    if (p.on_hull) {
      chart.bound_x.push_back(chart.x.back());
      chart.bound_y.push_back(chart.y.back());
    }
  }
  if (words.machine_gib) {
    chart.limit_x = *words.machine_gib;
    chart.limit_tag = format_number("%.1f", *words.machine_gib) + " GiB";
    chart.limit_label = "a device's memory for training: " + chart.limit_tag;
  }
  return render_svg(chart);
}

// The machine's memory per device less the reserve, in GiB; none without a machine.
std::optional<double> machine_training_gib(const MemoryCliOptions& options, const CostModel& model) {
  const std::optional<uint64_t> machine = model.memory_per_device();
  if (!machine) return std::nullopt;
  const uint64_t kept = std::min(*machine, memory_reserve(options, model).value_or(default_memory_reserve(*machine)));
  return static_cast<double>(*machine - kept) / kGiB;
}

// Each micro-batch count's frontier, merged (one count: its own).
struct CountFrontiers {
  Graph graph;        // at the first count that answered (names)
  SolveOutcome first; // its solve (tables, for the document)
  std::vector<FrontierPoint> points;
  std::vector<int64_t> counts;  // per merged frontier: its count
  int runs = 0;
  std::string words;  // "; micro-batches auto: ..." (what was tried)
};

CountFrontiers count_frontiers(const GraphFileV1& file, const FrontierCliOptions& o, const std::vector<int64_t>& counts,
                               const SolveRequest& request) {
  CountFrontiers out;
  std::vector<std::vector<FrontierPoint>> frontiers;
  std::string refused;
  for (int64_t m : counts) {
    SolveRequest at = request;
    at.memory.micro_batches = m;
    try {
      const Graph graph = training_graph(file, o.graph, at.memory);
      const std::unique_ptr<CostModel> model = make_cost_model(o.model, o.devices, at.memory);
      SolveOutcome solved = solve_request(graph, *model, at);
      out.runs += solved.frontier_runs;
      frontiers.push_back(std::move(solved.frontier));
      out.counts.push_back(m);
      if (frontiers.size() == 1) {
        out.graph = graph;
        out.first = std::move(solved);
      }
    } catch (const InputError& error) {  // a count whose graph does not build there
      if (counts.size() == 1) throw;
      if (refused.empty()) refused = error.what();
    }
  }
  if (frontiers.empty()) throw InputError(refused);
  out.points = frontiers.size() == 1 ? std::move(frontiers[0]) : merge_frontiers(frontiers);
  out.words = "; micro-batches auto: " + std::to_string(out.counts.size()) + " of " + std::to_string(counts.size()) +
              " divisors of the batch";
  return out;
}

// "4 x 2, M 8": the stages' devices and the micro-batch count.
std::string pipeline_words(const PipelinePoint& p) {
  std::string words;
  const bool equal = std::adjacent_find(p.stage_devices.begin(), p.stage_devices.end(), std::not_equal_to<>()) ==
                     p.stage_devices.end();
  if (equal) {
    words = std::to_string(p.stage_devices.size()) + " x " + std::to_string(p.stage_devices.front());
  } else {
    for (size_t k = 0; k < p.stage_devices.size(); ++k) words += (k ? "," : "") + std::to_string(p.stage_devices[k]);
  }
  return words + ", M " + std::to_string(p.micro_batches);
}

// --pipeline-stages: the frontier of pipelines, each point a pipeline search
// under a cap one byte below the last point's memory (docs/pipeline.md).
int run_pipeline_frontier(const FrontierCliOptions& o, const GraphFileV1& file, const std::vector<int64_t>& counts,
                          SolveRequest request) {
  if (!o.mesh.empty() && o.mesh != "auto")
    throw UsageError("frontier: --mesh with --pipeline-stages: auto only (each stage on its default mesh's layouts)");
  if (o.uniform_blocks) throw UsageError("frontier: --uniform-blocks with --pipeline-stages is not searched yet");
  if (o.max_points == 0) throw UsageError("frontier: --max-points must be at least 1");
  if (!(o.memory_step >= 0 && o.memory_step < 1)) throw UsageError("frontier: --memory-step must be in [0, 1)");
  request.source = StrategySource::Optimum;
  PipelineSolveInput input = pipeline_input(file, o.graph, o.devices, counts, request, o.model, "", false);
  input.stage_layouts = stages_on_layouts(o.mesh, *make_cost_model(o.model, o.devices, request.memory));
  const PipelineFrontier found = pipeline_frontier(o.pipeline, input, o.max_points, o.memory_step);
  const std::unique_ptr<CostModel> model = make_cost_model(o.model, o.devices, request.memory);
  const std::string unit = model->unit(), name = file.name;
  std::vector<FrontierPoint> points;
  for (const PipelinePoint& p : found.points) points.push_back(p.point);
  const double fastest = points.back().cost;
  std::cout << name << " on " << o.devices << " devices" << (input.stage_layouts ? " (each stage on its default mesh)" : "")
            << ": step-memory frontier of pipelines, cost model "
            << model->name() << " (" << unit << "), " << dtype_name(request.memory.dtype) << ", "
            << optimizer_name(request.memory.optimizer) << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%5s  %12s  %16s  %11s  %9s  %9s  %s\n", "point", "memory GiB", "memory bytes",
                "step", "x best", "gap", "stages x devices, micro-batches");
  std::cout << line;
  for (size_t i = 0; i < points.size(); ++i) {
    const FrontierPoint& p = points[i];
    std::snprintf(line, sizeof line, "%5zu  %12s  %16llu  %11s  %8.3fx  %9s  %s", i,
                  format_number("%.3f", static_cast<double>(p.bytes.total()) / kGiB).c_str(),
                  static_cast<unsigned long long>(p.bytes.total()), format_cost_text(p.cost, unit).c_str(), p.cost / fastest,
                  format_gap(p.gap).c_str(), pipeline_words(found.points[i]).c_str());
    std::cout << line << "\n";
  }
  std::cout << points.size() << " points from the least memory (" << format_gib(points.front().bytes.total())
            << " GiB) to the fastest step (" << format_gib(points.back().bytes.total()) << " GiB), "
            << found.searches << " pipeline searches, each under a cap "
            << (o.memory_step > 0 ? format_number("%g", 100 * o.memory_step) + "%" : "one byte")
            << " below the last point's memory";
  if (found.truncated)
    std::cout << "; stopped at " << o.max_points << " points (--max-points): below "
              << format_gib(points.front().bytes.total()) << " GiB not searched";
  std::cout << "\n";
  if (!o.csv.empty()) write_text_file(o.csv, frontier_csv(points, name, o.devices, unit));
  if (!o.json.empty()) {
    nlohmann::ordered_json doc = frontier_json(points, name, o, model->name(), unit, request.memory, nullptr);
    for (size_t i = 0; i < points.size(); ++i)
      doc["points"][i]["pipeline"] = {{"stages", found.points[i].stage_devices.size()},
                                      {"schedule", o.pipeline.schedule},
                                      {"stage_devices", found.points[i].stage_devices},
                                      {"micro_batches", found.points[i].micro_batches}};
    for (size_t i = 0; i < points.size(); ++i)
      doc["points"][i]["cap_bytes"] = found.points[i].cap ? nlohmann::ordered_json(*found.points[i].cap) : nullptr;
    doc["truncated"] = found.truncated;
    write_text_file(o.json, doc.dump(2) + "\n");
  }
  if (!o.svg.empty())
    write_text_file(o.svg, frontier_svg(points, unit,
                                        {name + " on " + std::to_string(o.devices) +
                                             " devices: fastest pipeline under a memory cap (" +
                                             dtype_name(request.memory.dtype) + ", " +
                                             optimizer_name(request.memory.optimizer) + ")",
                                         "step", "fastest pipeline found under the cap", true,
                                         machine_training_gib(o.memory, *model)}));
  return 0;
}

int run_frontier(const FrontierCliOptions& o) {
  std::unique_ptr<CostModel> model = make_cost_model(o.model, o.devices, memory_options(o.memory));
  SolveRequest request;
  request.source = StrategySource::Frontier;
  request.memory = memory_options(o.memory);
  request.min_row = search_min_row(o.model);
  request.uniform_blocks = o.uniform_blocks;
  if (!o.mesh.empty() && !o.pipeline.requested()) {
    const int64_t per_node = o.devices_per_node ? o.devices_per_node : model->devices_per_node();
    try {
      request.mesh = parse_mesh(o.mesh, o.devices, per_node);
    } catch (const OptionError& error) {
      throw UsageError(error.words().with("--mesh"));
    }
  }
  const GraphFileV1 file = read_graph_input(o.graph);
  const std::vector<int64_t> counts =
      micro_batch_counts(o.memory, request.memory, micro_batches_auto(o.memory) ? graph_batch(file, o.graph) : 1);
  if (o.pipeline.requested()) return run_pipeline_frontier(o, file, counts, request);
  const CountFrontiers found = count_frontiers(file, o, counts, request);
  const Graph& graph = found.graph;
  const SolveOutcome& out = found.first;
  const CostTables& tables = out.tables;
  const TrainingSetup& memory_model = request.memory;
  const std::vector<FrontierPoint>& frontier = found.points;
  const bool counted = counts.size() > 1;
  const std::string& unit = tables.unit;
  const double cheapest = frontier.back().cost;

  std::cout << graph.name << " on " << o.devices << " devices" << (request.mesh ? " (mesh " + o.mesh + ")" : "")
            << ": cost-memory frontier, cost model " << tables.cost_model << " (" << unit << "), "
            << dtype_name(memory_model.dtype) << ", " << optimizer_name(memory_model.optimizer) << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%5s  %12s  %16s  %11s  %9s  %9s  %s%s\n", "point", "memory GiB", "memory bytes",
                unit == "seconds" ? "step" : "cost", "x best", "gap", "found by", counted ? "  micro-batches" : "");
  std::cout << line;
  // With --max-rows, rows spread evenly over the points, both ends kept.
  const size_t rows = o.max_rows ? std::min(o.max_rows, frontier.size()) : frontier.size();
  for (size_t r = 0; r < rows; ++r) {
    const size_t i = rows == 1 ? 0 : r * (frontier.size() - 1) / (rows - 1);
    const FrontierPoint& p = frontier[i];
    std::snprintf(line, sizeof line, "%5zu  %12s  %16llu  %11s  %8.3fx  %9s  %s", i, format_number("%.3f", static_cast<double>(p.bytes.total()) / kGiB).c_str(),
                  static_cast<unsigned long long>(p.bytes.total()), format_cost_text(p.cost, unit).c_str(), p.cost / cheapest,
                  format_gap(p.gap).c_str(), p.on_hull ? "dp   " : "moves");
    std::string text = line;
    if (counted) text += "     " + std::to_string(found.counts[p.source]);
    else text.erase(text.find_last_not_of(' ') + 1);
    std::cout << text << "\n";
  }
  std::cout << frontier.size() << " points from the least memory (" << format_gib(frontier.front().bytes.total())
            << " GiB) to the least cost (" << format_gib(frontier.back().bytes.total()) << " GiB), " << found.runs
            << " DP runs" << (counted ? found.words : "") << "\n";
  if (out.uniform)
    std::cout << "uniform blocks: " << uniform_runs_words(graph, out.uniform->runs)
              << ", every point one configuration per layer of each block\n";

  if (!o.csv.empty()) write_text_file(o.csv, frontier_csv(frontier, graph.name, o.devices, unit));
  if (!o.json.empty())
    write_text_file(o.json, frontier_json(frontier, graph.name, o, tables.cost_model, unit, memory_model,
                                          counted ? &found.counts : nullptr)
                                    .dump(2) + "\n");
  if (!o.svg.empty())
    write_text_file(o.svg, frontier_svg(frontier, unit,
                                        {graph.name + " on " + std::to_string(o.devices) +
                                             " devices: least cost under a memory cap (" +
                                             dtype_name(memory_model.dtype) + ", " +
                                             optimizer_name(memory_model.optimizer) + ")",
                                         "cost", "best cost found under the cap", false,
                                         machine_training_gib(o.memory, *model)}));
  return 0;
}

}  // namespace

CommandRunner register_frontier(CLI::App& app) {
  auto o = std::make_shared<FrontierCliOptions>();
  CLI::App* cmd = app.add_subcommand("frontier", "The cost-memory Pareto frontier: strategies from least memory per device to least cost");
  cmd->add_option("graph", o->graph, "Graph file (pase-graph JSON)")->required();
  cmd->add_option("--devices,-p", o->devices, "Number of devices")->required();
  add_cost_model_options(cmd, o->model);
  add_memory_options(cmd, o->memory, /*with_cap=*/false);
  cmd->add_option("--mesh", o->mesh, "Only configurations this device mesh realizes (auto, 2x4, dp=2,tp=4)");
  cmd->add_option("--devices-per-node", o->devices_per_node, "Devices per node, recorded in the mesh (default: the --machine profile's)");
  cmd->add_flag("--uniform-blocks", o->uniform_blocks,
                "Give every block of a run of identical blocks one configuration per layer (as Megatron-LM, FSDP and a "
                "scan over layers run) at every point");
  add_pipeline_options(cmd, o->pipeline);
  cmd->add_option("--max-points", o->max_points,
                  "With --pipeline-stages: stop after this many points (default 24), each a pipeline search");
  cmd->add_option("--memory-step", o->memory_step,
                  "With --pipeline-stages: search each point under a cap this share below the last point's memory "
                  "(default 0.05; 0: one byte, every Pareto point)");
  cmd->add_option("--max-rows", o->max_rows, "Print at most this many points in the table, spread evenly (files keep all)");
  cmd->add_option("--csv", o->csv, "Also write the frontier as CSV");
  cmd->add_option("--json", o->json, "Also write the frontier as JSON");
  cmd->add_option("--svg", o->svg, "Also write an SVG step chart of cost against memory per device");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_frontier(*o);
  };
}

}  // namespace pase
