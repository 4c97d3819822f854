#include "stages/pipedream_planner.h"

#include <algorithm>

#include "base/check.h"

namespace pase {
namespace {

struct Entry {
  double time = 0;
  int split_state = -1, split_machines = -1;  // the earlier state k and the machines before it; -1: one stage
  int machines = 1;                           // the last stage's
};

// Sums over states (from, to]: states hold cumulative sums; from = −1 is the start.
struct Ranges {
  const std::vector<PipeDreamState>& states;
  double compute(int from, int to) const { return states[to].compute_seconds - (from < 0 ? 0 : states[from].compute_seconds); }
  double parameters(int from, int to) const {
    return states[to].parameter_bytes - (from < 0 ? 0 : states[from].parameter_bytes);
  }
};

// One stage of the states (from, to] replicated `replicas` ways.
double replicated_stage(const Ranges& sums, int from, int to, int replicas, double bandwidth) {
  const double sync = 4.0 * (replicas - 1) * sums.parameters(from, to) / (bandwidth * replicas);
  return (sums.compute(from, to) + sync) / replicas;
}

}  // namespace

PipeDreamPlan plan_pipedream(const std::vector<PipeDreamState>& states, const PipeDreamOptions& options) {
  const int n = static_cast<int>(states.size()), machines = options.machines;
  PASE_ASSERT(n >= 2 && machines >= 1, n, machines);
  const double bandwidth = options.bandwidth_bytes_per_second;
  const Ranges sums{states};
  // A[j][m]: states 0..j on m + 1 machines.
  std::vector<std::vector<Entry>> A(static_cast<size_t>(n), std::vector<Entry>(static_cast<size_t>(machines)));
  for (int j = 0; j < n; ++j)
    for (int m = 0; m < machines; ++m) A[j][m] = {replicated_stage(sums, -1, j, m + 1, bandwidth), -1, -1, m + 1};
  for (int m = 1; m < machines; ++m)
    for (int j = 1; j < n; ++j) {
      Entry best = A[j][m];
      for (int k : states[j].predecessors)
        for (int replicas = 1; replicas <= m; ++replicas) {
          double time = std::max(A[k][m - replicas].time, replicated_stage(sums, k, j, replicas, bandwidth));
          if (options.activation_compression) {
            const double ratio = *options.activation_compression;
            time = std::max(time, 2.0 * states[k].output_activation_bytes / (bandwidth * replicas) / ratio);
            if (j < n - 1) time = std::max(time, 2.0 * states[j].output_activation_bytes / (bandwidth * replicas) / ratio);
          }
          if (best.time > time) best = {time, k, m - replicas, replicas};
        }
      A[j][m] = best;
    }

  PipeDreamPlan plan;
  plan.time_per_stage = A[n - 1][machines - 1].time;
  plan.single_stage_time = states[n - 1].compute_seconds;
  // Back from the last state: each entry's last stage, then the entry it follows.
  std::vector<PipeDreamStage> reversed;
  int end = n;  // states [.., end)
  const Entry* entry = &A[n - 1][machines - 1];
  while (entry->split_state >= 0) {
    const int start = entry->split_state + 1;
    reversed.push_back({start, end, entry->machines, sums.compute(start - 1, end - 1)});
    end = start;
    entry = &A[entry->split_state][entry->split_machines];
  }
  reversed.push_back({0, end, entry->machines, sums.compute(-1, end - 1)});
  plan.stages.assign(reversed.rbegin(), reversed.rend());
  return plan;
}

}  // namespace pase
