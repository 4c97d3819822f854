#pragma once
// The states PipeDream's optimizer partitions: the DAG of a profile graph's
// antichains (PipeDream, SOSP'19, and its optimizer_graph_hierarchical.py
// with graph/graph.py). A stage boundary is an antichain, the layers it
// cuts the graph after; state i stands for the graph up to and including
// its antichain, so a stage is a range of consecutive states. For a chain
// of layers the states are the layers in order.
//
// As the optimizer does before it plans: source layers described "Input..."
// are removed (the input always goes with the first stage), and so are sink
// layers described "__getitem__..." (unused outputs).
#include <cstddef>
#include <string>
#include <vector>

#include "stages/pipedream_profile.h"

namespace pase {

struct PipeDreamState {
  std::vector<std::string> antichain;  ///< the augmented antichain, as the optimizer prints it
  double compute_seconds = 0;          ///< forward + backward of the layers up to the antichain
  double activation_bytes = 0;         ///< their activations
  double parameter_bytes = 0;          ///< their parameters
  double output_activation_bytes = 0;  ///< the activations of the antichain's layers (what crosses the boundary)
  std::vector<int> predecessors;       ///< every state before this one in the DAG of antichains, ascending
};

/// Antichains past which pipedream_states refuses (ResourceError): the
/// planner's tables grow with their square.
inline constexpr size_t kMaxPipeDreamStates = 5000;

/// The states in the optimizer's topological order. Where the optimizer
/// iterates a Python set (the nodes an antichain is augmented with), this
/// takes them ordered by id. An InputError where nothing is left to
/// partition or the graph has a cycle; a ResourceError past kMaxPipeDreamStates.
[[nodiscard]] std::vector<PipeDreamState> pipedream_states(const ProfileGraph& profile, const std::string& source);

}  // namespace pase
