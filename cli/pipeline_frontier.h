#pragma once
// `pase frontier --pipeline-stages S|auto` (docs/pipeline.md, "The
// frontier"): the step-memory Pareto frontier of pipelines, each point the
// pipeline search's answer under a cap a step below the last point's memory,
// from no cap down to where nothing fits.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cli/pipeline_solve.h"
#include "memorycap/memory_frontier.h"

namespace pase {

/// One point: its step and bytes (the largest stage's) as a frontier point,
/// with the pipeline that gives it.
struct PipelinePoint {
  FrontierPoint point;
  std::vector<int64_t> stage_devices;
  int64_t micro_batches = 1;
  std::optional<uint64_t> cap;  ///< the cap it was searched under (none: the first, without one)
};

struct PipelineFrontier {
  std::vector<PipelinePoint> points;  ///< least memory first
  bool truncated = false;             ///< stopped at the point limit: less memory not searched
  size_t searches = 0;                ///< pipeline searches run (points found, dominated ones too)
};

/// The frontier under `input.request.cap` (none: from the unconstrained
/// optimum), at most `max_points` points, each searched under a cap
/// `memory_step` (a share; 0: one byte) below the last one's memory. Each
/// point's step is the search's answer under its cap, its lower bound the
/// search's (every pipeline within the cap, so within the point's memory,
/// steps at least that). A point that a point of less memory steps as fast as
/// is dropped (the capped search's answers, each within its gap, need not
/// improve with the cap). With `memory_step` 0 and gaps 0 every Pareto point
/// is found; above it, points between a point's memory and the next cap are
/// not looked for.
[[nodiscard]] PipelineFrontier pipeline_frontier(const PipelineCliOptions& options, PipelineSolveInput input,
                                                 size_t max_points, double memory_step);

}  // namespace pase
