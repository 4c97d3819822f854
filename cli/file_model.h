#pragma once
// The cost model a strategy file was priced with (docs/formats.md, "The
// file's own model"): a command given a strategy file prices it with the
// file's cost model and machine unless its command line names one, and
// says in one line when the two differ.
#include <iosfwd>
#include <string>

#include "cli/model_options.h"
#include "costmodel/training_setup.h"
#include "strategy/strategy_document.h"

namespace pase {

/// The cost-model options to price `file` (read from `path`) with: `given`
/// where the command line named a cost model, machine or rates
/// (`any_given`); else the file's own (the calibrated model on the machine
/// profile it names, or the pase model at its rates). Writes one "note:"
/// line to `note` where what prices the file is not what the file records.
[[nodiscard]] CostModelOptions file_model_options(const CostModelOptions& given, bool any_given,
                                                  const StrategyDocument& file, const std::string& path, std::ostream& note);

/// A strategy file and the cost-model options to price it with.
struct FileAndModel {
  StrategyDocument file;
  CostModelOptions model;
};

/// read_strategy_file(path) and file_model_options on it: the file read with
/// its plan where the calibrated model prices it (its layouts over links).
[[nodiscard]] FileAndModel read_file_and_model(const std::string& path, const CostModelOptions& given, bool any_given,
                                               std::ostream& note);

/// One "note:" line to `note` where the training step a file is priced with
/// (`used`: its dtype, optimizer, micro-batches, ZeRO stage, recomputation,
/// attention) is not the one `file` records, naming only what differs:
/// "note: s.json was written for bf16, 4 micro-batches; this run prices it with fp32, 2 micro-batches".
void note_training_differences(const StrategyDocument& file, const TrainingSetup& used, const std::string& path,
                               std::ostream& note);

/// Whether the command `command` was given --cost-model, --machine, --flops or --bandwidth.
[[nodiscard]] bool model_options_given(const CLI::App& command);

}  // namespace pase
