#include "strategy/config_lookup.h"

#include <algorithm>
#include <cstdio>

#include "base/check.h"

namespace pase {

int32_t find_config(const ConfigSet& configs, const int32_t* config) {
  // enumerate_configs emits tuples in lexicographic order, so binary search applies.
  size_t lo = 0, hi = configs.size();
  const int rank = configs.rank;
  // Whole tuples only: configuration i is splits[i * rank, (i + 1) * rank).
  PASE_ASSERT(rank >= 0 && configs.size() * static_cast<size_t>(rank) == configs.splits.size(), rank,
              configs.splits.size());
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const int32_t* probe = configs[mid];
    if (std::lexicographical_compare(probe, probe + rank, config, config + rank)) lo = mid + 1;
    else hi = mid;
  }
  if (lo < configs.size() && std::equal(config, config + rank, configs[lo])) return static_cast<int32_t>(lo);
  return -1;
}

std::string config_problem(const VertexModel& model, int64_t cutoff, int64_t devices, const std::vector<int64_t>& config) {
  // Callers check the rank first (a wrong count is the user's mistake, said in their words).
  PASE_ASSERT(config.size() == model.domain.size() && model.splittable.size() == model.domain.size(), config.size(),
              model.domain.size(), model.splittable.size());
  auto dim_name = [&](size_t i) {
    char letter = i < model.letters.size() ? model.letters[i] : '?';
    return "dim '" + std::string(1, letter) + "' (extent " + std::to_string(model.domain[i]) + ")";
  };
  for (size_t i = 0; i < config.size(); ++i)
    if (config[i] < 1) return dim_name(i) + " has split " + std::to_string(config[i]) + "; splits must be positive";
  // Products first: the most common hand-editing mistake. Multiplying in double cannot overflow.
  double product = 1.0;
  for (int64_t c : config) product *= static_cast<double>(c);
  if (product > static_cast<double>(devices)) {
    char text[64];
    std::snprintf(text, sizeof text, "%.0f", product);
    return "product " + std::string(text) + " exceeds " + std::to_string(devices) + " devices";
  }
  for (size_t i = 0; i < config.size(); ++i) {
    int64_t c = config[i], d = model.domain[i];
    if (c == 1) continue;
    if (!model.splittable[i]) return dim_name(i) + " cannot be split";
    if (d % c != 0) return dim_name(i) + " cannot be split " + std::to_string(c) + " ways: not a divisor";
    if (d / c < cutoff)
      return dim_name(i) + " cannot be split " + std::to_string(c) + " ways: " + std::to_string(d / c) +
             " per device is below the cutoff " + std::to_string(cutoff);
  }
  if (model.contiguous_only) {
    std::vector<int32_t> narrow(config.begin(), config.end());
    if (!is_contiguous(model.domain, narrow.data()))
      return "a reshape half takes only contiguous splits (leading dims fully split, at most one partly split dim, "
             "then 1s)";
  }
  return "";
}

std::string format_config(const int32_t* config, int rank) {
  std::string text = "(";
  for (int i = 0; i < rank; ++i) text += (i ? "," : "") + std::to_string(config[i]);
  return text + ")";
}

std::string config_letters(const std::string& dims, const int32_t* config, int rank) {
  std::string text;
  for (int i = 0; i < rank && static_cast<size_t>(i) < dims.size(); ++i)
    if (config[i] > 1)
      text += (text.empty() ? "" : "\u00b7") + std::string(1, dims[static_cast<size_t>(i)]) + std::to_string(config[i]);
  return text.empty() ? "-" : text;
}

std::string config_letters(const std::string& dims, const std::vector<int32_t>& config) {
  return config_letters(dims, config.data(), static_cast<int>(config.size()));
}

}  // namespace pase
