#include "graphs/checkpoint_shapes.h"

namespace pase {

std::optional<std::vector<std::vector<int>>> checkpoint_merges(const Shape& declared, const Shape& checkpoint) {
  if (checkpoint.empty()) return std::nullopt;
  std::vector<std::vector<int>> merges(checkpoint.size());
  const int rank = static_cast<int>(declared.size());
  int d = 0;
  for (size_t c = 0; c < checkpoint.size(); ++c) {
    int64_t product = 1;
    // Take declared dimensions until they hold the checkpoint dimension's
    // elements; one at least, so that a size-1 checkpoint dimension takes a
    // size-1 declared one.
    while (d < rank && (merges[c].empty() || product < checkpoint[c])) {
      product *= declared[d];
      merges[c].push_back(d++);
    }
    if (product != checkpoint[c]) return std::nullopt;
  }
  for (; d < rank; ++d) {  // trailing size-1 dimensions join the last group
    if (declared[d] != 1) return std::nullopt;
    merges.back().push_back(d);
  }
  return merges;
}

}  // namespace pase
