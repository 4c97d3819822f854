#pragma once
// Vertex orders for the DP and the dependent sets they induce.
//
// For a sequence v1..vn, the dependent set D(vi) is the set of later vertices
// adjacent to the connected component of {v1..vi} that contains vi. The DP
// table of vi is indexed by the configurations of D(vi), so small dependent
// sets mean small tables. D(vi) equals vi's neighbourhood in the elimination
// graph (eliminating a vertex joins its remaining neighbours), which is how
// it is computed here.
#include <string>
#include <vector>

#include "dp/objective.h"

namespace pase {

enum class OrderKind { GenerateSeq, Bfs, MinDegree, MinFill };

/// "generateseq", "bfs", "mindegree", "minfill"; throws InputError on anything else.
[[nodiscard]] OrderKind parse_order_kind(const std::string& name);
[[nodiscard]] std::string order_kind_name(OrderKind kind);

struct EliminationPlan {
  std::vector<int> order;                   ///< the sequence
  std::vector<int> position;                ///< position[v] = index of v in order
  std::vector<std::vector<int>> dependent;  ///< D(v), sorted by position, latest first
};

/// Distinct undirected neighbours of every vertex.
[[nodiscard]] std::vector<std::vector<int>> undirected_neighbours(const Objective& objective);

/// GenerateSeq (PaSE Fig. 3): repeatedly take the vertex whose dependent set is
/// smallest (ties: lowest index).
[[nodiscard]] EliminationPlan generate_seq(const std::vector<std::vector<int>>& neighbours);

/// Breadth-first order from vertex 0 (neighbours by index; next component from its lowest vertex).
[[nodiscard]] std::vector<int> bfs_order(const std::vector<std::vector<int>>& neighbours);

/// Dependent sets of an arbitrary order.
[[nodiscard]] EliminationPlan plan_for_order(const std::vector<std::vector<int>>& neighbours, const std::vector<int>& order);

/// Min-degree: like GenerateSeq, but ties go to the smallest table (product of
/// the dependent set's configuration counts), then the lowest index.
[[nodiscard]] EliminationPlan min_degree(const std::vector<std::vector<int>>& neighbours,
                                         const std::vector<size_t>& config_counts);

/// Min-degree over every vertex but `last`, which end the order as listed
/// (so every table that depends on them waits for them: eliminate_dp).
[[nodiscard]] EliminationPlan min_degree_keeping_last(const std::vector<std::vector<int>>& neighbours,
                                                      const std::vector<size_t>& config_counts,
                                                      const std::vector<int>& last);

/// Min-fill: the vertex whose elimination adds the fewest new edges; ties to
/// the smallest table, then the lowest index.
[[nodiscard]] EliminationPlan min_fill(const std::vector<std::vector<int>>& neighbours,
                                       const std::vector<size_t>& config_counts);

/// The plan for an order kind (`config_counts` weighs tables for the heuristics that use them).
[[nodiscard]] EliminationPlan make_plan(const std::vector<std::vector<int>>& neighbours, OrderKind kind,
                                        const std::vector<size_t>& config_counts);

/// Every order kind, in the order `--order` lists them.
[[nodiscard]] const std::vector<OrderKind>& all_order_kinds();

}  // namespace pase
