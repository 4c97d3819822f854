// pase-calibrate: measures a pase-machine profile with cuBLAS microbenchmarks,
// or checks the calibrated model's GEMM predictions for a strategy on this GPU.
// This file only parses options, calls the calibrate code and prints.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "calibrate/cuda_check.h"
#include "calibrate/measure_plan.h"
#include "calibrate/measure_profile.h"
#include "calibrate/validation_plan.h"
#include "costmodel/builtin_machines.h"
#include "costmodel/dtype.h"
#include "cli/exit_status.h"
#include "base/error.h"
#include "graphs/graph.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct ValidateOptions {
  bool enabled = false;
  bool dry_run = false;
  std::string graph, strategy, machine;
  int64_t devices = 0;  // the solve's --devices: only picks intra- or inter-node links, unused for GEMMs
  std::string dtype = "fp32";
};

// A dtype option's value; the library's message names the flag.
Dtype dtype_option(const std::string& text, const char* flag) {
  try {
    return parse_dtype(text);
  } catch (const OptionError& error) {
    throw InputError(error.words().with(flag));
  }
}

int calibrate(const CalibrateOptions& options, const std::string& out) {
  for (const auto& [option, sizes] : {std::pair{"--sizes", options.sizes}, std::pair{"--m-sizes", options.m_sizes}})
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i] <= 0 || (i && sizes[i] <= sizes[i - 1]))
        throw InputError(std::string(option) + ": expected strictly increasing positive sizes");
  if (options.sizes.empty()) throw InputError("--sizes: expected at least one size");
  if (options.warmup < 0 || options.repeats < 1) throw InputError("--warmup/--repeats: expected warmup >= 0 and repeats >= 1");
  if (!(options.inter_node_gbps > 0) || !(options.inter_node_latency_us > 0))
    throw InputError("--inter-node-gbps/--inter-node-latency-us: expected positive numbers");
  (void)require_gpus();  // refuse before anything else happens
  MachineProfile profile = measure_profile(options, [](const std::string& line) { std::cerr << line << "\n"; });
  std::string text = write_machine_profile(profile);
  write_text_file(out, text);
  std::cerr << "wrote " << out << "\n";
  return kExitOk;
}

int validate(const ValidateOptions& v, int device, int warmup, int repeats) {
  if (v.graph.empty() || v.strategy.empty() || v.machine.empty())
    throw InputError("--validate: needs --graph FILE, --strategy FILE and --machine FILE");
  Graph graph = load_graph(v.graph);
  CalibratedOptions calibrated;
  calibrated.training.dtype = dtype_option(v.dtype, "--dtype");
  CalibratedCostModel model(load_machine_profile(v.machine), std::max<int64_t>(v.devices, 1), calibrated);
  std::vector<ValidationLayer> plan = validation_plan(graph, read_text_file(v.strategy), v.strategy, model);
  std::vector<std::array<double, 3>> measured;
  if (!v.dry_run) {
    (void)require_gpus();
    measured = measure_plan(plan, device, warmup, repeats, calibrated.training.dtype);
  }
  std::printf("%s: %s GEMMs per device, predicted by %s vs measured with cuBLAS (forward + both backward)\n",
              graph.name.c_str(), dtype_name(calibrated.training.dtype), v.machine.c_str());
  int width = 5;
  for (const ValidationLayer& l : plan) width = std::max(width, static_cast<int>(l.name.size()));
  std::printf("%-*s %6s %8s %8s %8s %14s %14s %8s\n", width, "layer", "batch", "m", "n", "k", "predicted_ms", "measured_ms",
              "error");
  double total_predicted = 0, total_measured = 0, total_abs_error = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const ValidationLayer& l = plan[i];
    double predicted = l.predicted[0] + l.predicted[1] + l.predicted[2];
    total_predicted += predicted;
    std::printf("%-*s %6.0f %8.0f %8.0f %8.0f %14.4f", width, l.name.c_str(), l.shape.batch, l.shape.m, l.shape.n, l.shape.k,
                predicted * 1e3);
    if (v.dry_run) {
      std::printf(" %14s %8s\n", "-", "-");
      continue;
    }
    double real = measured[i][0] + measured[i][1] + measured[i][2];
    double error = (predicted - real) / real;
    total_measured += real, total_abs_error += std::fabs(error);
    std::printf(" %14.4f %+7.1f%%\n", real * 1e3, 100 * error);
  }
  std::printf("total: predicted %.4f ms", total_predicted * 1e3);
  if (!v.dry_run && !plan.empty())
    std::printf(", measured %.4f ms (%+.1f%%), mean |error| per layer %.1f%%", total_measured * 1e3,
                100 * (total_predicted - total_measured) / total_measured,
                100 * total_abs_error / static_cast<double>(plan.size()));
  std::printf("\n");
  return kExitOk;
}

}  // namespace
}  // namespace pase

int main(int argc, char** argv) {
  using namespace pase;
  CLI::App app{"pase-calibrate: measure a pase-machine profile with cuBLAS, or validate the calibrated model"};
  CalibrateOptions options;
  ValidateOptions v;
  std::string out;
  std::vector<std::string> dtypes;
  app.add_option("--out,-o", out, "Write the measured profile (pase-machine JSON) here");
  app.add_option("--name", options.name, "Profile name (default: \"<GPU name> node\")");
  app.add_option("--sizes", options.sizes, "m, n and k grid, increasing (default 16,32,...,8192)")->delimiter(',');
  app.add_option("--m-sizes", options.m_sizes,
                 "m grid (rows), increasing, when it should reach further than --sizes (default: --sizes)")
      ->delimiter(',');
  app.add_option("--dtypes", dtypes, "GEMM tables to measure: fp32, tf32, bf16, fp16 (default fp32, tf32, bf16 on compute capability 8.0 and later)")
      ->delimiter(',');
  app.add_option("--warmup", options.warmup, "Untimed runs before each measurement (default 3)");
  app.add_option("--repeats", options.repeats, "Timed runs; the median is kept (default 10)");
  app.add_option("--device", options.device, "GPU to time (default 0)");
  app.add_option("--devices-per-node", options.devices_per_node, "GPUs per node (default: the GPUs this host sees)");
  app.add_option("--inter-node-gbps", options.inter_node_gbps, "Inter-node bandwidth, not measured (default 12)");
  app.add_option("--inter-node-latency-us", options.inter_node_latency_us, "Inter-node latency, not measured (default 20)");
  app.add_option("--peak-tflops", options.peak_tflops, "FP32 peak per GPU (default: from clock rate and SM count)");
  app.add_flag("--validate", v.enabled, "Compare predicted and measured GEMM times of a strategy's layers");
  app.add_option("--graph", v.graph, "--validate: graph file (pase-graph JSON)");
  app.add_option("--strategy", v.strategy, "--validate: strategy file written by pase solve --out");
  app.add_option("--machine", v.machine, "--validate: machine profile to predict with");
  app.add_option("--devices,-p", v.devices, "--validate: devices the strategy was solved for (default 1)");
  app.add_option("--dtype", v.dtype, "--validate: the dtype the GEMMs run and are priced in (default fp32)");
  app.add_flag("--dry-run", v.dry_run, "--validate: print shapes and predictions only (no GPU needed)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : static_cast<int>(kExitUsage);  // --help is not an error
  }
  return run_reporting_errors([&] {
    if (v.enabled) return validate(v, options.device, options.warmup, options.repeats);
    if (out.empty()) throw InputError("--out FILE is required (or --validate)");
    for (const std::string& d : dtypes) options.dtypes.push_back(dtype_option(d, "--dtypes"));
    return calibrate(options, out);
  });
}
