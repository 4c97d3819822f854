#include "cli/step_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>

#include "base/byte_size.h"
#include "cli/exit_status.h"
#include "base/text_file.h"
#include "cli/layer_table.h"
#include "cli/text_output.h"
#include "costmodel/machine.h"
#include "simulate/step_simulation.h"
#include "simulate/step_tasks.h"
#include "simulate/step_views.h"

namespace pase {

void add_simulate_options(CLI::App* command, SimulateCliOptions& options, bool switch_flag) {
  if (switch_flag)
    command->add_flag("--simulate", options.after_solve,
                      "After the table, simulate one step of the answer (as pase simulate does; docs/simulate.md)");
  command->add_option("--trace", options.trace,
                      "Write the simulated step as a Chrome trace (JSON; opens in Perfetto and chrome://tracing)");
  command->add_option("--svg", options.svg, "Write the simulated step's timeline as an SVG picture");
  command->add_flag("--no-overlap", options.no_overlap,
                    "Run the gradient collectives after the backward pass on the compute stream, as the additive "
                    "model sums them (by default beside the backward pass, as DDP and FSDP run them)");
  command->add_option("--bucket-size", options.bucket_size,
                      "Coalesce the gradient syncs into buckets of this size, each sent once its layers' gradients are "
                      "in (PyTorch DDP's bucket_cap_mb: 25MiB); default: one per layer");
}

double bucket_words(const SimulateCliOptions& options, const TrainingSetup& setup) {
  if (options.bucket_size.empty()) return 0;
  const std::optional<uint64_t> bytes = parse_byte_size(options.bucket_size);
  if (!bytes) throw UsageError("--bucket-size: expected a size (25MiB, 100MB, bytes), got '" + options.bucket_size + "'");
  const ParameterBytes per = parameter_bytes(setup);
  return static_cast<double>(*bytes) / static_cast<double>(std::max<uint64_t>(1, per.gradient ? per.gradient : per.weight));
}

int report_solve_simulation(const TrainingSolve& solved, int64_t devices, const std::string& title,
                            const SimulateCliOptions& options, std::ostream& out) {
  const SolveOutcome& outcome = solved.outcome;
  StepModel step;
  step.micro_batches = solved.setup.micro_batches;
  step.overlap = !options.no_overlap;
  step.bucket_words = bucket_words(options, solved.setup);
  step.unit = outcome.tables.unit;
  step.stages.push_back(simulated_stage(solved.graph, outcome.tables, outcome.solution.choice, *solved.model,
                                        step.micro_batches));
  step.stages.back().devices = devices;
  step.stages.back().across_nodes = devices_across_nodes(0, devices, 0, devices, solved.model->devices_per_node());
  return report_simulation(step, outcome.solution.cost, "the additive model's", title, options, out);
}

namespace {

std::string share(double part, double whole) {
  char buffer[32];
  double percent = whole > 0 ? 100 * part / whole : 0.0;
  if (std::fabs(percent) < 0.05) percent = 0;  // no "-0.0%"
  std::snprintf(buffer, sizeof buffer, "%.1f%%", percent);
  return buffer;
}

// The critical path by kind of task, largest first: "forward 61.2%, backward 36.0%, ...".
std::string critical_words(const TaskGraph& graph, const SimulatedStep& simulated) {
  std::map<std::string, double> by_kind;
  for (int task : simulated.critical_path)
    by_kind[task_kind_name(graph.tasks()[static_cast<size_t>(task)].kind)] += graph.tasks()[static_cast<size_t>(task)].duration;
  std::vector<std::pair<std::string, double>> kinds(by_kind.begin(), by_kind.end());
  std::sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string words;
  for (const auto& [kind, time] : kinds) words += (words.empty() ? "" : ", ") + kind + " " + share(time, simulated.step);
  return words;
}

}  // namespace

int report_simulation(const StepModel& model, double additive, const std::string& additive_words,
                      const std::string& title, const SimulateCliOptions& options, std::ostream& out) {
  const auto started = std::chrono::steady_clock::now();
  const TaskGraph graph = step_tasks(model);
  const SimulatedStep simulated = simulate_step(graph, static_cast<int>(model.stages.size()));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string& unit = model.unit;
  out << title << ": " << graph.size() << " tasks, " << model.micro_batches << " micro-batch"
      << (model.micro_batches == 1 ? "" : "es") << ", gradient collectives "
      << (model.overlap ? "beside the backward pass" : "after it (--no-overlap)") << "\n";
  out << "simulated step " << format_total(simulated.step, unit) << " " << unit << " ("
      << format_cost_text(simulated.step, unit) << "); " << additive_words << " " << format_total(additive, unit) << " "
      << unit << " (simulated " << share(simulated.step - additive, additive) << " from it)\n";
  out << "critical path: " << simulated.critical_path.size() << " tasks: " << critical_words(graph, simulated) << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%5s  %13s  %14s  %14s  %14s\n", "stage", "devices", "compute", "comm only", "idle");
  out << line;
  for (size_t k = 0; k < model.stages.size(); ++k) {
    const SimStage& stage = model.stages[k];
    const StageTime& time = simulated.stages[k];
    const std::string devices = std::to_string(stage.first_device) + "-" + std::to_string(stage.first_device + stage.devices - 1);
    std::snprintf(line, sizeof line, "%5zu  %13s  %8s %5s  %8s %5s  %8s %5s\n", k, devices.c_str(),
                  format_cost_text(time.compute, unit).c_str(), share(time.compute, simulated.step).c_str(),
                  format_cost_text(time.communication_only, unit).c_str(),
                  share(time.communication_only, simulated.step).c_str(), format_cost_text(time.idle, unit).c_str(),
                  share(time.idle, simulated.step).c_str());
    out << line;
  }
  char speed[96];
  std::snprintf(speed, sizeof speed, "simulated in %.3g s (%.3g tasks a second)\n", seconds,
                seconds > 0 ? static_cast<double>(graph.size()) / seconds : 0.0);
  out << speed;
  if (!options.trace.empty()) {
    write_text_file(options.trace, chrome_trace(model, graph, simulated, title));
    out << "trace: " << options.trace << " (Chrome trace format: Perfetto, chrome://tracing)\n";
  }
  if (!options.svg.empty()) {
    write_text_file(options.svg, timeline_svg(model, graph, simulated, title));
    out << "timeline: " << options.svg << "\n";
  }
  return 0;
}

}  // namespace pase
