#pragma once
// Which dimension Megatron-LM splits over its tensor-parallel ways, layer by
// layer (docs/compare.md, "The strategies"): its op's role (heads, the
// feed-forward width, the vocabulary of an embedding), and the vocabulary of
// the logits: an `fc` read only by the loss is Megatron's vocabulary-parallel
// output layer, whose loss (its parallel cross-entropy) runs split the same way.
#include "graphs/graph.h"
#include "graphs/vertex_model.h"

namespace pase {

/// The domain dimension vertex `v` splits tensor-parallel ways; -1 for none
/// (it follows its input's layout).
[[nodiscard]] int megatron_tensor_dimension(const Graph& graph, int v, const VertexModel& model);

}  // namespace pase
