// `pase pipedream PROFILE --machines N [--bandwidth GBps]
// [--activation-compression-ratio R] [--json]`: PipeDream's planner over a
// profile of its profiler (stages/pipedream_planner.h, docs/pipedream.md).
#include <cstdio>
#include <iostream>
#include <optional>

#include "base/error.h"
#include "base/json_text.h"
#include "base/text_file.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "stages/pipedream_planner.h"

namespace pase {
namespace {

struct PipeDreamCliOptions {
  std::string profile;
  int machines = 0;
  double bandwidth_gbps = 1.0;
  std::optional<double> compression;
  bool json = false;
};

std::string fixed(double value, const char* format = "%.6f") {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string plan_json(const PipeDreamPlan& plan, int machines) {
  std::string out = "{\"format\":\"pase-pipedream\",\"machines\":";
  append_json_number(out, int64_t{machines});
  out += ",\"time_per_stage\":";
  append_json_number(out, plan.time_per_stage);
  out += ",\"single_stage_time\":";
  append_json_number(out, plan.single_stage_time);
  out += ",\"stages\":[";
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const PipeDreamStage& stage = plan.stages[s];
    out += s ? ",{\"start\":" : "{\"start\":";
    append_json_number(out, int64_t{stage.start});
    out += ",\"end\":";
    append_json_number(out, int64_t{stage.end});
    out += ",\"replicas\":";
    append_json_number(out, int64_t{stage.replicas});
    out += ",\"compute_seconds\":";
    append_json_number(out, stage.compute_seconds);
    out += '}';
  }
  return out + "]}\n";
}

void print_plan(const PipeDreamPlan& plan, const PipeDreamCliOptions& o, size_t states) {
  std::cout << "PipeDream's planner: " << states << " states on " << o.machines << " machines at "
            << fixed(o.bandwidth_gbps, "%g") << " GB/s"
            << (o.compression ? ", activations compressed " + fixed(*o.compression, "%g") + "x" : std::string()) << "\n";
  std::cout << "stage  states      replicas  compute (s, one replica's share x replicas)\n";
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const PipeDreamStage& stage = plan.stages[s];
    char line[160];
    std::snprintf(line, sizeof line, "%-6zu [%d, %d)%*s %-9d %.6f\n", s, stage.start, stage.end,
                  static_cast<int>(10 - std::to_string(stage.start).size() - std::to_string(stage.end).size()), "",
                  stage.replicas, stage.compute_seconds);
    std::cout << line;
  }
  std::cout << "time per stage " << fixed(plan.time_per_stage) << " s; one stage on one machine "
            << fixed(plan.single_stage_time) << " s: " << fixed(plan.single_stage_time / plan.time_per_stage, "%.2f")
            << "x the throughput\n";
}

int run_pipedream(const PipeDreamCliOptions& o) {
  if (o.machines < 1) throw UsageError("--machines: expected a positive number of machines, got " + std::to_string(o.machines));
  if (!(o.bandwidth_gbps > 0))
    throw UsageError("--bandwidth: expected a positive GB/s, got " + fixed(o.bandwidth_gbps, "%g"));
  if (o.compression && !(*o.compression > 0))
    throw UsageError("--activation-compression-ratio: expected a positive ratio, got " + fixed(*o.compression, "%g"));
  const ProfileGraph profile = parse_pipedream_profile(read_text_file(o.profile), o.profile);
  const std::vector<PipeDreamState> states = pipedream_states(profile, o.profile);
  PipeDreamOptions options;
  options.machines = o.machines;
  options.bandwidth_bytes_per_second = o.bandwidth_gbps * 1e9;
  options.activation_compression = o.compression;
  const PipeDreamPlan plan = plan_pipedream(states, options);
  if (o.json)
    std::cout << plan_json(plan, o.machines);
  else
    print_plan(plan, o, states.size());
  return 0;
}

}  // namespace

CommandRunner register_pipedream(CLI::App& app) {
  auto o = std::make_shared<PipeDreamCliOptions>();
  CLI::App* cmd = app.add_subcommand("pipedream", "Partition a PipeDream profile (graph.txt) with PipeDream's planner");
  cmd->add_option("profile", o->profile, "A profile of PipeDream's profiler (graph.txt)")->required();
  cmd->add_option("--machines,-n", o->machines, "Machines to partition over")->required();
  cmd->add_option("--bandwidth", o->bandwidth_gbps, "Network bandwidth in GB/s (default 1, the optimizer's)");
  cmd->add_option("--activation-compression-ratio", o->compression,
                  "Also bound each stage by its activation transfers, compressed this many times (default: not)");
  cmd->add_flag("--json", o->json, "Print the plan as JSON (docs/pipedream.md)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_pipedream(*o);
  };
}

}  // namespace pase
