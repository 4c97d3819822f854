#pragma once
// Attention as frameworks run it today (docs/training.md, "Fused attention"):
// the scores einsum, the softmax over them and the einsum that applies them
// are one kernel (FlashAttention, PyTorch's scaled_dot_product_attention),
// which keeps the B·H·S·S scores neither for backward nor in device memory.
#include <vector>

#include "graphs/graph.h"

namespace pase {

/// Per vertex: 1 for the two that make attention scores, the scores einsum
/// and its softmax (with the dropout fused into it). The pattern: a softmax
/// whose one input is an einsum of two activations read by nothing else, and
/// whose output only einsums read.
[[nodiscard]] std::vector<char> attention_scores(const Graph& graph);

/// Sets Vertex::fused_scores on the vertices attention_scores marks, or on none.
void set_fused_attention(Graph& graph, bool fused);

}  // namespace pase
