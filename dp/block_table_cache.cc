#include "dp/block_table_cache.h"

#include <cstring>

namespace pase {
namespace {

// The block's whole content, bit for bit: equal keys, equal objectives (the
// separators' arrays are built afresh by every reduction, so no identity of
// storage would match; a block is a few hundred kilobytes).
std::vector<uint64_t> content(const Objective& block) {
  std::vector<uint64_t> key;
  auto doubles = [&](const double* values, size_t n) {
    key.push_back(n);
    for (size_t i = 0; i < n; ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, &values[i], sizeof bits);
      key.push_back(bits);
    }
  };
  for (const SharedArray<double>& cost : block.vertex_cost) doubles(cost.data(), cost.size());
  for (const PairCost& pair : block.pairs) {
    key.insert(key.end(), {static_cast<uint64_t>(pair.u), static_cast<uint64_t>(pair.v),
                           static_cast<uint64_t>(pair.u_classes), static_cast<uint64_t>(pair.v_classes),
                           pair.u_class.size(), pair.v_class.size()});
    for (int32_t c : pair.u_class) key.push_back(static_cast<uint64_t>(static_cast<uint32_t>(c)));
    for (int32_t c : pair.v_class) key.push_back(static_cast<uint64_t>(static_cast<uint32_t>(c)));
    doubles(pair.cost->data(), pair.cost->size());
  }
  return key;
}

}  // namespace

BlockTableCache::Entry& BlockTableCache::entry(const Objective& block) {
  return entries_.try_emplace(content(block)).first->second;
}

std::shared_ptr<const PartialDp> BlockTableCache::block(const Objective& block, const std::function<PartialDp()>& compute) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entry(block);
    if (e.dp) {
      ++hits_;
      return e.dp;
    }
  }
  // Computed outside the lock (two solves may both compute it; either result is the same).
  auto dp = std::make_shared<const PartialDp>(compute());
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = entry(block);
  if (!e.dp) e.dp = dp;
  return e.dp;
}

std::shared_ptr<const std::vector<double>> BlockTableCache::power(const Objective& block, size_t k,
                                                                 const std::function<std::vector<double>()>& compute) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entry(block);
    if (auto at = e.powers.find(k); at != e.powers.end()) {
      ++hits_;
      return at->second;
    }
  }
  auto power = std::make_shared<const std::vector<double>>(compute());
  std::lock_guard<std::mutex> lock(mutex_);
  return entry(block).powers.try_emplace(k, power).first->second;
}

size_t BlockTableCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

}  // namespace pase
