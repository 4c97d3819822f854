#pragma once
// A pipeline's strategy as one `pase-strategy` document (docs/pipeline.md):
// every layer with its stage's configuration and its `stage`, the step's
// time, and `training.pipeline` with each stage's devices, time per
// micro-batch and bytes per device.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graphs/graph.h"
#include "stages/pipeline_search.h"
#include "strategy/strategy_document.h"

namespace pase {

/// The document of `outcome` (solved) over `graph` (one micro-batch of
/// `micro_batch_size`), solved on `devices` devices under `setup`.
[[nodiscard]] StrategyDocument pipeline_document(const Graph& graph, const PipelineOutcome& outcome,
                                                 const TrainingSetup& setup, int64_t micro_batch_size,
                                                 const PipelineSchedule& schedule, int64_t devices,
                                                 std::optional<uint64_t> cap);

/// `items` (each naming a vertex of `graph`: a strategy's or a plan's
/// layers) put in the graph's vertex order, stably: an interleaved stage's
/// layers lie in several chunks, so joining the stages in turn does not.
template <typename Named>
void sort_in_graph_order(const Graph& graph, std::vector<Named>& items) {
  std::unordered_map<std::string, size_t> order;
  for (size_t v = 0; v < graph.vertices.size(); ++v) order.emplace(graph.vertices[v].name, v);
  std::stable_sort(items.begin(), items.end(),
                   [&](const Named& a, const Named& b) { return order.at(a.name) < order.at(b.name); });
}

/// A stage's graph as its strategy names it: the vertices [begin, end) of
/// `graph`, each with the techniques its solve chose (recomputation, ZeRO stage).
[[nodiscard]] Graph solved_stage_graph(const Graph& graph, const PipelineStage& stage);

/// A pipeline strategy file read back over `graph`: where each stage begins
/// (vertex indices, then the vertex count) and each stage's strategy (the
/// file with that stage's layers only), as PipelineRequest's given_starts
/// and given_stages take them.
struct GivenPipeline {
  std::vector<int> starts;                ///< where each run of one stage's layers begins, then the vertex count
  std::vector<StageRanges> chunks;        ///< interleaved: each stage's chunks (PipelineRequest::given_chunks); else empty
  std::shared_ptr<const std::vector<StrategyDocument>> stages;
};

/// InputError naming `path`, the layer and its field 'stage' where a layer of
/// the graph has no stage, one above the file's stages, stages out of order
/// (each stage's layers contiguous in the graph's order; interleaved:V, stage
/// after stage V times round), a stage without
/// layers, or a stage beginning where pase does not cut (graphs/stage_graph.h,
/// stage_starts: after a block boundary).
[[nodiscard]] GivenPipeline given_pipeline(const Graph& graph, const StrategyDocument& file, const std::string& path);

}  // namespace pase
