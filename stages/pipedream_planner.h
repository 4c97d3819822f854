#pragma once
// PipeDream's planner, one level of machines, as its optimizer
// (optimizer_graph_hierarchical.py) computes it with its defaults: no memory
// constraint, every machine used, stages replicated. Over the states
// (stages/pipedream_states.h), A(j, m) is the least time per stage of the
// states up to j on m machines: either all of them as one stage replicated
// m ways,
//
//   (T(0..j) + 4·(m−1)·W(0..j) / (B·m)) / m
//
// (compute T, parameter bytes W, B bytes per second; data parallelism's
// weight synchronisation), or a last stage k+1..j on m' machines after an
// earlier state k on the other m − m' (k a predecessor of j):
//
//   max(A(k, m − m'), (T(k+1..j) + 4·(m'−1)·W(k+1..j) / (B·m')) / m')
//
// and, with an activation compression ratio R, also the stage's input and
// output transfers, 2·a_k / (B·m'·R) and 2·a_j / (B·m'·R) (a the activation
// bytes that cross the boundary; none after the last state). A strictly
// smaller time replaces a found one, so the first minimum in order (k
// ascending, then m' ascending) is kept.
#include <optional>
#include <vector>

#include "stages/pipedream_states.h"

namespace pase {

struct PipeDreamOptions {
  int machines = 0;
  double bandwidth_bytes_per_second = 1e9;          ///< the optimizer's default, 1 GB/s
  std::optional<double> activation_compression;     ///< its --activation_compression_ratio
};

struct PipeDreamStage {
  int start = 0, end = 0;        ///< states [start, end), as the optimizer prints them
  int replicas = 1;
  double compute_seconds = 0;    ///< T(start..end−1), not divided by the replicas
};

struct PipeDreamPlan {
  double time_per_stage = 0;     ///< A(last state, machines)
  double single_stage_time = 0;  ///< T of every state
  std::vector<PipeDreamStage> stages;
};

/// The optimizer's plan for `states` (at least two) on `options.machines`
/// (at least one) machines.
[[nodiscard]] PipeDreamPlan plan_pipedream(const std::vector<PipeDreamState>& states, const PipeDreamOptions& options);

}  // namespace pase
