#pragma once
// The defaults every command solves with, in one place (before this library
// each command had its own: `batch` refused what `solve` answered).
#include <cstdint>

#include "dp/solve.h"

namespace pase {

/// Placement steps (PlanOptions::max_work) a placement on the default mesh
/// spends at most; about 0.2 s on one core. Past it the plan keeps the best
/// assignment of fewer candidates and says it is not proven optimal.
inline constexpr uint64_t kDefaultPlacementWork = uint64_t{200} * 1000 * 1000;

/// The DP's default table limit: half of the machine's physical memory (4 GiB
/// when that cannot be read).
[[nodiscard]] uint64_t default_table_limit();

/// The order, limits and folding a solve takes unless told otherwise:
/// SolveOptions' defaults with the table limit at default_table_limit().
[[nodiscard]] SolveOptions default_solve_options();

}  // namespace pase
