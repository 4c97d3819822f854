#pragma once
// The prices of the `pase` cost model (docs/formats.md), in FLOP: one
// function per kind of work a layer or an edge describes. r is the
// FLOP-equivalent cost of moving one word.
#include <cstdint>

#include "costmodel/cost_terms.h"
#include "costmodel/training_setup.h"

#include "graphs/layer_work.h"
#include "graphs/redistribution_words.h"

namespace pase {

/// Ring all-reduce of w words per device over q devices: r * (w/q) * 2 * (q-1).
[[nodiscard]] double all_reduce(double words, double devices, double r);

/// Redistribution of a tensor produced with split `a` and consumed with split `b` (forward and backward).
[[nodiscard]] double redistribution_cost(const Shape& tensor, const int64_t* a, const int64_t* b, double r);

/// A layer's work in FLOP: its pointwise operations, its GEMM's three
/// products and three all-reduces, its halo, all-reduces and transfers.
[[nodiscard]] double work_cost(const LayerWork& work, double r);

/// The items of work_cost one by one, each priced alone (their sum may
/// differ from work_cost in the last bits). Items that cost nothing (a
/// collective over one device) are left out; compute is always there.
/// Under a training setup (docs/training.md) each is paid per micro-batch
/// except a weight's (`weight_operand`: the GEMM's B operand is one) gradient
/// sum, paid per step, and ZeRO (the layer's stage `zero`) turns that sum into the collectives its stage runs;
/// a `recompute` layer adds its terms' forward parts once more ("recomputed forward"),
/// and the scores einsum of a fused attention kernel (`fused_scores`) its product again in backward.
/// Under Megatron's sequence parallelism (graphs/sequence_parallel.h) a
/// ScatterOutput GEMM's output all-reduce is a reduce-scatter forward and an
/// all-gather backward at the same price, and a GatherInput GEMM has no
/// input-gradient all-reduce (its input's edge prices that reduce-scatter).
[[nodiscard]] CostTerms work_terms(const LayerWork& work, double r, const TrainingSetup& setup = {},
                                   bool weight_operand = false, int zero = 0, bool recompute = false,
                                   bool fused_scores = false,
                                   SequenceParallel sequence_parallel = SequenceParallel::None);

/// Ring reduce-scatter (or all-gather) of w words per device over q devices: r * (w/q) * (q-1).
[[nodiscard]] double half_all_reduce(double words, double devices, double r);

/// Layer cost L(v, config) = work_cost(describe_work(model, config), r).
[[nodiscard]] double layer_cost(const VertexModel& model, const int32_t* config, double r);

}  // namespace pase
