#include "memorycap/uniform_memory.h"

#include "base/error.h"

namespace pase {

MemoryTables merge_memory_tables(const MemoryTables& memory, const UniformBlocks& uniform) {
  const size_t merged_count = uniform.objective.vertex_count();
  MemoryTables merged;
  merged.options = memory.options;
  merged.offset.assign(merged_count + 1, 0);
  for (size_t w = 0; w < merged_count; ++w) merged.offset[w + 1] = merged.offset[w] + uniform.objective.config_count(w);
  merged.weights.assign(merged.offset.back(), 0);
  merged.activations.assign(merged.offset.back(), 0);
  for (size_t v = 0; v < uniform.merged.size(); ++v) {
    const size_t w = static_cast<size_t>(uniform.merged[v]);
    // Vertices alike share their entries (equal offsets): count by the merged vertex.
    const size_t configs = uniform.objective.config_count(w);
    for (size_t c = 0; c < configs; ++c) {
      uint64_t& weights = merged.weights[merged.offset[w] + c];
      uint64_t& activations = merged.activations[merged.offset[w] + c];
      if (weights > ~uint64_t{0} - memory.weights[memory.offset[v] + c] ||
          activations > ~uint64_t{0} - memory.activations[memory.offset[v] + c])
        throw InputError("the merged blocks' bytes per device overflow 64 bits");
      weights += memory.weights[memory.offset[v] + c];
      activations += memory.activations[memory.offset[v] + c];
    }
  }
  return merged;
}

OptionSpace merge_options(const OptionSpace& space, const UniformBlocks& uniform) {
  OptionSpace merged;
  merged.objective = uniform.objective;
  merged.memory = merge_memory_tables(space.memory, uniform);
  for (int original : uniform.stands_for) {
    const auto v = static_cast<size_t>(original);
    merged.first.push_back(space.first[v]);
    merged.config.push_back(space.config[v]);
    merged.variant.push_back(space.variant[v]);
  }
  return merged;
}

}  // namespace pase
