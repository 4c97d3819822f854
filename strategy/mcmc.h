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

/// Runs the chain from `start` (a full assignment); never returns worse than `start`.
[[nodiscard]] McmcResult mcmc_search(const Objective& objective, const std::vector<int32_t>& start,
                                     const McmcOptions& options);

/// "iterations", "seconds", "no improvement".
[[nodiscard]] std::string mcmc_stop_name(McmcStop stop);

}  // namespace pase
