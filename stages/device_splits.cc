#include "stages/device_splits.h"

#include <cmath>
#include <cstdio>

#include "base/error.h"

namespace pase {
namespace {

OptionError split_error(const std::string& after) {
  return OptionError({"stage_devices", "the stage devices", "", after});
}

// Appends every split of `left` units into the parts from `part` on.
void append_splits(int64_t left, int64_t unit, std::vector<int64_t>& split, size_t part,
                   std::vector<std::vector<int64_t>>& out) {
  if (part + 1 == split.size()) {
    split[part] = left * unit;
    out.push_back(split);
    return;
  }
  const auto later = static_cast<int64_t>(split.size() - part - 1);  // each later part at least one unit
  for (int64_t units = 1; units + later <= left; ++units) {
    split[part] = units * unit;
    append_splits(left - units, unit, split, part + 1, out);
  }
}

}  // namespace

double device_split_count(int64_t devices, int stages, int64_t unit) {
  const double n = static_cast<double>(devices / unit) - 1, k = stages - 1;
  if (k < 0 || k > n) return 0;
  return std::round(std::exp(std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1)));
}

std::vector<std::vector<int64_t>> device_splits(int64_t devices, int stages, int64_t unit, size_t limit) {
  if (unit < 1 || devices % unit != 0)
    throw split_error(": a unit of " + std::to_string(unit) + " devices does not divide " + std::to_string(devices));
  const double count = device_split_count(devices, stages, unit);
  if (count > static_cast<double>(limit)) {
    char words[64];
    std::snprintf(words, sizeof words, "%.3g", count);
    throw split_error(": " + std::string(words) + " ways to give " + std::to_string(stages) + " stages " +
                      std::to_string(devices / unit) + " units of " + std::to_string(unit) +
                      " devices, above the limit of " + std::to_string(limit) + " (give each stage's devices, or fewer stages)");
  }
  std::vector<std::vector<int64_t>> out;
  if (count == 0) return out;
  std::vector<int64_t> split(static_cast<size_t>(stages));
  append_splits(devices / unit, unit, split, 0, out);
  return out;
}

int64_t device_split_unit(int64_t devices, int64_t per_node) {
  return per_node > 0 && devices > per_node && devices % per_node == 0 ? per_node : 1;
}

}  // namespace pase
