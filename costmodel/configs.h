#pragma once
// Enumerating a vertex's valid configurations, in lexicographic order.
#include <cstdint>
#include <vector>

#include "base/shared_array.h"
#include "graphs/vertex_model.h"

namespace pase {

/// Flat list of configurations: entry i is splits[i*rank .. i*rank+rank).
/// Copies share the list (vertices priced alike hold one).
struct ConfigSet {
  int rank = 0;
  SharedArray<int32_t> splits;

  [[nodiscard]] size_t size() const { return rank ? splits.size() / static_cast<size_t>(rank) : 0; }
  [[nodiscard]] const int32_t* operator[](size_t i) const { return splits.data() + i * static_cast<size_t>(rank); }
};

/// Divisors e of `extent` with extent / e >= cutoff and e <= devices; {1} if none or not splittable.
[[nodiscard]] std::vector<int32_t> allowed_splits(int64_t extent, int64_t cutoff, int64_t devices, bool splittable);

/// Row-major contiguity: leading dims fully split (c = d), at most one partly split dim, then all 1.
[[nodiscard]] bool is_contiguous(const Shape& domain, const int32_t* config);

/// All tuples of allowed splits with product <= devices, lexicographic (first dim slowest).
/// Throws ResourceError naming `vertex_name` if there would be more than `max_configs`.
[[nodiscard]] ConfigSet enumerate_configs(const VertexModel& model, int64_t cutoff, int64_t devices,
                                          size_t max_configs, const std::string& vertex_name);

/// Devices a configuration occupies (the product of its splits).
[[nodiscard]] int64_t devices_used(const int32_t* config, int rank);

}  // namespace pase
