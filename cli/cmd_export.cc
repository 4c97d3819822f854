// `pase export PLAN --format jax|dtensor|hlo|megatron|deepspeed|torch [-o FILE] [--max-devices N]`:
// a plan's layouts in one framework's terms (plans/plan_export.h, docs/plans.md), or the
// launch settings a strategy reads as (strategy/launch_settings.h, docs/launch.md).
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "base/error.h"
#include "plans/plan_export.h"
#include "plans/plan_reader.h"
#include "cli/launch_export.h"
#include "strategy/strategy_document.h"
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
// Megatron-LM flags, a DeepSpeed config or a PyTorch recipe (docs/launch.md), or "" for another format.
std::string launch_text(const ExportCliOptions& o) {
  if (o.format != "megatron" && o.format != "deepspeed" && o.format != "torch") return "";
  const LaunchSettings settings = launch_settings(read_strategy_file(o.plan));
  return o.format == "megatron" ? megatron_flags(settings)
         : o.format == "deepspeed" ? deepspeed_config(settings)
                                   : torch_recipe(settings);
}

void write_out(const ExportCliOptions& o, const std::string& text) {
  if (o.out.empty())
    std::cout << text;
  else
    write_text_file(o.out, text);
}

int run_export(const ExportCliOptions& o) {
  if (const std::string launch = launch_text(o); !launch.empty()) {
    write_out(o, launch);
    return 0;
  }
  std::optional<ExportFramework> framework = export_framework(o.format);
  if (!framework) {
    std::cerr << "error: --format: expected jax, dtensor, hlo, megatron, deepspeed or torch, got '" << o.format << "'\n";
    return kExitUsage;
  }
  std::optional<PlanFile> file = read_plan(read_text_file(o.plan), o.plan);
  if (!file) throw InputError(no_plan_words(read_text_file(o.plan), o.plan));
  write_out(o, export_plan(*file, *framework, o.max_devices));
  return 0;
}

}  // namespace

CommandRunner register_export(CLI::App& app) {
  auto o = std::make_shared<ExportCliOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write a plan's layouts for a framework (JAX, PyTorch DTensor, XLA HLO), or its launch settings (Megatron-LM, DeepSpeed, PyTorch)");
  cmd->add_option("plan", o->plan, "Strategy file with a plan (pase-strategy JSON)")->required();
  cmd->add_option("--format,-f", o->format, "jax, dtensor or hlo (a plan's layouts); megatron, deepspeed or torch (launch settings, docs/launch.md)")->required();
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
