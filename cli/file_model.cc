#include "cli/file_model.h"

#include <algorithm>
#include <ostream>

#include "cli/memory_options.h"
#include "cli/text_output.h"
#include "costmodel/builtin_machines.h"

namespace pase {
namespace {

// "the calibrated model on dgx-a100", "the pase model at 10 TFLOP/s and 16 GB/s".
std::string model_words(const std::string& cost_model, const std::string& machine, double flops, double bandwidth) {
  if (cost_model == "calibrated")
    return "the calibrated model on " + (machine.empty() ? std::string("a machine it does not name") : machine);
  return "the " + cost_model + " model at " + format_number("%g", flops) + " TFLOP/s and " +
         format_number("%g", bandwidth) + " GB/s";
}

bool builtin(const std::string& name) {
  const std::vector<std::string> names = builtin_machine_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool model_options_given(const CLI::App& command) {
  for (const char* flag : {"--cost-model", "--machine", "--flops", "--bandwidth"})
    if (command.count(flag) > 0) return true;
  return false;
}

CostModelOptions file_model_options(const CostModelOptions& given, bool any_given, const StrategyDocument& file,
                                    const std::string& path, std::ostream& note) {
  const std::string recorded = model_words(file.cost_model, file.machine_profile, file.flops_tflops.value_or(0),
                                           file.bandwidth_gbps.value_or(0));
  CostModelOptions options = given;
  if (file.cost_model.empty()) return options;  // a file written by hand records none: nothing to adopt or compare
  if (!any_given) {
    if (file.cost_model == "pase" && file.flops_tflops && file.bandwidth_gbps) {
      options.flops = *file.flops_tflops;
      options.bandwidth = *file.bandwidth_gbps;
      return options;
    }
    if (file.cost_model == "calibrated" && builtin(file.machine_profile)) {
      options.cost_model = "calibrated";
      options.machine_file = file.machine_profile;
      return options;
    }
  }
  const std::string used = model_words(options.cost_model, options.machine_file, options.flops, options.bandwidth);
  if (used != recorded)
    note << "note: " << path << " was priced with " << recorded << "; this run prices it with " << used
         << (any_given ? "" : " (the file's machine is not built in: give --machine FILE)") << "\n";
  return options;
}

FileAndModel read_file_and_model(const std::string& path, const CostModelOptions& given, bool any_given,
                                 std::ostream& note) {
  FileAndModel read{read_strategy_file(path, given.cost_model == "calibrated"), given};
  read.model = file_model_options(given, any_given, read.file, path, note);
  if (read.model.cost_model == "calibrated" && given.cost_model != "calibrated") read.file = read_strategy_file(path, true);
  return read;
}

void note_training_differences(const StrategyDocument& file, const TrainingSetup& used, const std::string& path,
                               std::ostream& note) {
  const TrainingSetup recorded = recorded_setup(file);
  std::string was, is;
  auto differ = [&](bool differs, const std::string& recorded_words, const std::string& used_words) {
    if (!differs) return;
    was += (was.empty() ? "" : ", ") + recorded_words;
    is += (is.empty() ? "" : ", ") + used_words;
  };
  auto zero_words = [](int zero) { return zero == kZeroAuto ? std::string("ZeRO per layer") : "ZeRO-" + std::to_string(zero); };
  differ(recorded.dtype != used.dtype, dtype_name(recorded.dtype), dtype_name(used.dtype));
  differ(recorded.optimizer != used.optimizer, optimizer_name(recorded.optimizer) + std::string(" optimizer"),
         optimizer_name(used.optimizer) + std::string(" optimizer"));
  differ(recorded.micro_batches != used.micro_batches, std::to_string(recorded.micro_batches) + " micro-batches",
         std::to_string(used.micro_batches) + " micro-batches");
  differ(recorded.zero != used.zero, zero_words(recorded.zero), zero_words(used.zero));
  differ(recorded.recompute != used.recompute, "recompute " + std::string(recompute_name(recorded.recompute)),
         "recompute " + std::string(recompute_name(used.recompute)));
  differ(recorded.attention != used.attention, attention_name(recorded.attention) + std::string(" attention"),
         attention_name(used.attention) + std::string(" attention"));
  if (!was.empty()) note << "note: " << path << " was written for " << was << "; this run prices it with " << is << "\n";
}

}  // namespace pase
