#include "stages/boundary_moves.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/error.h"
#include "stages/stage_cuts.h"
#include "stages/stage_key.h"

namespace pase {

std::vector<BoundaryMove> boundary_moves(const Graph& graph, const PipelineRequest& request,
                                         const std::vector<int>& starts, int boundary) {
  const int stages = static_cast<int>(starts.size()) - 1;
  if (boundary < 1 || boundary >= stages)
    throw OptionError({"boundary", "the boundary", "",
                       " " + std::to_string(boundary) + ": a pipeline of " + std::to_string(stages) +
                           " stages has boundaries 1 to " + std::to_string(stages - 1) +
                           " (boundary k: where stage k begins)"});
  const std::vector<int> cuts = stage_cut_vertices(graph, StageKeys(graph), request.cuts);
  const int here = starts[static_cast<size_t>(boundary)];
  const auto at = std::lower_bound(cuts.begin(), cuts.end(), here);
  std::vector<std::pair<int, int>> places = {{0, here}};  // (moved, start)
  if (at != cuts.end() && *at == here) {  // a boundary off the cut positions is priced where it is only
    if (at != cuts.begin() && *(at - 1) > starts[static_cast<size_t>(boundary - 1)]) places.push_back({-1, *(at - 1)});
    if (at + 1 != cuts.end() && *(at + 1) < starts[static_cast<size_t>(boundary + 1)]) places.push_back({1, *(at + 1)});
  }
  std::vector<BoundaryMove> moves;
  for (const auto& [moved, start] : places) {
    PipelineRequest fixed = request;
    fixed.stages = stages;
    fixed.fixed_starts = starts;
    fixed.fixed_starts[static_cast<size_t>(boundary)] = start;
    fixed.incumbent = std::numeric_limits<double>::infinity();
    moves.push_back({moved, start, solve_pipeline(graph, fixed)});
  }
  return moves;
}

}  // namespace pase
