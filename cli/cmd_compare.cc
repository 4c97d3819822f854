// `pase compare GRAPH --devices 4,8,16`: the DP optimum against the baselines
// (data-parallel, owt, megatron, mcmc) at each device count, as a table, CSV,
// JSON and an SVG bar chart of the speed-up over data parallelism.
#include <algorithm>
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
#include "cli/text_output.h"
#include "base/byte_size.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/memory_options.h"
#include "cli/model_options.h"
#include "cli/svg_chart.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "strategy/baselines.h"
#include "memorycap/memory_cap.h"
#include "dp/solve.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct CompareCliOptions {
  std::string graph;
  std::vector<int64_t> devices;
  CostModelOptions model;
  MemoryCliOptions memory;
  McmcOptions mcmc;
  std::string csv, json, svg;
  bool timings = false;  // search_seconds in --csv and --json
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
};

const char* const kOptimum = "pase";  // the DP optimum's row

}  // namespace

CommandRunner register_compare(CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare the optimal strategy with data parallelism, OWT, Megatron and MCMC");
  cmd->add_option("graph", o->graph, "Graph file (pase-graph JSON)")->required();
  cmd->add_option("--devices,-p", o->devices, "Device counts, comma-separated (4,8,16,32,64)")->required()->delimiter(',');
  add_cost_model_options(cmd, o->model);
  add_memory_options(cmd, o->memory, /*with_cap=*/true);
  add_mcmc_options(cmd, o->mcmc);
  cmd->add_option("--csv", o->csv, "Also write the results as CSV");
  cmd->add_option("--json", o->json, "Also write the results as JSON");
  cmd->add_option("--svg", o->svg, "Also write an SVG bar chart of the speed-ups");
  cmd->add_flag("--timings", o->timings, "Also write search_seconds to --csv and --json (they vary from run to run)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    std::vector<std::unique_ptr<CostModel>> models;
    for (int64_t p : o->devices) models.push_back(make_cost_model(o->model, p, memory_options(o->memory)));  // validates every p first
    const MemoryOptions memory_model = memory_options(o->memory);
    const std::optional<uint64_t> cap = memory_cap(o->memory, *models.front());
    const CapOptions search = cap_options(o->memory);
    Graph graph = load_graph_input(o->graph);

    std::vector<CompareRow> rows;
    std::vector<std::string> shown;  // strategies with rows, in column order
    std::vector<std::pair<std::string, std::string>> skipped;
    std::string unit = "flop";
    Machine machine;
    for (size_t i = 0; i < o->devices.size(); ++i) {
      const int64_t p = o->devices[i];
      CostTables tables = build_cost_tables(graph, *models[i]);
      unit = tables.unit;
      machine = tables.machine;
      const MemoryTables memory = build_memory_tables(graph, tables, memory_model);
      // Under a cap, the optimum is the capped search's answer (its gap in the note).
      Solution optimum;
      std::string optimum_note;
      double bound = 0.0;  // no strategy (within the cap) costs less
      if (!cap) {
        optimum = solve(tables.objective, graph.vertex_names(), SolveOptions{});
        bound = optimum.cost;
      } else {
        auto start = std::chrono::steady_clock::now();
        MemoryPricedDp dp(graph, tables, memory, SolveOptions{});
        CappedSolution capped = solve_under_cap(dp, tables.objective, memory, *cap, search);
        if (!capped.feasible)
          throw ResourceError("no strategy fits in " + std::to_string(*cap) + " bytes (" + format_gib(*cap) +
                              " GiB) per device at p = " + std::to_string(p) + ": the least any strategy needs is " +
                              std::to_string(capped.least_memory) + " bytes (" + format_gib(capped.least_memory) + " GiB)");
        optimum.cost = capped.cost;
        bound = capped.lower_bound;
        optimum.choice = capped.choice;
        optimum.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        optimum_note = capped.gap == 0 ? "under the cap, optimal" : "under the cap, gap " + format_number("%.3g", 100 * capped.gap) + "%";
      }
      const uint64_t optimum_memory = plan_memory(memory, optimum.choice).total();
      double data_parallel = 0.0;
      for (const std::string& name : baseline_names()) {
        BaselineResult result = run_baseline(name, graph, tables, o->mcmc);
        if (!result.applicable) {
          if (i == 0) skipped.emplace_back(name, result.note);
          continue;
        }
        if (name == "data-parallel") data_parallel = result.cost;
        const uint64_t bytes = plan_memory(memory, result.choice).total();
        const bool over_cap = cap && bytes > *cap;
        // The DP is exact over the same configurations, so a baseline below
        // its bound is a bug (under a cap: one that fits, below the proven bound).
        if (!over_cap && result.cost < bound * (1 - 1e-9))
          throw std::logic_error(name + " at p = " + std::to_string(p) + " costs " + format_number("%.17g", result.cost) +
                                 ", below the DP's bound " + format_number("%.17g", bound));
        std::string note = result.note;
        if (over_cap) note += std::string(note.empty() ? "" : "; ") + "over the memory cap";
        CompareRow row{p, name, result.cost, 1.0, name == "mcmc" ? result.seconds : -1.0, note, bytes};
        rows.push_back(row);
      }
      rows.push_back({p, kOptimum, optimum.cost, 1.0, optimum.stats.seconds, optimum_note, optimum_memory});
      for (CompareRow& row : rows)
        if (row.devices == p) row.speedup = row.cost > 0 ? data_parallel / row.cost : 1.0;
    }
    for (const CompareRow& row : rows)
      if (std::find(shown.begin(), shown.end(), row.strategy) == shown.end()) shown.push_back(row.strategy);

    // Table.
    std::cout << graph.name << ": predicted cost per strategy, cost model " << models[0]->name() << " (" << unit << "), "
              << machine.flops_tflops << " TFLOP/s, " << machine.bandwidth_gbps << " GB/s\n";
    char line[512];
    std::snprintf(line, sizeof line, "%6s  %-14s  %20s  %9s  %10s  %10s  %s\n", "p", "strategy", "cost", "speed-up",
                  "search s", "memory GiB", "note");
    std::cout << line;
    for (const CompareRow& row : rows) {
      std::string seconds = row.seconds < 0 ? "-" : format_number("%.3g", row.seconds);
      std::snprintf(line, sizeof line, "%6lld  %-14s  %20s  %8.2fx  %10s  %10s  %s\n", static_cast<long long>(row.devices),
                    row.strategy.c_str(), format_number(row.cost < 1e17 && unit == "flop" ? "%.0f" : "%.9g", row.cost).c_str(),
                    row.speedup, seconds.c_str(), format_gib(row.memory).c_str(), row.note.c_str());
      std::cout << line;
    }
    for (const auto& [name, reason] : skipped) std::cout << "note: " << name << " skipped: " << reason << "\n";

    if (!o->csv.empty()) {
      std::ostringstream csv;
      csv << "graph,devices,strategy,cost,unit,speedup,search_seconds,note,per_device_bytes\n";
      for (const CompareRow& row : rows)
        csv << csv_field(graph.name) << "," << row.devices << "," << row.strategy << ","
            << format_number("%.17g", row.cost) << "," << unit << "," << format_number("%.6f", row.speedup) << ","
            << (row.seconds < 0 || !o->timings ? "" : format_number("%.6f", row.seconds)) << "," << csv_field(row.note) << ","
            << row.memory << "\n";
      write_text_file(o->csv, csv.str());
    }
    if (!o->json.empty()) {
      nlohmann::ordered_json doc;
      doc["format"] = "pase-compare";
      doc["version"] = 1;
      doc["graph"] = graph.name;
      doc["cost_model"] = models[0]->name();
      doc["cost_unit"] = unit;
      doc["machine"] = {{"flops_tflops", machine.flops_tflops}, {"bandwidth_gbps", machine.bandwidth_gbps}};
      doc["dtype"] = dtype_name(memory_model.dtype);
      doc["optimizer"] = optimizer_name(memory_model.optimizer);
      doc["cap_bytes"] = cap ? nlohmann::ordered_json(*cap) : nlohmann::ordered_json(nullptr);
      doc["mcmc"] = {{"seed", o->mcmc.seed}, {"max_iterations", o->mcmc.max_iterations}, {"max_seconds", o->mcmc.max_seconds}};
      doc["strategies"] = shown;
      doc["skipped"] = nlohmann::ordered_json::array();
      for (const auto& [name, reason] : skipped) doc["skipped"].push_back({{"strategy", name}, {"reason", reason}});
      doc["results"] = nlohmann::ordered_json::array();
      for (int64_t p : o->devices) {
        nlohmann::ordered_json entry;
        entry["devices"] = p;
        entry["strategies"] = nlohmann::ordered_json::array();
        for (const CompareRow& row : rows) {
          if (row.devices != p) continue;
          nlohmann::ordered_json item = {{"name", row.strategy}, {"cost", row.cost}, {"speedup", row.speedup}};
          // Without --timings the file is the same bytes on every run.
          item["search_seconds"] = row.seconds < 0 || !o->timings ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.seconds);
          item["note"] = row.note;
          item["per_device_bytes"] = row.memory;
          entry["strategies"].push_back(item);
        }
        doc["results"].push_back(entry);
      }
      write_text_file(o->json, doc.dump(2) + "\n");
    }
    if (!o->svg.empty()) {
      BarChart chart;
      chart.title = graph.name + ": predicted speed-up over data parallelism (" + models[0]->name() + " cost model)";
      chart.x_label = "devices (p)";
      chart.y_label = "speed-up over data-parallel";
      chart.series = shown;
      chart.reference = 1.0;
      for (int64_t p : o->devices) {
        chart.groups.push_back(std::to_string(p));
        std::vector<double> values(shown.size(), std::nan(""));
        for (const CompareRow& row : rows)
          if (row.devices == p)
            values[std::find(shown.begin(), shown.end(), row.strategy) - shown.begin()] = row.speedup;
        chart.values.push_back(values);
      }
      write_text_file(o->svg, render_svg(chart));
    }
    return 0;
  };
}

}  // namespace pase
