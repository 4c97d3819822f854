#pragma once
// Bytes per device of a training step under a strategy (docs/memory.md):
// every device holds one tile of every weight (with its gradient and
// optimizer state) and of every activation kept for the backward pass. The
// total is a sum of one term per vertex that depends on that vertex's
// configuration only, so it is stored like a vertex cost vector and the
// solver can carry it exactly.
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "costmodel/dtype.h"
#include "costmodel/training_setup.h"
#include "graphs/graph.h"

namespace pase {

/// Bytes per activation element (a): 4 for fp32 and tf32, 2 for bf16 and fp16.
[[nodiscard]] uint64_t activation_element_bytes(const TrainingSetup& options);
/// Bytes per parameter element (S): the weight, its gradient and the optimizer's state, unsharded.
[[nodiscard]] uint64_t parameter_element_bytes(const TrainingSetup& options);

/// Elements of one tile of `shape` split `split` ways per dimension: prod ceil(shape_i / split_i).
[[nodiscard]] uint64_t tile_elements(const Shape& shape, const int64_t* split);

/// Per-vertex, per-configuration bytes, flat: configuration s of vertex v is
/// entry offset[v] + s of `weights` and `activations`. Vertices with equal
/// bytes may share entries (equal offsets), so offsets need not increase.
struct MemoryTables {
  TrainingSetup options;
  std::vector<size_t> offset;         ///< vertex count + 1 entries, the last the entries' count
  std::vector<uint64_t> weights;      ///< weight tiles x S (ZeRO: the sharded parts over the weight's replicas)
  std::vector<uint64_t> activations;  ///< output tiles and data inputs read, x a

  [[nodiscard]] size_t vertex_count() const { return offset.empty() ? 0 : offset.size() - 1; }
  [[nodiscard]] uint64_t bytes(size_t v, size_t config) const {
    return weights[offset[v] + config] + activations[offset[v] + config];
  }
};

/// One strategy's bytes per device.
struct PlanMemory {
  uint64_t weights = 0, activations = 0;
  [[nodiscard]] uint64_t total() const { return weights + activations; }
};

/// The bytes of every configuration of every vertex of `tables` (InputError if a count overflows 64 bits).
[[nodiscard]] MemoryTables build_memory_tables(const Graph& graph, const CostTables& tables, const TrainingSetup& options);

/// Bytes per device of a full assignment (configuration index per vertex).
[[nodiscard]] PlanMemory plan_memory(const MemoryTables& memory, const std::vector<int32_t>& choice);

}  // namespace pase
