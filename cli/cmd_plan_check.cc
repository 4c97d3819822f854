// `pase plan-check PLAN [--seed S] [--max-devices N]`: checks a plan's semantics by running it
// (plans/plan_check.h, docs/plans.md). One line per inconsistent layer or
// edge, then a summary; exit status 1 on any inconsistency.
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "base/error.h"
#include "plans/plan_check.h"
#include "plans/plan_reader.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct PlanCheckCliOptions {
  std::string plan;
  uint64_t seed = 1;
  int64_t max_devices = PlanCheckOptions{}.max_devices;
};

// `pase plan-check` once its options are parsed.
int run_plan_check(const PlanCheckCliOptions& cli) {
  const PlanCheckCliOptions* o = &cli;
  std::optional<PlanFile> file = read_plan(read_text_file(o->plan), o->plan);
  if (!file) throw InputError(no_plan_words(read_text_file(o->plan), o->plan));
  PlanCheckOptions options;
  options.seed = o->seed;
  options.max_devices = o->max_devices;
  PlanCheckReport report = check_plan(*file, options);
  for (const std::string& problem : report.problems) std::cout << problem << "\n";
  auto count = [](size_t n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); };
  std::cout << "plan-check: " << count(report.layers_computed + report.layers_layout_only, "layer") << " checked ("
            << report.layers_computed << " computed on a shrunk problem, " << report.layers_layout_only
            << " layout only), " << count(report.edges, "edge")
            << (file->plan.stages.empty() ? std::string()
                                          : " and " + count(report.sends, "send") + " between " +
                                                count(file->plan.stages.size(), "stage"))
            << " checked, "
            << (report.problems.empty() ? std::string("all consistent")
                                        : std::to_string(report.problems.size()) + " inconsistent")
            << "\n";
  return report.problems.empty() ? 0 : 1;
}

}  // namespace

CommandRunner register_plan_check(CLI::App& app) {
  auto o = std::make_shared<PlanCheckCliOptions>();
  CLI::App* cmd = app.add_subcommand("plan-check", "Check a plan's layouts by running its layers on a shrunk problem");
  cmd->add_option("plan", o->plan, "Strategy file with a plan (pase-strategy JSON)")->required();
  cmd->add_option("--seed", o->seed, "Seed of the random tensor values")->capture_default_str();
  cmd->add_option("--max-devices", o->max_devices, "Refuse plans on meshes of more devices (the check visits every device)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return with_option_spellings({{"max_devices", "--max-devices"}}, [&] { return run_plan_check(*o); });
  };
}

}  // namespace pase
