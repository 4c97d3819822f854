#include "stages/interleaved_chunk_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <tbb/parallel_for.h>

#include "stages/interleaved_search.h"
#include "stages/pipeline_partition.h"
#include "stages/stage_cuts.h"
#include "stages/stage_key.h"

namespace pase {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The interleaved values as the 1F1B step reads them: t' = t / V (and its bound), M' = M V.
StageValue over_chunks(StageValue value, double chunks) {
  value.t /= chunks;
  value.time_bound /= chunks;
  return value;
}

// The chunkings the search asks for: stage k at n blocks, the others sharing
// the rest as evenly as they go (stage k's value depends on n alone).
class Chunkings {
 public:
  Chunkings(const Graph& graph, const StageKeys& keys, int stages, int64_t chunks)
      : cuts_(stage_cut_vertices(graph, keys, StageCuts::Blocks)), run_(block_run(graph, keys)), s_(stages), v_(chunks) {}
  [[nodiscard]] int64_t blocks() const { return static_cast<int64_t>(run_.blocks); }
  // Whether stage k may hold n blocks (every other stage at least V too).
  [[nodiscard]] bool allowed(int64_t n) const { return n >= v_ && blocks() - n >= (s_ - 1) * v_; }
  [[nodiscard]] std::vector<StageRanges> with(int k, int64_t n) const {
    std::vector<int64_t> counts(static_cast<size_t>(s_), n);
    const int64_t rest = blocks() - n, others = s_ - 1;
    for (int j = 0, seen = 0; j < s_; ++j)
      if (j != k) counts[static_cast<size_t>(j)] = rest / others + (seen++ < rest % others);
    return of(counts);
  }
  [[nodiscard]] std::vector<StageRanges> of(const std::vector<int64_t>& counts) const {
    return interleaved_chunks_of(cuts_, run_, counts, v_);
  }

 private:
  std::vector<int> cuts_;
  BlockRun run_;
  int s_;
  int64_t v_;
};

}  // namespace

namespace {

// Each (stage, count of blocks): one cell of a table, [k * (B + 1) + n].
class ShareTable {
 public:
  ShareTable(int stages, int64_t blocks) : blocks_(blocks), cells_(static_cast<size_t>(stages) * static_cast<size_t>(blocks + 1)) {}
  std::optional<StageValue>& at(int k, int64_t n) {
    return cells_[static_cast<size_t>(k) * static_cast<size_t>(blocks_ + 1) + static_cast<size_t>(n)];
  }
  [[nodiscard]] const std::optional<StageValue>& at(int k, int64_t n) const {
    return cells_[static_cast<size_t>(k) * static_cast<size_t>(blocks_ + 1) + static_cast<size_t>(n)];
  }

 private:
  int64_t blocks_;
  std::vector<std::optional<StageValue>> cells_;
};

// Each (stage, count)'s layers at their least costs, with its sends (as the DP reads them).
ShareTable least_values(const InterleavedStages& stages, const Chunkings& chunkings, int64_t chunks) {
  ShareTable least(stages.stages(), chunkings.blocks());
  tbb::parallel_for(0, stages.stages(), [&](int k) {
    for (int64_t n = chunks; n <= chunkings.blocks(); ++n)
      if (chunkings.allowed(n)) least.at(k, n) = over_chunks(stages.least(k, chunkings.with(k, n)), static_cast<double>(chunks));
  });
  return least;
}

// The (stage, count)s some pipeline below `incumbent` may hold (by their
// holding bounds); `dropped`: some other could run.
std::vector<std::pair<int, int64_t>> kept_counts(const HoldingBounds& holding, int stages, int64_t blocks,
                                                 int64_t chunks, double incumbent, bool& dropped) {
  std::vector<std::pair<int, int64_t>> kept;
  dropped = false;
  for (int k = 0; k < stages; ++k)
    for (int64_t n = chunks; n <= blocks; ++n) {
      double held = kInf;  // the least bound of a pipeline holding it
      for (int64_t i = 0; i + n <= blocks; ++i)
        held = std::min(held, holding.at(k, static_cast<int>(i), static_cast<int>(i + n)));
      if (held < incumbent) kept.push_back({k, n});
      else dropped = dropped || std::isfinite(held);
    }
  return kept;
}

}  // namespace

PipelineOutcome search_interleaved_chunks(const Graph& graph, const PipelineRequest& asked) {
  PipelineRequest request = asked;
  request.search_chunks = true;  // the stages' least costs priced (InterleavedStages::least)
  InterleavedStages stages(graph, request);
  const int s = stages.stages();
  const int64_t v = request.schedule.chunks;
  PipelineOutcome best = stages.pipeline(interleaved_chunks(graph, s, v));  // refused where blocks < S V
  if (s == 1) return best;
  const Chunkings chunkings(graph, stages.keys(), s, v);
  const int64_t blocks = chunkings.blocks();
  const ShareTable least = least_values(stages, chunkings, v);
  PartitionProblem problem{static_cast<int>(blocks), s, request.stage.memory.micro_batches * v,
                           [&](int k, int i, int j) { return least.at(k, j - i); }};
  const HoldingBounds holding(problem);
  const double incumbent = std::min(best.solved() ? best.step : kInf, request.incumbent);
  bool dropped = false;
  const std::vector<std::pair<int, int64_t>> kept = kept_counts(holding, s, blocks, v, incumbent, dropped);
  ShareTable solved(s, blocks);
  tbb::parallel_for(size_t{0}, kept.size(), [&](size_t c) {
    const auto [k, n] = kept[c];
    const PipelineStage stage = stages.stage(k, chunkings.with(k, n));
    if (stage.solve->fits) solved.at(k, n) = over_chunks(stage.value, static_cast<double>(v));
  });
  problem.value = [&](int k, int i, int j) -> std::optional<StageValue> {
    if (holding.at(k, i, j) >= incumbent) return std::nullopt;  // no pipeline holding it beats the incumbent
    return solved.at(k, j - i);
  };
  const PartitionAnswer answer = best_partition(problem);
  double lower_bound = std::min(best.solved() ? best.lower_bound : kInf, incumbent);
  if (!answer.bounds.empty()) {
    lower_bound = std::min(lower_bound, answer.lower_bound);
    std::vector<int64_t> counts;
    for (int k = 0; k < s; ++k) counts.push_back(answer.bounds[static_cast<size_t>(k) + 1] - answer.bounds[static_cast<size_t>(k)]);
    PipelineOutcome searched = stages.pipeline(chunkings.of(counts));
    if (searched.solved() && (!best.solved() || searched.step < best.step)) best = std::move(searched);
  }
  best.lower_bound = std::min(lower_bound, best.solved() ? best.step : kInf);
  best.cut = !best.solved() && dropped;  // every pipeline that fits holds a count whose bound reached the incumbent
  best.stage_solves = stages.solves();
  best.ranges = kept.size();
  best.positions = static_cast<int>(blocks) + 1;
  return best;
}

}  // namespace pase
