#pragma once
// The interleaved schedule with each stage's share of the blocks searched
// (docs/pipeline.md, "Interleaved chunks of uneven blocks"): Megatron-LM's
// equal split gives the first stage the embedding and the last the head on
// top of their blocks; fewer blocks there can shorten the slowest stage.
#include "graphs/graph.h"
#include "stages/pipeline_search.h"

namespace pase {

/// The interleaved pipeline of `request` (schedule interleaved:V, stages of
/// the request's devices) whose stage k holds n_k of the run's B blocks,
/// spread over its V chunks as evenly as they go (interleaved_chunks_of),
/// the counts searched: exact over every n_0 + ... + n_{S-1} = B with each
/// n_k >= V, as the 1F1B outer DP is over its partitions, at each stage's
/// optimum of M t + w. The interleaved step M max t + (sum t - max t) / V +
/// max w is the 1F1B step sum t' + (M' - 1) max t' + max w of t' = t / V
/// and M' = M V, and stage k's value depends on n_k alone (its chunks'
/// blocks, the embedding on stage 0 and the head on stage S - 1, its sends
/// at its chunk boundaries, each the same tensor), so best_partition (pipeline_partition.h)
/// takes the counts as positions. Megatron-LM's equal split is solved
/// first; a count whose least costs (its layers' least times and M t + w)
/// bound every pipeline holding it at that step or more is not solved. The
/// answer is the better of the two; the lower bound holds over every
/// strategy of every such count and of the equal split.
[[nodiscard]] PipelineOutcome search_interleaved_chunks(const Graph& graph, const PipelineRequest& request);

}  // namespace pase
