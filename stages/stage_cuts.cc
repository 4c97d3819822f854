#include "stages/stage_cuts.h"

#include <map>

#include "dp/fold.h"
#include "graphs/stage_graph.h"

namespace pase {

namespace {

// The period (in segments between boundaries) and the run of repeating segments.
struct Repeat {
  size_t period = 0, start = 0, whole = 0;  // whole: the run's segments in whole blocks
};

Repeat find_repeat(const std::vector<int>& starts, const StageKeys& keys) {
  const size_t segments = starts.size() - 1;
  Repeat best;
  if (segments < 4) return best;
  // Each segment between boundaries as a number: equal numbers, equal stages.
  std::map<std::vector<int64_t>, int> ids;
  std::vector<int> id;
  for (size_t i = 0; i < segments; ++i)
    id.push_back(ids.try_emplace(keys.key(starts[i], starts[i + 1]), static_cast<int>(ids.size())).first->second);
  size_t best_cover = 0;
  for (size_t period = 2; period <= 16 && 2 * period <= segments; ++period) {
    const auto [start, length] = longest_run(id, period);
    const size_t cover = length + period;  // segments [start, start + cover) repeat with this period
    if (length >= period && cover > best_cover) best = {period, start, cover / period * period}, best_cover = cover;
  }
  return best;
}

}  // namespace

std::vector<int> stage_cut_vertices(const Graph& graph, const StageKeys& keys, StageCuts cuts) {
  const std::vector<int> starts = stage_starts(graph);
  if (cuts == StageCuts::Boundaries) return starts;
  const Repeat r = find_repeat(starts, keys);
  if (r.period == 0) return starts;
  std::vector<int> kept;
  for (size_t i = 0; i < starts.size(); ++i)
    if (i <= r.start || i >= r.start + r.whole || (i - r.start) % r.period == 0) kept.push_back(starts[i]);
  return kept;
}

BlockRun block_run(const Graph& graph, const StageKeys& keys) {
  const Repeat r = find_repeat(stage_starts(graph), keys);
  if (r.period == 0) return {};
  return {r.start, r.whole / r.period};  // positions before the run are all kept: the run begins at index start
}

}  // namespace pase
