#pragma once
// A lower bound on the capped optimum with no DP (docs/memory.md, "A bound
// without a DP"): memory is a sum over vertices and no edge costs less than
// nothing, so for any price per byte mu >= 0 every strategy within the cap
// costs at least sum over vertices of min over configurations of
// (cost + mu bytes), less mu cap (the Lagrangian dual of the problem with
// its edges dropped). What a search over many graphs (micro-batch counts,
// pipeline stage counts) rules one out with before any DP.
#include <cstdint>

#include "costmodel/memory_model.h"
#include "dp/objective.h"

namespace pase {

/// The best such bound over the prices tried: a bisection over mu for the
/// price at which the vertices' cheapest bytes cross the cap (where the
/// dual's maximum lies). The least vertex costs where those fit as they are;
/// infinity where even the least bytes of every vertex add up past the cap
/// (no strategy fits).
/// A lower bound on the capped optimum and the price per byte it was read
/// at (0: the least costs fit as they are).
struct PricedBound {
  double bound = 0;
  double price = 0;
};
[[nodiscard]] PricedBound separable_cap_bound(const Objective& objective, const MemoryTables& memory, uint64_t cap);

/// `objective` with each configuration costing its cost + price x bytes, the
/// edges shared: the objective whose DP optimum less price x cap bounds the
/// capped optimum with the edges counted (memorycap/memory_priced_dp.h's
/// Lagrangian bound at one price). Vertices that shared costs and bytes share
/// the priced costs, so repeated blocks still fold.
/// The power of two at or below `price` (0 stays 0): searches over many
/// like graphs (a pipeline's stage ranges) price their bytes alike, so their
/// repeated blocks' priced tables are the same and computed once.
[[nodiscard]] double rounded_price(double price);

[[nodiscard]] Objective priced_by_bytes(const Objective& objective, const MemoryTables& memory, double price);

}  // namespace pase
