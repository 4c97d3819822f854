#include "costmodel/configs.h"

#include <string>
#include <utility>

#include "base/error.h"

namespace pase {

std::vector<int32_t> allowed_splits(int64_t extent, int64_t cutoff, int64_t devices, bool splittable) {
  std::vector<int32_t> splits;
  if (splittable)
    for (int64_t e = 1; e <= devices && e <= extent; ++e)
      if (extent % e == 0 && extent / e >= cutoff) splits.push_back(static_cast<int32_t>(e));
  if (splits.empty()) splits.push_back(1);
  return splits;
}

bool is_contiguous(const Shape& domain, const int32_t* config) {
  size_t d = 0;
  while (d < domain.size() && config[d] == domain[d]) ++d;
  for (++d; d < domain.size(); ++d)
    if (config[d] != 1) return false;
  return true;
}

int64_t devices_used(const int32_t* config, int rank) {
  int64_t product = 1;
  for (int i = 0; i < rank; ++i) product *= config[i];
  return product;
}

ConfigSet enumerate_configs(const VertexModel& model, int64_t cutoff, int64_t devices, size_t max_configs,
                            const std::string& vertex_name) {
  const int rank = static_cast<int>(model.domain.size());
  std::vector<std::vector<int32_t>> choices(rank);
  for (int i = 0; i < rank; ++i) choices[i] = allowed_splits(model.domain[i], cutoff, devices, model.splittable[i]);
  std::vector<int32_t> splits;
  std::vector<int32_t> current(rank, 1);
  // Depth-first over dimensions in order with ascending splits gives lexicographic order;
  // the running product prunes tuples that would need more than `devices`.
  auto recurse = [&](auto&& self, int dim, int64_t product) -> void {
    if (dim == rank) {
      if (model.contiguous_only && !is_contiguous(model.domain, current.data())) return;
      if (rank > 0 && splits.size() / static_cast<size_t>(rank) >= max_configs)
        throw ResourceError("vertex '" + vertex_name + "' has more than " + std::to_string(max_configs) +
                            " configurations at " + std::to_string(devices) +
                            " devices (the configuration limit); a larger cutoff gives it fewer");
      splits.insert(splits.end(), current.begin(), current.end());
      return;
    }
    for (int32_t split : choices[dim]) {
      if (product * split > devices) break;
      current[dim] = split;
      self(self, dim + 1, product * split);
    }
    current[dim] = 1;
  };
  recurse(recurse, 0, 1);
  ConfigSet set;
  set.rank = rank;
  set.splits = std::move(splits);
  return set;
}

}  // namespace pase
