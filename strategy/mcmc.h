#pragma once
// A FlexFlow-style Markov chain Monte Carlo search over the same configurations
// and cost as the DP: the baseline the PaSE paper compares against.
//
// Each step proposes one random vertex and one random other configuration of
// it, prices the change incrementally (that vertex's layer cost and its
// incident edges only) and accepts it by the Metropolis rule
// P = min(1, exp(-delta / (temperature * best cost))),
// best being the cheapest cost seen so far. The search keeps the
// best assignment seen and stops after `max_iterations`, after `max_seconds`,
// or when the best has not improved for half of the iterations so far.
#include <cstdint>
#include <string>
#include <vector>

#include "dp/objective.h"

namespace pase {

struct McmcOptions {
  uint64_t seed = 1;
  uint64_t max_iterations = 200000;
  double max_seconds = 0.0;        ///< 0: no time limit (the result then depends only on the seed)
  double temperature = 0.001;      ///< relative to the best cost: a move 0.1% of it worse is accepted with P = 1/e
  uint64_t min_iterations = 20000; ///< the no-improvement rule applies only after this many steps
};

enum class McmcStop { Iterations, Seconds, NoImprovement };

struct McmcResult {
  double cost = 0.0;             ///< objective value of `choice`, recomputed from scratch
  std::vector<int32_t> choice;   ///< best assignment seen
  uint64_t iterations = 0;
  uint64_t accepted = 0;
  uint64_t improvements = 0;
  double seconds = 0.0;
  McmcStop stop = McmcStop::Iterations;
};

/// What a chain prices: a whole assignment, and one move from the current
/// one, kept or undone. The DP's objective is one (a move prices its
/// vertex's terms and edges); the simulated step another (simulated_mcmc.h).
class ChainObjective {
 public:
  virtual ~ChainObjective() = default;
  [[nodiscard]] virtual size_t vertex_count() const = 0;
  [[nodiscard]] virtual uint64_t config_count(size_t v) const = 0;
  /// The cost of `choice`, priced from scratch.
  [[nodiscard]] virtual double evaluate(const std::vector<int32_t>& choice) = 0;
  /// The chain starts at `start`: its cost.
  virtual double begin(const std::vector<int32_t>& start) { return evaluate(start); }
  /// What moving vertex `v` of `current` (the assignment so far) to
  /// configuration `to` changes the cost by; accept or reject follows.
  [[nodiscard]] virtual double move_delta(const std::vector<int32_t>& current, int v, int32_t to) = 0;
  virtual void accept() {}
  virtual void reject() {}
};

/// Runs the chain from `start` (a full assignment); never returns worse than `start`.
[[nodiscard]] McmcResult mcmc_search(const Objective& objective, const std::vector<int32_t>& start,
                                     const McmcOptions& options);

/// The same chain over any objective.
[[nodiscard]] McmcResult mcmc_search(ChainObjective& objective, const std::vector<int32_t>& start,
                                     const McmcOptions& options);

/// "iterations", "seconds", "no improvement".
[[nodiscard]] std::string mcmc_stop_name(McmcStop stop);

}  // namespace pase
