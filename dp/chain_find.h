#pragma once
// Finding a run of repeated blocks that transfer tables can fold
// (docs/architecture.md, "Folding"): identical blocks, shifted, that reach
// outside themselves only through a small separator.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "dp/objective.h"

namespace pase {

/// A run of blocks [first + j·period, first + (j+1)·period), j < blocks, that
/// are identical (vertex prices, edges, separators).
struct ChainFold {
  size_t period = 0;               ///< vertices per block
  size_t first = 0;                ///< the first block's first vertex
  size_t blocks = 0;               ///< blocks in the run, every one folded into T^blocks
  std::vector<int> separator;      ///< offsets in a block of the vertices that feed the next block
  uint64_t separator_configs = 0;  ///< C: configurations of the separator as a whole
};

/// Separators with more configurations than this are not folded this way
/// (the min-plus products cost C^3): the DP's own folding (fold.h) serves.
inline constexpr uint64_t kMaxSeparatorConfigs = 1024;

/// The run of repeated blocks that covers the most vertices, with a
/// separator of at most kMaxSeparatorConfigs configurations; nullopt if there
/// is none of at least two blocks.
[[nodiscard]] std::optional<ChainFold> find_chain(const Objective& objective);

}  // namespace pase
