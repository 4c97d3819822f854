#include "cli/model_options.h"

#include <iostream>

#include "cli/exit_status.h"
#include "costmodel/builtin_machines.h"
#include "costmodel/calibrated_cost_model.h"
#include "costmodel/kernel_splits.h"
#include "costmodel/machine_profile.h"
#include "base/error.h"
#include "base/closest_name.h"

namespace pase {

void add_cost_model_options(CLI::App* command, CostModelOptions& options) {
  command->add_option("--flops", options.flops, "Peak TFLOP/s per device (default 10)");
  command->add_option("--bandwidth", options.bandwidth, "Link bandwidth in GB/s (default 16)");
  CLI::Option* cost_model = command->add_option(
      "--cost-model", options.cost_model, "Cost model: pase (default, FLOP) or calibrated (seconds, needs --machine)");
  CLI::Option* machine = command->add_option(
      "--machine", options.machine_file,
      "Machine profile: a built-in name (dgx1, dgx-a100, dgx-h100, rtx4090-node, ...) or a pase-machine file; "
      "without --cost-model it implies --cost-model calibrated");
  // A machine profile is read only by the calibrated model: naming one and
  // no model asks for that model. Said in one line, on standard error.
  command->parse_complete_callback([cost_model, machine, &options] {
    if (machine->count() > 0 && cost_model->count() == 0) {
      options.cost_model = "calibrated";
      std::cerr << "note: --machine implies --cost-model calibrated\n";
    }
  });
  command->add_option("--gradient-overlap", options.gradient_overlap,
                      "calibrated: on (default) hides weight-gradient all-reduces behind the backward pass; off adds them");
  command->add_option("--batchnorm", options.batchnorm,
                      "calibrated: local (default, per-device statistics) or sync (statistics all-reduced across the batch)");
  command->add_option("--memory-format", options.memory_format,
                      "calibrated: nhwc (default, channels-last activations) or nchw (tensor-core convolutions transpose their operands)");
  command->add_option("--splits", options.splits,
                      "Splits a search may choose: kernels (the default with --cost-model calibrated: every tensor keeps rows of "
                      "at least 128 elements per device, so no head's width is split) or all (the paper's space, the pase model's default)");
}

int64_t search_min_row(const CostModelOptions& options) {
  if (options.splits.empty()) return options.cost_model == "calibrated" ? kKernelRow : 0;
  if (options.splits == "kernels") return kKernelRow;
  if (options.splits == "all") return 0;
  throw UsageError("--splits: expected kernels or all, got '" + options.splits + "'");
}

void add_mcmc_options(CLI::App* command, McmcOptions& options) {
  command->add_option("--seed", options.seed, "mcmc: random seed (default 1)");
  command->add_option("--mcmc-iterations", options.max_iterations, "mcmc: iteration budget (default 200000)");
  command->add_option("--mcmc-temperature", options.temperature, "mcmc: temperature relative to the best cost (default 0.001)");
  command->add_option("--mcmc-seconds", options.max_seconds, "mcmc: time budget in seconds per search (default: none)");
}

std::unique_ptr<CostModel> make_cost_model(const CostModelOptions& options, int64_t devices, const TrainingSetup& training) {
  if (devices < 1) throw UsageError("--devices: expected a positive number of devices, got " + std::to_string(devices));
  if (devices > kMaxDevices) throw UsageError("--devices: at most 2^30 devices, got " + std::to_string(devices));
  if (!(options.flops > 0)) throw UsageError("--flops: expected a positive TFLOP/s, got " + std::to_string(options.flops));
  if (!(options.bandwidth > 0))
    throw UsageError("--bandwidth: expected a positive GB/s, got " + std::to_string(options.bandwidth));
  const CostModelOptions defaults;
  if (options.gradient_overlap != "on" && options.gradient_overlap != "off")
    throw UsageError("--gradient-overlap: expected on or off, got '" + options.gradient_overlap + "'");
  if (options.batchnorm != "local" && options.batchnorm != "sync")
    throw UsageError("--batchnorm: expected local or sync, got '" + options.batchnorm + "'");
  if (options.memory_format != "nhwc" && options.memory_format != "nchw")
    throw UsageError("--memory-format: expected nhwc or nchw, got '" + options.memory_format + "'");
  if (options.cost_model == "pase") {
    if (!options.machine_file.empty())
      throw UsageError("--machine: a machine profile is used only by the calibrated model, not with --cost-model pase");
    if (options.gradient_overlap != defaults.gradient_overlap || options.batchnorm != defaults.batchnorm ||
        options.memory_format != defaults.memory_format)
      throw UsageError(
          "--gradient-overlap/--batchnorm/--memory-format: used only by the calibrated model (add --cost-model calibrated)");
    Machine machine;
    machine.devices = devices;
    machine.flops_tflops = options.flops;
    machine.bandwidth_gbps = options.bandwidth;
    return std::make_unique<PaseCostModel>(machine, training);
  }
  if (options.cost_model == "calibrated") {
    if (options.machine_file.empty())
      throw UsageError("--cost-model calibrated: needs --machine NAME or FILE (a built-in profile such as dgx-a100, or a pase-machine file; see docs/calibration.md)");
    if (options.flops != defaults.flops || options.bandwidth != defaults.bandwidth)
      throw UsageError("--flops/--bandwidth: the calibrated model takes rates from the machine profile, not from these options");
    CalibratedOptions calibrated;
    calibrated.training = training;
    calibrated.overlap_gradients = options.gradient_overlap == "on";
    calibrated.sync_batchnorm = options.batchnorm == "sync";
    calibrated.channels_last = options.memory_format == "nhwc";
    return std::make_unique<CalibratedCostModel>(load_machine_profile(options.machine_file), devices, calibrated);
  }
  const std::string hint = closest_name(options.cost_model, {"pase", "calibrated"});
  throw UsageError("--cost-model: unknown cost model '" + options.cost_model + "' (" +
                   (hint.empty() ? "" : "did you mean '" + hint + "'? ") + "choose pase or calibrated)");
}

}  // namespace pase
