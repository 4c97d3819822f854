#pragma once
// A layer's cost split into the parts a cost model adds up: its compute and
// each collective or transfer, named by what it moves. Only explanations read
// it (strategy/explain.h); the solver prices with CostModel::layer, whose value
// the terms add up to (up to rounding: the sum runs in another order).
#include <string>
#include <vector>

namespace pase {

enum class CostTermKind { Compute, AllReduce, ReduceScatter, AllGather, Halo, Transfer };

/// When a term is paid: once per micro-batch (a layer's work, collectives on
/// activations), or once per step (weight-gradient collectives, the
/// optimizer's update) however many micro-batches the step accumulates.
enum class CostPhase { MicroBatch, Step };

struct CostTerm {
  CostTermKind kind = CostTermKind::Compute;
  std::string what;  ///< "compute", "weight-gradient all-reduce", "pooling halo", ...
  double cost = 0;   ///< in the model's unit
  double words = 0;  ///< communication: elements each device sends per occurrence
  double group = 1;  ///< communication: devices taking part
  double times = 1;  ///< occurrences per step
  CostPhase phase = CostPhase::MicroBatch;
  /// The part of `cost` that is forward work: what a recomputing layer pays
  /// again during backward (docs/training.md, "Recomputation").
  double forward = 0;
};

using CostTerms = std::vector<CostTerm>;

/// ZeRO-3's gather of a sharded weight before each forward and backward use,
/// per micro-batch (both models name it so; FSDP prefetches it on a stream of
/// its own, docs/simulate.md).
inline constexpr const char* kWeightGatherTerm = "weight all-gather";
/// ZeRO-2/3's reduce-scatter of a weight's gradient after each micro-batch's backward.
inline constexpr const char* kGradientScatterTerm = "weight-gradient reduce-scatter";

/// Whether `term` is ZeRO-3's per-micro-batch weight gather.
[[nodiscard]] inline bool is_weight_gather(const CostTerm& term) {
  return term.kind == CostTermKind::AllGather && term.phase == CostPhase::MicroBatch &&
         term.what.rfind(kWeightGatherTerm, 0) == 0;
}
/// Whether `term` is ZeRO-2/3's per-micro-batch gradient reduce-scatter.
[[nodiscard]] inline bool is_gradient_scatter(const CostTerm& term) {
  return term.kind == CostTermKind::ReduceScatter && term.phase == CostPhase::MicroBatch &&
         term.what.rfind(kGradientScatterTerm, 0) == 0;
}

/// A sequence-parallel row-parallel GEMM's output collective
/// (graphs/sequence_parallel.h): the two halves of an all-reduce, one in
/// each pass, so half of it is forward work.
inline constexpr const char* kScatterOutputTerm = "output reduce-scatter (all-gather in backward)";

}  // namespace pase
