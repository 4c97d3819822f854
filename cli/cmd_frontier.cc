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
#include "cli/memory_options.h"
#include "cli/model_options.h"
#include "cli/svg_step_chart.h"
#include "cli/text_output.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "solve/solve_request.h"
#include "plans/mesh.h"
#include "base/text_file.h"

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
                                     const FrontierCliOptions& o, const CostTables& tables,
                                     const TrainingSetup& memory_model) {
  nlohmann::ordered_json doc;
  doc["format"] = "pase-frontier";
  doc["version"] = 1;
  doc["graph"] = graph;
  doc["devices"] = o.devices;
  doc["cost_model"] = tables.cost_model;
  doc["cost_unit"] = tables.unit;
  doc["dtype"] = dtype_name(memory_model.dtype);
  doc["optimizer"] = optimizer_name(memory_model.optimizer);
  doc["mesh"] = o.mesh.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.mesh);
  if (!memory_model.plain_step()) doc["training"] = training_json(memory_model, o.memory);
  doc["points"] = nlohmann::ordered_json::array();
  for (const FrontierPoint& p : frontier)
    doc["points"].push_back({{"per_device_bytes", p.bytes.total()},
                             {"weights_bytes", p.bytes.weights},
                             {"activations_bytes", p.bytes.activations},
                             {"cost", p.cost},
                             {"lower_bound_cost", p.lower_bound},
                             {"gap", p.gap},
                             {"on_hull", p.on_hull}});
  return doc;
}

int run_frontier(const FrontierCliOptions& o) {
  std::unique_ptr<CostModel> model = make_cost_model(o.model, o.devices, memory_options(o.memory));
  SolveRequest request;
  request.source = StrategySource::Frontier;
  request.memory = memory_options(o.memory);
  if (!o.mesh.empty()) {
    const int64_t per_node = o.devices_per_node ? o.devices_per_node : model->devices_per_node();
    try {
      request.mesh = parse_mesh(o.mesh, o.devices, per_node);
    } catch (const OptionError& error) {
      throw UsageError(error.words().with("--mesh"));
    }
  }
  if (micro_batches_auto(o.memory))
    throw UsageError("--micro-batches auto: a frontier is one micro-batch count's trade-off; give a count "
                     "(`pase solve --micro-batches auto` finds the best one under a cap)");
  const Graph graph = training_graph(read_graph_input(o.graph), o.graph, request.memory);
  const SolveOutcome out = solve_request(graph, *model, request);
  const CostTables& tables = out.tables;
  const TrainingSetup& memory_model = request.memory;
  const std::vector<FrontierPoint>& frontier = out.frontier;
  const std::string& unit = tables.unit;
  const double cheapest = frontier.back().cost;

  std::cout << graph.name << " on " << o.devices << " devices" << (request.mesh ? " (mesh " + o.mesh + ")" : "")
            << ": cost-memory frontier, cost model " << tables.cost_model << " (" << unit << "), "
            << dtype_name(memory_model.dtype) << ", " << optimizer_name(memory_model.optimizer) << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%5s  %12s  %16s  %22s  %9s  %9s  %s\n", "point", "memory GiB", "memory bytes", "cost",
                "x best", "gap", "found by");
  std::cout << line;
  // With --max-rows, rows spread evenly over the points, both ends kept.
  const size_t rows = o.max_rows ? std::min(o.max_rows, frontier.size()) : frontier.size();
  for (size_t r = 0; r < rows; ++r) {
    const size_t i = rows == 1 ? 0 : r * (frontier.size() - 1) / (rows - 1);
    const FrontierPoint& p = frontier[i];
    std::snprintf(line, sizeof line, "%5zu  %12s  %16llu  %22s  %8.3fx  %9s  %s\n", i, format_number("%.3f", static_cast<double>(p.bytes.total()) / kGiB).c_str(),
                  static_cast<unsigned long long>(p.bytes.total()), format_total(p.cost, unit).c_str(), p.cost / cheapest,
                  format_gap(p.gap).c_str(), p.on_hull ? "dp" : "moves");
    std::cout << line;
  }
  std::cout << frontier.size() << " points from the least memory (" << format_gib(frontier.front().bytes.total())
            << " GiB) to the least cost (" << format_gib(frontier.back().bytes.total()) << " GiB), " << out.frontier_runs
            << " DP runs\n";

  if (!o.csv.empty()) write_text_file(o.csv, frontier_csv(frontier, graph.name, o.devices, unit));
  if (!o.json.empty()) write_text_file(o.json, frontier_json(frontier, graph.name, o, tables, memory_model).dump(2) + "\n");
  if (!o.svg.empty()) {
    StepChart chart;
    chart.title = graph.name + " on " + std::to_string(o.devices) + " devices: least cost under a memory cap (" +
                  dtype_name(memory_model.dtype) + ", " + optimizer_name(memory_model.optimizer) + ")";
    chart.x_label = "memory per device (GiB)";
    // FLOP counts in TFLOP: tick labels of a few digits, not 4e+13.
    const double y_scale = unit == "flop" ? 1e12 : 1.0;
    chart.y_label = unit == "flop" ? "cost (TFLOP per step)" : "cost (" + unit + " per step)";
    chart.series = "best cost found under the cap";
    chart.bound_series = "lower bound (convex hull)";
    for (const FrontierPoint& p : frontier) {
      chart.x.push_back(static_cast<double>(p.bytes.total()) / kGiB);
      chart.y.push_back(p.cost / y_scale);
      if (p.on_hull) {
        chart.bound_x.push_back(chart.x.back());
        chart.bound_y.push_back(chart.y.back());
      }
    }
    write_text_file(o.svg, render_svg(chart));
  }
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
