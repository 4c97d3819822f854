#pragma once
// Identical blocks given one configuration (`--uniform-blocks`,
// docs/architecture.md, "Uniform blocks"). Megatron-LM, FSDP and a scan over
// layers run one plan for every block; the optimum may mix several. Asking
// every block of a run to take the first block's configurations is the same
// as merging each later block's vertex into the first block's: the merged
// vertex costs what its copies cost together, an edge costs what its copies
// do (k of them: the matrix times k), and an edge from one block into the
// next becomes one between two vertices of the one block (a vertex's edge to
// its own copy, a residual stream's, is a cost on the vertex: its matrix's
// diagonal). The DP over the merged objective is therefore exact over the
// uniform strategies, and its tables are one block's.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dp/objective.h"
#include "dp/solve.h"

namespace pase {

/// One run of identical blocks made uniform, in the original's vertex ids.
struct UniformRun {
  size_t blocks = 0, period = 0;
  int first = 0;        ///< the first block's first vertex
  size_t extended = 0;  ///< vertices next to the run merged too: the parts of blocks it starts or ends inside
};

struct UniformBlocks {
  Objective objective;             ///< the merged objective
  std::vector<std::string> names;  ///< its vertices' names: each the first block's
  std::vector<int> merged;         ///< per vertex of the original: its vertex in `objective`
  std::vector<int> stands_for;     ///< per vertex of `objective`: the original vertex its group follows
  std::vector<UniformRun> runs;    ///< the runs merged (none: `objective` is the original)
};

/// The objective in which each vertex of `representative` (per vertex, the
/// vertex whose configuration it takes; a representative is its own) stands
/// for its whole group. Every member of a group has its representative's
/// configurations (the same count, the same meaning).
[[nodiscard]] UniformBlocks merge_vertices(const Objective& objective, const std::vector<std::string>& names,
                                           const std::vector<int>& representative);

/// Whether two vertices may share one configuration index (the same list of
/// configurations, not only the same count).
using SameConfigurations = std::function<bool(int, int)>;

/// Every run of repeated blocks that folding finds (dp/chain_find.h: at least
/// two identical blocks that reach outside only through a separator), found
/// again in what is left after each merge, merged into its first block. A
/// run found at another phase than the model's layers (it starts inside one)
/// leaves a part of a block at each end: when the vertices just before it and
/// just after it, priced as the block's at the same positions (equal costs,
/// `same`), make up one whole block, they are merged too.
[[nodiscard]] UniformBlocks uniform_blocks(const Objective& objective, const std::vector<std::string>& names,
                                           const SameConfigurations& same);

/// A strategy of the original objective from one of the merged: each vertex
/// takes its group's configuration.
[[nodiscard]] std::vector<int32_t> expand_uniform(const UniformBlocks& uniform, const std::vector<int32_t>& merged_choice);

/// A solve of the merged objective as one of the original: the expanded
/// strategy (if it has one: a plan alone has none), and the order, dependent sets and table sizes on the first
/// block's vertices (the vertices merged into them have no table).
[[nodiscard]] Solution expand_solution(const UniformBlocks& uniform, Solution merged);

}  // namespace pase
