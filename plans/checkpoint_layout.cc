#include "plans/checkpoint_layout.h"

namespace pase {
namespace {

std::string dimensions_text(const std::vector<int>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text;
}

// Why the merged checkpoint dimension `c` is no block per device, or "".
std::string merge_problem(const PlannedTensor& weight, const Shape& shape, size_t c, const std::vector<int>& group) {
  int last_split = -1;
  for (int d : group)
    if (weight.split[d] > 1) last_split = d;
  if (last_split < 0) return "";
  const std::string where = "checkpoint dimension " + std::to_string(c) + " (" + std::to_string(shape[c]) +
                            ") merges dimensions " + dimensions_text(group) + " of the weight's " +
                            shape_to_string(weight.shape) + ": ";
  for (int d : group) {
    if (d == last_split) break;
    if (weight.split[d] != weight.shape[d])
      return where + "dimension " + std::to_string(last_split) + " is split " + std::to_string(weight.split[last_split]) +
             " ways while dimension " + std::to_string(d) + " is split " + std::to_string(weight.split[d]) + " of " +
             std::to_string(weight.shape[d]) + ", so a device's piece is not one block of it";
  }
  for (int d : group)
    if (weight.shape[d] % weight.split[d] != 0)
      return where + "dimension " + std::to_string(d) + " (" + std::to_string(weight.shape[d]) + ") is split " +
             std::to_string(weight.split[d]) + " ways unevenly, so the pieces are not the checkpoint's blocks";
  return "";
}

}  // namespace

CheckpointView checkpoint_view(const PlannedTensor& weight, const Shape& shape,
                               const std::vector<std::vector<int>>& merges) {
  CheckpointView view;
  view.shape = shape;
  view.merges = merges;
  AxisSpec spec(merges.size());
  for (size_t c = 0; c < merges.size(); ++c) {
    int64_t pieces = 1;
    std::string letters;
    for (int d : merges[c]) {
      pieces *= weight.split[d];
      letters += weight.dims[d];
      spec[c].insert(spec[c].end(), weight.spec[d].begin(), weight.spec[d].end());
    }
    view.split.push_back(pieces);
    view.dims.push_back(letters);
    if (merges[c].size() > 1 && view.note.empty()) view.note = merge_problem(weight, shape, c, merges[c]);
  }
  if (view.note.empty())
    view.spec = std::move(spec);
  else
    view.note += "; hold the weight as " + shape_to_string(weight.shape) + ", a view of the checkpoint's tensor";
  return view;
}

}  // namespace pase
