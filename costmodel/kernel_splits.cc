#include "costmodel/kernel_splits.h"

#include <vector>

namespace pase {
namespace {

// A tensor dimension's extent: the product of the domain extents it follows
// (a dimension that follows none is never split and counts as 1, which
// only ever shortens the row the rule sees).
int64_t dimension_extent(const VertexModel& model, const std::vector<int>& follows) {
  int64_t extent = 1;
  for (int d : follows) extent *= model.domain[static_cast<size_t>(d)];
  return extent;
}

// The row a device holds of a tensor whose dimensions have these extents and
// splits: long enough, or no dimension split.
bool row_long_enough(const std::vector<int64_t>& extent, const std::vector<int64_t>& split, int64_t min_row) {
  int64_t inner = 1;  // the extents after the dimension looked at
  for (size_t i = extent.size(); i-- > 0;) {
    if (split[i] > 1) return extent[i] / split[i] * inner >= min_row;
    inner = inner > min_row ? inner : inner * extent[i];  // saturates: only "at least min_row" matters
  }
  return true;
}

bool tensor_keeps_rows(const VertexModel& model, const SplitMap& map, const std::vector<int64_t>* shape,
                       const int32_t* config, int64_t min_row) {
  std::vector<int64_t> split(map.size()), extent(map.size());
  tensor_split(map, config, split.data());
  for (size_t i = 0; i < map.size(); ++i)
    extent[i] = shape && i < shape->size() ? (*shape)[i] : dimension_extent(model, map[i]);
  return row_long_enough(extent, split, min_row);
}

}  // namespace

bool keeps_rows(const VertexModel& model, const int32_t* config, int64_t min_row) {
  if (min_row <= 1) return true;
  for (const SplitMap& map : model.inputs)
    if (!tensor_keeps_rows(model, map, nullptr, config, min_row)) return false;
  for (const SplitMap& map : model.outputs)
    if (!tensor_keeps_rows(model, map, nullptr, config, min_row)) return false;
  for (const WeightTensor& weight : model.weights)
    if (!tensor_keeps_rows(model, weight.split, &weight.shape, config, min_row)) return false;
  return true;
}

}  // namespace pase
