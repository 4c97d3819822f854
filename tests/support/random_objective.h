#pragma once
// Random table-driven objectives and brute-force enumeration, shared by the
// tests that check the DP (and the capped search) against exhaustive search.
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "costmodel/memory_model.h"
#include "dp/objective.h"

namespace pase::test {

/// A class map for `configs` configurations: the identity, or (merge) a random
/// map onto fewer classes, every class used at least once.
std::vector<int32_t> class_map(std::mt19937& rng, size_t configs, bool merge, int32_t& classes);

/// A random objective: n vertices of 1..max_configs configurations with integer
/// costs, and dense-ish random edges (many cycles in the undirected sense,
/// joins, parallel edges). With `merge`, each edge end gets a random class map
/// onto fewer classes with probability 3/4, and an edge sometimes shares the
/// previous edge's matrix (as edges priced alike do).
Objective random_objective(std::mt19937& rng, int n, uint32_t max_configs, bool merge);

/// `blocks` copies of one random block of `size` vertices between a prefix
/// vertex and a suffix vertex. Inside a block, random edges go forward; the
/// last `separators` vertices of a block feed random vertices of the next one
/// (one vertex: a residual stream; two: a two-vertex separator). Copies share
/// their matrices, as edges priced alike do: what folding finds.
Objective repeated_blocks(std::mt19937& rng, int size, int blocks, int separators);

/// Random bytes per configuration: weights below `weights`, activations
/// below `activations`, every vertex its own.
MemoryTables random_memory(std::mt19937& rng, const Objective& objective, uint32_t weights, uint32_t activations);

/// Advances an odometer over `digits`, the first fastest, digit i running
/// over 0..radix(i)-1; false once every assignment has been visited.
bool next_assignment(std::vector<int32_t>& digits, const std::function<size_t(size_t)>& radix);

/// "v0", "v1", ...: names for the n vertices of a random objective.
std::vector<std::string> vertex_names(size_t n);

/// Minimum of the objective over every assignment (odometer over configurations).
double brute_force(const Objective& objective, std::vector<int32_t>& best_choice);

}  // namespace pase::test
