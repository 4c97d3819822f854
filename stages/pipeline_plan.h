#pragma once
// A pipeline's plan (docs/pipeline.md, "Plans per stage"): each stage's
// strategy placed on a mesh of its own devices by the placement DP of a plain
// solve (plans/build_plan.h), the layers joined in stage order, every input
// an earlier stage makes marked as a send, and the step priced again with
// each stage's redistributions as its layouts realize them.
#include <cstdint>
#include <optional>
#include <string>

#include "graphs/graph.h"
#include "plans/plan.h"
#include "stages/pipeline_search.h"

namespace pase {

struct PipelinePlacement {
  std::optional<Plan> plan;
  std::string unavailable;  ///< why no plan: "stage 2: layer 'fc6' splits (1,3,4) on mesh [2,2,2]"
};

/// Places every stage of `outcome` (solved over `graph`, one micro-batch) on
/// the default mesh of its devices (devices_per_node: the machine's nodes,
/// 0 when not known), each edge priced by the stage's model as in a plain
/// solve. The plan's realized_total_cost is the pipeline's step with each
/// stage's t raised by what its realized redistributions add per
/// micro-batch, its sends as the search priced them.
[[nodiscard]] PipelinePlacement place_pipeline(const Graph& graph, const PipelineOutcome& outcome,
                                               const PipelineRequest& request, int64_t devices_per_node);

}  // namespace pase
