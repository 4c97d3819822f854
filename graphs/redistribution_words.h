#pragma once
// The words a device must fetch when a tensor produced with one split is
// consumed with another (docs/formats.md, "Edge cost"): what it needs minus
// the best overlap with a piece it already holds.
#include <cstdint>

#include "base/shape.h"

namespace pase {

/// max(0, need − overlap) from per-device extents (tensor size / split) and
/// piece counts; the overlap is 0 when the consumer uses more pieces than the
/// producer made. The one statement of the rule, for single pairs and matrices.
[[nodiscard]] inline double fetched_words(const double* held_extent, const double* needed_extent, double need,
                                          int64_t held_parts, int64_t needed_parts, size_t rank) {
  double overlap = 1.0;
  for (size_t i = 0; i < rank; ++i) overlap *= held_extent[i] < needed_extent[i] ? held_extent[i] : needed_extent[i];
  if (needed_parts > held_parts) overlap = 0.0;
  double missing = need - overlap;
  return missing > 0.0 ? missing : 0.0;
}

/// fetched_words for a tensor produced with split `a` and consumed with split `b`.
[[nodiscard]] double redistribution_words(const Shape& tensor, const int64_t* a, const int64_t* b);

}  // namespace pase
