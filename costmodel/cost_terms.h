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

/// A sequence-parallel row-parallel GEMM's output collective
/// (graphs/sequence_parallel.h): the two halves of an all-reduce, one in
/// each pass, so half of it is forward work.
inline constexpr const char* kScatterOutputTerm = "output reduce-scatter (all-gather in backward)";

}  // namespace pase
