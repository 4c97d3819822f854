#pragma once
// Megatron-LM's interleaved schedule in the search (docs/pipeline.md,
// "Interleaved stages"): the repeated blocks cut into S x V chunks of equal
// blocks, chunk c on stage c mod S, so each stage holds V chunks apart in
// the graph and the bubble shrinks V-fold.
#include "graphs/graph.h"
#include "stages/pipeline_search.h"

namespace pase {

/// The chunks of an interleaved pipeline of `stages` stages and `chunks`
/// chunks each: Megatron-LM's equal split of the blocks into stages x chunks
/// (stage_solve.h, equal_block_bounds; the first chunk also holds what
/// precedes the blocks, the last what follows), chunk c on stage c mod S,
/// adjacent chunks of one stage joined. OptionError naming the stages when
/// the graph repeats fewer blocks than stages x chunks.
[[nodiscard]] std::vector<StageRanges> interleaved_chunks(const Graph& graph, int stages, int64_t chunks);

/// The interleaved pipeline of `request` (schedule interleaved:V): the
/// chunks of interleaved_chunks (or, for a given pipeline, the file's), each
/// stage's layers (its V chunks together, sharing its devices and memory) at
/// the optimum of its M t + w, under the cap with the micro-batches it holds
/// in flight (pipeline_schedule.h), its sends per chunk boundary. The step is
/// pipeline_step_time's M max t + (sum t - max t) / V + max w, and the lower
/// bound, over every strategy of those stages, the largest over b of b's
/// bound on M t + w plus the others' bounds on t over V (for every b the step
/// is at least M t_b + w_b plus the others' t_k / V). The chunks are not searched: they
/// are the split Megatron-LM runs.
[[nodiscard]] PipelineOutcome solve_interleaved(const Graph& graph, const PipelineRequest& request);

}  // namespace pase
