#include "cli/pipeline_frontier.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace pase {
namespace {

PipelinePoint point_of(const PipelineAnswer& answer) {
  PipelinePoint p;
  const PipelineOutcome& o = answer.outcome;
  for (const PipelineStage& stage : o.stages) {
    if (stage.bytes.total() > p.point.bytes.total()) p.point.bytes = stage.bytes;
    p.stage_devices.push_back(stage.devices);
  }
  p.point.cost = o.step;
  // A bound under the search's cap holds under the point's smaller memory too.
  p.point.lower_bound = std::isnan(o.lower_bound) ? o.step : o.lower_bound;
  p.point.gap = p.point.lower_bound > 0 ? std::max(0.0, (o.step - p.point.lower_bound) / p.point.lower_bound) : 0.0;
  p.micro_batches = answer.setup.micro_batches;
  return p;
}

}  // namespace

PipelineFrontier pipeline_frontier(const PipelineCliOptions& options, PipelineSolveInput input, size_t max_points,
                                   double memory_step) {
  PipelineFrontier frontier;
  std::vector<PipelinePoint> found;  // most memory first
  for (;;) {
    if (found.size() == max_points) {
      frontier.truncated = true;
      break;
    }
    try {
      found.push_back(point_of(best_pipeline(options, input)));
    } catch (const ResourceError&) {  // nothing fits below the last point
      if (found.empty()) throw;
      break;
    }
    found.back().cap = input.request.cap;
    ++frontier.searches;
    const uint64_t bytes = found.back().point.bytes.total();
    const auto step = std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(bytes) * memory_step));
    if (bytes < step) break;
    input.request.cap = bytes - step;
  }
  // The capped search's answers need not improve with the cap (each within
  // its gap): a point some point of less memory steps as fast as is dropped.
  for (auto p = found.rbegin(); p != found.rend(); ++p)
    if (frontier.points.empty() || p->point.cost < frontier.points.back().point.cost) frontier.points.push_back(*p);
  return frontier;
}

}  // namespace pase
