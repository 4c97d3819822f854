#pragma once
// Megatron-LM's sequence parallelism (Korthikanti et al. 2022, "Reducing
// Activation Recomputation in Large Transformer Models", Sec. 4.2.2): between
// a row-parallel GEMM and the next column-parallel one, the norms, residual
// adds and dropouts run split over the sequence on the tensor-parallel ways
// instead of replicated on them. The row-parallel GEMM reduce-scatters its
// output (the first half of the all-reduce it ran before) and the
// column-parallel GEMM all-gathers its input (the second half): the same
// traffic as tensor parallelism alone, with those ops' activations and work
// divided by the tensor-parallel ways.
//
// In the configuration model (docs/compare.md, "Sequence parallelism"): a
// ScatterOutput GEMM's output follows its contraction's tensor-parallel
// dimension on its sequence dimension too, so the sequence-split op after it
// reads its tile in place; a GatherInput GEMM drops its input-gradient
// all-reduce, which the edge from its sequence-split input already prices as
// that all-gather's reduce-scatter in backward.
#include "graphs/graph.h"
#include "graphs/vertex_model.h"

namespace pase {

/// The tensor dimension of `map` that is the sequence: the first that
/// follows one domain dimension, neither the batch's nor a weight's nor the
/// tensor-parallel dimension `tensor_parallel`; -1 when there is none.
[[nodiscard]] int sequence_dimension(const Vertex& vertex, const VertexModel& model, const SplitMap& map,
                                     int tensor_parallel);

/// What sequence parallelism makes of vertex `v` (`model`: its model
/// without a role): ScatterOutput for a GEMM against a weight whose
/// tensor-parallel dimension (graphs/megatron_layout.h) is a contraction,
/// GatherInput for one whose tensor-parallel dimension is in its output but
/// not its activation input, None otherwise or where the tensor has no
/// sequence dimension.
[[nodiscard]] SequenceParallel sequence_parallel_role(const Graph& graph, int v, const VertexModel& model);

/// A ScatterOutput vertex's model: its output's sequence dimension also
/// follows the tensor-parallel dimension (build_vertex_model calls it).
void scatter_output_over_sequence(const Vertex& vertex, VertexModel& model);

/// Sets Vertex::sequence_parallel on every vertex, as sequence_parallel_role says.
void set_sequence_parallel(Graph& graph);

/// "scatter_output", "gather_input" (the strategy file's words); "" for None.
[[nodiscard]] const char* sequence_parallel_name(SequenceParallel role);

}  // namespace pase
