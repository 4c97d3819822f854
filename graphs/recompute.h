#pragma once
// Which layers full activation recomputation recomputes (docs/training.md):
// every layer but the block boundaries, the layers whose outputs are the
// only activations alive between what comes before them and what comes
// after (a transformer block's residual stream, a ResNet block's output):
// what Megatron-LM's full recomputation checkpoints.
#include <vector>

#include "graphs/graph.h"

namespace pase {

/// Per vertex, in the graph's (topological) order: 1 where a vertex is a
/// block boundary, i.e. every tensor produced at or before it and read after
/// it is its own output; vertices whose outputs no vertex reads (the loss) count as boundaries.
[[nodiscard]] std::vector<char> block_boundaries(const Graph& graph);

/// Sets Vertex::recompute on every vertex but the block boundaries (full
/// recomputation), or on none.
void set_full_recompute(Graph& graph, bool full);

}  // namespace pase
