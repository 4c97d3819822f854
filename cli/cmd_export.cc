// `pase export PLAN --format jax|dtensor|hlo [-o FILE] [--max-devices N]`: a plan's layouts in
// one framework's terms (plans/plan_export.h, docs/plans.md).
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "base/error.h"
#include "plans/plan_export.h"
#include "plans/plan_reader.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct ExportCliOptions {
  std::string plan;
  std::string format;
  std::string out;
  int64_t max_devices = kDefaultExportDevices;
};

// `pase export` once its options are parsed.
int run_export(const ExportCliOptions& o) {
  std::optional<ExportFramework> framework = export_framework(o.format);
  if (!framework) {
    std::cerr << "error: --format: expected jax, dtensor or hlo, got '" << o.format << "'\n";
    return kExitUsage;
  }
  std::optional<PlanFile> file = read_plan(read_text_file(o.plan), o.plan);
  if (!file) throw InputError(no_plan_words(read_text_file(o.plan), o.plan));
  std::string text = export_plan(*file, *framework, o.max_devices);
  if (o.out.empty())
    std::cout << text;
  else
    write_text_file(o.out, text);
  return 0;
}

}  // namespace

CommandRunner register_export(CLI::App& app) {
  auto o = std::make_shared<ExportCliOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write a plan's layouts for a framework (JAX, PyTorch DTensor, XLA HLO)");
  cmd->add_option("plan", o->plan, "Strategy file with a plan (pase-strategy JSON)")->required();
  cmd->add_option("--format,-f", o->format, "jax, dtensor or hlo")->required();
  cmd->add_option("--out,-o", o->out, "Write the document here instead of standard output");
  cmd->add_option("--max-devices", o->max_devices, "Refuse plans on meshes of more devices (the document lists every device's id)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return with_option_spellings({{"max_devices", "--max-devices"}}, [&] { return run_export(*o); });
  };
}

}  // namespace pase
