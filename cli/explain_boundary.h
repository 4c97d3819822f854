#pragma once
// `pase explain GRAPH --strategy PIPELINE --boundary K` (docs/pipeline.md,
// "Why a boundary sits where it does"): the file's step, and the step with
// the start of stage K where it is and one cut position either way, every
// other boundary kept and each stage solved for its optimum.
#include <cstdint>
#include <string>

#include "cli/model_options.h"
#include "costmodel/training_setup.h"
#include "strategy/strategy_document.h"

namespace pase {

struct BoundaryQuestion {
  std::string graph_path;
  std::string strategy_path;
  const StrategyDocument* file = nullptr;  ///< a pipeline strategy (training.stages > 1)
  int64_t devices = 0;
  int boundary = 0;  ///< where stage `boundary` begins, 1 to S - 1
  TrainingSetup training;
  CostModelOptions model;
  bool json = false;
};

/// Prints the answer (a table, or with `json` a pase-explain document); returns the exit status.
[[nodiscard]] int explain_boundary(const BoundaryQuestion& question);

}  // namespace pase
