#include "stages/stage_cuts.h"

#include <map>

#include "dp/fold.h"
#include "graphs/stage_graph.h"

namespace pase {

std::vector<int> stage_cut_vertices(const Graph& graph, const StageKeys& keys, StageCuts cuts) {
  const std::vector<int> starts = stage_starts(graph);
  const size_t segments = starts.size() - 1;
  if (cuts == StageCuts::Boundaries || segments < 4) return starts;
  // Each segment between boundaries as a number: equal numbers, equal stages.
  std::map<std::vector<int64_t>, int> ids;
  std::vector<int> id;
  for (size_t i = 0; i < segments; ++i)
    id.push_back(ids.try_emplace(keys.key(starts[i], starts[i + 1]), static_cast<int>(ids.size())).first->second);
  size_t best_period = 0, best_start = 0, best_cover = 0;
  for (size_t period = 2; period <= 16 && 2 * period <= segments; ++period) {
    const auto [start, length] = longest_run(id, period);
    const size_t cover = length + period;  // segments [start, start + cover) repeat with this period
    if (length >= period && cover > best_cover) best_period = period, best_start = start, best_cover = cover;
  }
  if (best_period == 0) return starts;
  std::vector<int> kept;
  const size_t whole = best_cover / best_period * best_period;  // the run's whole blocks
  for (size_t i = 0; i < starts.size(); ++i)
    if (i <= best_start || i >= best_start + whole || (i - best_start) % best_period == 0) kept.push_back(starts[i]);
  return kept;
}

}  // namespace pase
