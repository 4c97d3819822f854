#pragma once
// An answer for graphs whose exact DP tables are too large (docs/architecture.md,
// "Bounded solves"). Edge costs are never negative, so replacing some edges'
// matrices by smaller separable ones gives an objective whose optimum is a
// lower bound on the true one; relaxing just enough edges makes the DP's
// tables fit. The relaxed optimum, priced on the true objective and improved
// by local moves, is the answer; the relaxed DP's optimum is its proven bound.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dp/objective.h"
#include "dp/solve.h"

namespace pase {

struct BoundedOptions {
  SolveOptions solve;  ///< order, threads; dp limits are the user's
  /// The relaxed DP is kept below these (and below solve.dp's limits): a
  /// bounded answer should take seconds, not what the exact one would.
  uint64_t target_table_bytes = uint64_t{1} << 30;
  uint64_t target_work = uint64_t{2} * 1000 * 1000 * 1000;
};

struct BoundedSolution {
  Solution solution;           ///< choice and its true cost
  double lower_bound = 0;      ///< no strategy costs less
  size_t relaxed_edges = 0;    ///< edges whose matrix was replaced by a separable bound
  size_t local_moves = 0;      ///< configurations the local search changed
  [[nodiscard]] double gap() const { return lower_bound > 0 ? (solution.cost - lower_bound) / lower_bound : 0.0; }
  /// The bound meets the cost up to rounding (the exact DP's own tolerance,
  /// 1e-9 relative): the answer is an optimum.
  [[nodiscard]] bool proven_optimal() const { return gap() <= 1e-9; }
};

/// The objective with `relaxed` edges (by index into its pairs) left out and,
/// in their place, a separable bound f(a) + g(b) <= cost(a, b) added to the
/// two vertices' costs: f(a) = min_b cost(a, b), g(b) = min_a (cost(a, b) -
/// f(a)), at least 0. No strategy costs more on it than on `objective`.
[[nodiscard]] Objective relax_edges(const Objective& objective, const std::vector<char>& relaxed);

/// The relaxation a bounded solve runs its DP on.
struct Relaxation {
  Objective objective;         ///< relax_edges(the objective, relaxed)
  std::vector<char> relaxed;   ///< per pair: 1 if relaxed
  size_t relaxed_edges = 0;
  EliminationPlan plan;        ///< the order whose tables fit the targets
};

/// Relaxes the edges that make the tables large, the cheapest to relax
/// (least spread) of the largest table's first, until the DP's tables fit
/// the targets; ResourceError when not even relaxing every edge near a
/// vertex does.
[[nodiscard]] Relaxation relax_to_fit(const Objective& objective, const std::vector<std::string>& names,
                                      const BoundedOptions& options);

/// Relaxes the edges that make the tables large (cheapest to relax first)
/// until the DP fits the targets, solves, prices the answer on the true
/// objective and improves it by single-vertex moves.
[[nodiscard]] BoundedSolution solve_bounded(const Objective& objective, const std::vector<std::string>& names,
                                            const BoundedOptions& options);

/// The same over a relaxation of `objective` already made (relax_to_fit's,
/// or the same edges of another objective over the same configurations).
[[nodiscard]] BoundedSolution solve_bounded(const Objective& objective, const std::vector<std::string>& names,
                                            const BoundedOptions& options, const Relaxation& relaxation);

/// Why the exact DP could not run: the DpOptions limit its tables passed
/// ("max_table_bytes" or "max_work"), and the vertex with the largest table
/// with the size of its dependent set.
struct ExactRefusal {
  std::string option;
  int vertex = -1;
  size_t dependent_set = 0;
};

/// A solve's answer: the exact optimum, or (past the exact DP's limits) a
/// bounded solve's, with why the exact DP could not run.
struct Answer {
  Solution solution;
  std::optional<BoundedSolution> bounded;
  std::optional<ExactRefusal> refusal;  ///< set exactly when `bounded` is
};

/// Why the exact DP cannot solve `objective` under `options`' limits, or
/// nullopt when it can; with `exact`, its LimitError thrown instead.
[[nodiscard]] std::optional<ExactRefusal> past_exact_limits(const Objective& objective,
                                                            const std::vector<std::string>& names,
                                                            const SolveOptions& options, bool exact);

/// solve(); when its tables pass the limits, a bounded solve unless `exact`.
/// Rethrows the exact DP's LimitError with `exact`, or when not even relaxing
/// every edge fits.
[[nodiscard]] Answer solve_or_bound(const Objective& objective, const std::vector<std::string>& names,
                                    const SolveOptions& options, bool exact);

}  // namespace pase
