#include "dp/block_table_cache.h"

#include <cstring>

#include "dp/min_plus.h"

namespace pase {
namespace {

// A hash of the block's shape and a few values of each array: equal content,
// equal hash, at a cost that does not grow with the arrays (a block's
// matrices are megabytes at hundreds of devices); blocks that differ only
// where it does not look share a bucket and are told apart by same_content.
template <typename T>
void mix_array(uint64_t& hash, const T* values, size_t n) {
  auto mix = [&](uint64_t word) {
    hash ^= word + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
    hash *= 0xff51afd7ed558ccdULL;
  };
  mix(n);
  constexpr size_t kSamples = 8;
  for (size_t s = 0; s < kSamples && s < n; ++s) {
    uint64_t bits = 0;
    std::memcpy(&bits, &values[s * n / std::min(n, kSamples)], sizeof(T));
    mix(bits);
  }
}

uint64_t sampled_hash(const Objective& block) {
  uint64_t hash = 0;
  for (const SharedArray<double>& cost : block.vertex_cost) mix_array(hash, cost.data(), cost.size());
  for (const PairCost& pair : block.pairs) {
    const int64_t ends[4] = {pair.u, pair.v, pair.u_classes, pair.v_classes};
    mix_array(hash, ends, 4);
    mix_array(hash, pair.u_class.data(), pair.u_class.size());
    mix_array(hash, pair.v_class.data(), pair.v_class.size());
    mix_array(hash, pair.cost->data(), pair.cost->size());
  }
  return hash;
}

// Bit for bit; the same storage needs no reading.
template <typename T>
bool same_array(const T* a, size_t na, const T* b, size_t nb) {
  return na == nb && (a == b || std::memcmp(a, b, na * sizeof(T)) == 0);
}

bool same_content(const Objective& a, const Objective& b) {
  if (a.vertex_cost.size() != b.vertex_cost.size() || a.pairs.size() != b.pairs.size()) return false;
  for (size_t v = 0; v < a.vertex_cost.size(); ++v)
    if (!same_array(a.vertex_cost[v].data(), a.vertex_cost[v].size(), b.vertex_cost[v].data(), b.vertex_cost[v].size()))
      return false;
  for (size_t e = 0; e < a.pairs.size(); ++e) {
    const PairCost &x = a.pairs[e], &y = b.pairs[e];
    if (x.u != y.u || x.v != y.v || x.u_classes != y.u_classes || x.v_classes != y.v_classes ||
        !same_array(x.u_class.data(), x.u_class.size(), y.u_class.data(), y.u_class.size()) ||
        !same_array(x.v_class.data(), x.v_class.size(), y.v_class.data(), y.v_class.size()) ||
        !same_array(x.cost->data(), x.cost->size(), y.cost->data(), y.cost->size()))
      return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const PartialDp> BlockTableCache::block(const Objective& block, const std::function<PartialDp()>& compute) {
  const uint64_t hash = sampled_hash(block);
  auto find = [&]() -> Entry* {
    for (Entry& entry : entries_[hash])
      if (same_content(entry.content, block)) return &entry;
    return nullptr;
  };
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const Entry* found = find()) {
      ++hits_;
      return found->dp;
    }
  }
  // Computed outside the lock (two solves may both compute it; either result is the same).
  auto dp = std::make_shared<const PartialDp>(compute());
  std::lock_guard<std::mutex> lock(mutex_);
  if (const Entry* found = find()) return found->dp;
  entries_[hash].push_back({block, dp});
  return dp;
}

std::shared_ptr<const std::vector<double>> BlockTableCache::square(const PartialDp& block, size_t i, size_t c,
                                                                   int threads, size_t& products) {
  std::shared_ptr<const std::vector<double>> below;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Powers& powers = powers_[&block];
    if (i < powers.squares.size()) return powers.squares[i];
  }
  if (i == 0) {
    below = std::make_shared<const std::vector<double>>(block.table);
  } else {
    const std::shared_ptr<const std::vector<double>> half = square(block, i - 1, c, threads, products);
    below = std::make_shared<const std::vector<double>>(min_plus(*half, *half, c, threads));
    ++products;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<const std::vector<double>>>& squares = powers_[&block].squares;
  if (i == squares.size()) squares.push_back(below);
  return i < squares.size() ? squares[i] : below;
}

std::shared_ptr<const std::vector<double>> BlockTableCache::power(const std::shared_ptr<const PartialDp>& block, size_t c,
                                                                 size_t k, int threads,
                                                                 const std::function<void(size_t)>& products) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::map<size_t, std::shared_ptr<const std::vector<double>>>& of = powers_[block.get()].of;
    if (auto at = of.find(k); at != of.end()) {
      ++hits_;
      return at->second;
    }
  }
  // min_plus_power's order: the squares of the set bits, lowest first, each
  // multiplied onto what the lower ones made.
  size_t ran = 0;
  std::shared_ptr<const std::vector<double>> result;
  for (size_t e = k, i = 0; e > 0; e >>= 1, ++i) {
    if (!(e & 1)) continue;
    std::shared_ptr<const std::vector<double>> bit = square(*block, i, c, threads, ran);
    if (result) {
      result = std::make_shared<const std::vector<double>>(min_plus(*result, *bit, c, threads));
      ++ran;
    } else {
      result = bit;
    }
  }
  if (products) products(ran);
  std::lock_guard<std::mutex> lock(mutex_);
  return powers_[block.get()].of.try_emplace(k, result).first->second;
}

size_t BlockTableCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

}  // namespace pase
