#pragma once
// Where a pipeline stage may begin (docs/pipeline.md, "Where stages begin"):
// after any block boundary (graphs/stage_graph.h, stage_starts), or, for a
// model of repeated blocks, only where a whole block begins inside its run
// of identical blocks (and at every boundary outside it): the cuts
// Megatron-LM, DeepSpeed and torch.distributed.pipelining make.
#include <vector>

#include "graphs/graph.h"
#include "stages/stage_key.h"

namespace pase {

enum class StageCuts {
  Blocks,      ///< whole repeated blocks (the default)
  Boundaries,  ///< every block boundary (half a transformer block: attention, MLP)
};

/// The vertices a stage may begin at, increasing, 0 first and the vertex
/// count (where the last stage ends) last. Blocks: the segments between
/// consecutive boundaries are compared by their stage keys; the period q (2
/// to 16 segments) whose run of repeating segments covers the most is the
/// block, and inside that run only every q-th boundary is kept.
[[nodiscard]] std::vector<int> stage_cut_vertices(const Graph& graph, const StageKeys& keys, StageCuts cuts);

/// The run of repeated blocks among the cut positions of StageCuts::Blocks:
/// whole blocks begin at positions first, first + 1, ..., first + blocks
/// (the last where the run ends); blocks 0 when the graph repeats no block.
struct BlockRun {
  size_t first = 0, blocks = 0;
};
[[nodiscard]] BlockRun block_run(const Graph& graph, const StageKeys& keys);

}  // namespace pase
