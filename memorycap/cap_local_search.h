#pragma once
// Single-vertex moves that make a strategy fit a memory cap or cost less
// under it. Heuristics: they only ever give the capped solve a better
// feasible strategy (an upper bound); the bound it proves comes from the DP.
#include <cstdint>
#include <vector>

#include "costmodel/memory_model.h"
#include "dp/objective.h"

namespace pase {

class CapLocalSearch {
 public:
  CapLocalSearch(const Objective& objective, const MemoryTables& memory);

  /// Lowers `choice`'s bytes to at most `cap`, each step the move with the
  /// least cost added per byte saved; false if it gets stuck above the cap.
  bool repair(std::vector<int32_t>& choice, uint64_t cap) const;
  /// Moves that lower the cost and keep the bytes at most `cap`, until none is left (or `max_sweeps`); a strategy over the cap is left alone.
  void improve(std::vector<int32_t>& choice, uint64_t cap, int max_sweeps = 50) const;

 private:
  /// Cost change of moving v from choice[v] to `to`.
  [[nodiscard]] double delta_cost(const std::vector<int32_t>& choice, size_t v, size_t to) const;

  const Objective& objective_;
  const MemoryTables& memory_;
  std::vector<std::vector<int>> incident_;  // per vertex: its pairs
};

}  // namespace pase
