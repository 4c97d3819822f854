#pragma once
// A pipeline stage as a graph of its own (docs/pipeline.md): a contiguous
// range of a graph's vertices in topological order, the tensors it reads
// from earlier stages turned into inputs, and the places such a range may
// begin: after a block boundary (graphs/recompute.h), where one tensor, a
// boundary's output, is all that crosses.
#include <cstdint>
#include <utility>
#include <vector>

#include "graphs/graph.h"

namespace pase {

/// The vertices [begin, end) of `graph` as a graph: an input from an earlier
/// vertex becomes an external tensor (its ref unchanged, not a parameter);
/// edges inside the range are kept, renumbered; the parameters and
/// checkpoint shapes are those the range reads.
[[nodiscard]] Graph stage_graph(const Graph& graph, int begin, int end);

/// The vertices of several ranges [begin, end), increasing and apart, as one
/// graph (an interleaved pipeline's stage: its chunks), in order: an input
/// from outside every range becomes an external tensor as above.
[[nodiscard]] Graph stage_graph(const Graph& graph, const std::vector<std::pair<int, int>>& ranges);

/// The vertices a stage may begin at, increasing: 0, then every v whose
/// predecessor v - 1 is a block boundary (block_boundaries), then the vertex
/// count (where the last stage ends).
[[nodiscard]] std::vector<int> stage_starts(const Graph& graph);

/// Elements of the activations that cross from before `cut` to `cut` or
/// later (each producer output once): what a stage boundary at `cut` sends
/// forward per micro-batch, and its gradient backward.
[[nodiscard]] uint64_t crossing_elements(const Graph& graph, int cut);

}  // namespace pase
