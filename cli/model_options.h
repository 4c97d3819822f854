#pragma once
// Command-line options that choose and configure the cost model, shared by
// every subcommand that prices strategies (solve, evaluate, compare, batch),
// and the MCMC search settings shared by evaluate and compare.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "costmodel/cost_model.h"
#include "costmodel/memory_model.h"
#include "strategy/mcmc.h"

namespace pase {

struct CostModelOptions {
  double flops = 10.0;          ///< --flops TF
  double bandwidth = 16.0;      ///< --bandwidth GBps
  std::string cost_model = "pase";
  std::string machine_file;     ///< --machine NAME|FILE (built-in name or pase-machine profile)
  std::string gradient_overlap = "on";  ///< --gradient-overlap on|off (calibrated)
  std::string batchnorm = "local";      ///< --batchnorm local|sync (calibrated)
  std::string memory_format = "nhwc";   ///< --memory-format nhwc|nchw (calibrated)
  std::string splits;                   ///< --splits kernels|all; empty: kernels under calibrated, all under pase
};

/// Adds --flops, --bandwidth, --cost-model, --machine, --gradient-overlap, --batchnorm, --memory-format and --splits to a subcommand.
void add_cost_model_options(CLI::App* command, CostModelOptions& options);

/// Adds --seed, --mcmc-iterations, --mcmc-temperature and --mcmc-seconds (the mcmc baseline's search).
void add_mcmc_options(CLI::App* command, McmcOptions& options);

/// The shortest per-device row a search leaves any tensor (SolveRequest::min_row):
/// kKernelRow under --splits kernels (the calibrated model's default), 0 under all.
[[nodiscard]] int64_t search_min_row(const CostModelOptions& options);

/// The most devices a cost model prices (configurations are int32 splits).
inline constexpr int64_t kMaxDevices = int64_t{1} << 30;

/// Validates the options and builds the model for `devices` devices training
/// as `training` says (the calibrated model's dtype, rate and bytes, and the
/// optimizer whose update it prices; InputError on bad values).
[[nodiscard]] std::unique_ptr<CostModel> make_cost_model(const CostModelOptions& options, int64_t devices,
                                                         const TrainingSetup& training = {});

}  // namespace pase
