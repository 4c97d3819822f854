#pragma once
// Why a stage boundary sits where it does (`pase explain --boundary`,
// docs/pipeline.md): the pipeline with that boundary where it is and moved
// one cut position either way, every other boundary kept, each partition's
// stages solved for their optimum.
#include <string>
#include <vector>

#include "graphs/graph.h"
#include "stages/pipeline_search.h"

namespace pase {

/// One place for the boundary: the vertex its stage begins at, how far it
/// moved (in cut positions: -1 earlier, 0 where it is, +1 later) and the
/// pipeline with it there (unsolved: no partition with it fits).
struct BoundaryMove {
  int moved = 0;
  int start = 0;
  PipelineOutcome outcome;
};

/// The moves of the boundary where stage `boundary` begins (1 to S - 1)
/// among `starts` (where each stage begins, then the vertex count; as
/// given_pipeline reads a file): where it is, and one position of
/// `request.cuts` earlier and later where the stages on either side keep
/// at least one position. `request` gives the devices, setup and cap; its
/// stages are set from `starts`. OptionError for a boundary outside 1..S-1.
[[nodiscard]] std::vector<BoundaryMove> boundary_moves(const Graph& graph, const PipelineRequest& request,
                                                       const std::vector<int>& starts, int boundary);

}  // namespace pase
