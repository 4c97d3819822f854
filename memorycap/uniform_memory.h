#pragma once
// Uniform blocks under a memory cap (dp/uniform_blocks.h): a device's bytes
// are a sum of per-vertex terms, so merging vertices adds their bytes as it
// adds their costs, and the capped search over the merged objective and
// merged bytes is the capped search over uniform strategies, with the same
// proven bound (over those strategies).
#include "costmodel/memory_model.h"
#include "dp/uniform_blocks.h"
#include "memorycap/vertex_options.h"

namespace pase {

/// The bytes of `uniform`'s merged vertices: per configuration, the sum of
/// their members' weights and activations.
[[nodiscard]] MemoryTables merge_memory_tables(const MemoryTables& memory, const UniformBlocks& uniform);

/// Per-layer techniques (memorycap/vertex_options.h) under uniform blocks:
/// the option space of `uniform`, made by merging `space.objective` (every
/// member's options meaning what its representative's do: one configuration
/// and one variant per block position). Each merged vertex's options cost
/// and take what its group's do together; their configurations and variants
/// are its representative's.
[[nodiscard]] OptionSpace merge_options(const OptionSpace& space, const UniformBlocks& uniform);

}  // namespace pase
