#pragma once
// A run of repeated blocks cut out of an objective (internal to the dp
// library, for chain_fold): the run's first block as an objective of its own,
// between the separator before it and its own, and the objective left when the
// whole run is one edge between the separators at its two ends.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dp/chain_find.h"
#include "dp/objective.h"

namespace pase {

// A separator taken as one vertex: its configurations are the members'
// combinations, the first member slowest.
struct Product {
  std::vector<int> members;  // vertex ids
  std::vector<size_t> radix, stride;
  size_t configs = 1;

  Product(const Objective& objective, std::vector<int> vertices);
  [[nodiscard]] int index_of(int v) const;
  [[nodiscard]] int32_t digit(size_t z, size_t i) const { return static_cast<int32_t>(z / stride[i] % radix[i]); }
  // A member's class map over the product's configurations.
  [[nodiscard]] std::vector<int32_t> classes(size_t i, const SharedArray<int32_t>& member_classes) const;
  // Own costs of the members, plus the pairs among them.
  [[nodiscard]] std::vector<double> cost(const Objective& objective, bool with_members) const;
  [[nodiscard]] std::string name(const std::vector<std::string>& names) const;
};

// A new objective built from parts of another: vertices, and pairs whose ends
// are vertices or members of a product.
struct Builder {
  Objective objective;
  std::vector<std::string> names;

  int add_vertex(SharedArray<double> cost, std::string name) {
    objective.vertex_cost.push_back(std::move(cost));
    names.push_back(std::move(name));
    return static_cast<int>(objective.vertex_cost.size()) - 1;
  }
};

// The one block's objective and the objective left when the run is an edge.
struct Reduction {
  ChainFold fold;
  Product before, last;  // the separator before the run, and the run's last block's
  // One block (the run's first): the separator before (cost 0, kept), the
  // block's other vertices, its own separator (its members' costs, kept).
  Builder block;
  std::vector<int> block_vertex;  // per block objective vertex: its offset in the block, -1 for the two separators
  int z_in = 0, z_out = 0;
  // The rest, the run replaced by an edge from `before` to `last` (costs T^blocks).
  Builder reduced;
  std::vector<int> reduced_vertex;  // per reduced vertex: the objective's vertex, -1 for the two separators
  int z0 = -1, zk = -1;
  size_t run_edge = 0;  // index of that edge in reduced.objective.pairs
};

/// Cuts `fold`'s run out of `objective`: its block and what is left (the
/// run's edge priced 0 until T^blocks is known).
[[nodiscard]] Reduction reduce(const Objective& objective, const std::vector<std::string>& names, const ChainFold& fold);

}  // namespace pase
