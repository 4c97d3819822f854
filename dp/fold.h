#pragma once
// Exact folding of repeated blocks (docs/architecture.md, "Folding"). A deep
// model repeats one block: the same vertices, prices and edges, shifted by a
// fixed number of vertices. Once the elimination plan treats two blocks alike
// (each vertex's dependent set is the other's shifted, and every table a
// vertex reads comes from its own block), their DP tables are equal entry for
// entry, so the DP computes one block's and the others reuse it
// (DpOptions::same_as). The optimum and the strategy are the unfolded DP's.
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "dp/objective.h"
#include "dp/ordering.h"

namespace pase {

struct Folding {
  std::vector<int> same_as;  ///< DpOptions::same_as: each follower's template, else -1
  size_t period = 0;         ///< vertices per block
  size_t first = 0;          ///< the first block's first vertex
  size_t blocks = 0;         ///< repeated blocks found (the run's length)
  size_t folded_blocks = 0;  ///< blocks whose tables are reused
  size_t followers = 0;      ///< vertices whose tables are reused
};

/// The longest run of repeated blocks in vertex order whose tables `plan`
/// makes equal, checked vertex by vertex; nullopt when there is none worth
/// folding (fewer than one block reused).
[[nodiscard]] std::optional<Folding> find_folding(const Objective& objective, const EliminationPlan& plan);

/// The longest run [start, start + length) of positions i with id[i] ==
/// id[i + period]: where a sequence repeats itself `period` later (both
/// foldings look for repeated blocks this way).
[[nodiscard]] std::pair<size_t, size_t> longest_run(const std::vector<int>& id, size_t period);

}  // namespace pase
