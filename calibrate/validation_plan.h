#pragma once
// What --validate runs: the GEMM layers of a strategy, each with the per-device
// shape its configuration gives and the calibrated model's prediction. Plain
// C++ (no CUDA), so it is tested without a GPU.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/calibrated_cost_model.h"
#include "graphs/graph.h"

namespace pase {

/// One GEMM layer of a strategy as one device runs it.
struct ValidationLayer {
  std::string name;
  std::vector<int32_t> config;
  GemmShape shape;
  std::array<GemmCall, 3> gemms;    ///< forward, input gradient, weight gradient
  std::array<double, 3> predicted;  ///< seconds of each, all Bpp instances
};

/// Reads the configs of a pase-strategy file (`source` names it in errors) and
/// returns the GEMM layers of `graph` under them, in graph order: every layer
/// the calibrated model prices as GEMMs (embeddings are gathers there).
[[nodiscard]] std::vector<ValidationLayer> validation_plan(const Graph& graph, const std::string& strategy_text,
                                                        const std::string& source, const CalibratedCostModel& model);

}  // namespace pase
