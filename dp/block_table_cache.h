#pragma once
// Folded block tables kept across solves (dp/chain_fold.h): solves of
// objectives that share their arrays (the stages of a pipeline, sliced from
// one pricing of the whole graph) meet the same repeated block again and
// again; its table, its transfer powers T^k and the tables of what hangs off
// a run's ends (pendant_split.h) are computed once. A block is known by its
// content, bit for bit: the separators' arrays are built afresh by every
// reduction, so no identity of storage alone would match.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "dp/dp.h"
#include "dp/objective.h"

namespace pase {

class BlockTableCache {
 public:
  /// The block's partial DP, computed by `compute` the first time.
  [[nodiscard]] std::shared_ptr<const PartialDp> block(const Objective& block, const std::function<PartialDp()>& compute);
  /// T^k of the C x C table of `block` (what block() returned), by squaring
  /// exactly as min_plus_power does (the same products in the same order, so
  /// the same bits), its squares T^(2^i) kept: once they exist a power takes
  /// one product per set bit of k but the lowest. `products` is told how
  /// many products this call ran.
  [[nodiscard]] std::shared_ptr<const std::vector<double>> power(const std::shared_ptr<const PartialDp>& block, size_t c,
                                                                 size_t k, int threads,
                                                                 const std::function<void(size_t)>& products);
  [[nodiscard]] size_t hits() const;

 private:
  struct Entry {
    Objective content;  // shares the block's arrays: equal storage is equal content, and is kept alive
    std::shared_ptr<const PartialDp> dp;
  };
  struct Powers {
    std::vector<std::shared_ptr<const std::vector<double>>> squares;  // T^(2^i)
    std::map<size_t, std::shared_ptr<const std::vector<double>>> of;  // T^k
  };
  [[nodiscard]] std::shared_ptr<const std::vector<double>> square(const PartialDp& block, size_t i, size_t c,
                                                                  int threads, size_t& products);
  mutable std::mutex mutex_;
  std::map<uint64_t, std::list<Entry>> entries_;  // by a hash of sampled content (block_table_cache.cc)
  std::map<const PartialDp*, Powers> powers_;     // by the cached block (kept alive by its entry)
  size_t hits_ = 0;
};

}  // namespace pase
