#pragma once
// Folded block tables kept across solves (dp/chain_fold.h): solves of
// objectives that share their arrays (the stages of a pipeline, sliced from
// one pricing of the whole graph) meet the same repeated block again and
// again; its table and its transfer powers T^k are computed once. A block is
// known by the identity of its arrays (their storage, which an entry keeps
// alive, so no address is reused while it is cached), not by their values.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "dp/dp.h"
#include "dp/objective.h"

namespace pase {

class BlockTableCache {
 public:
  /// The block's partial DP, computed by `compute` the first time.
  [[nodiscard]] std::shared_ptr<const PartialDp> block(const Objective& block, const std::function<PartialDp()>& compute);
  /// T^k of the block's transfer table, computed by `compute` the first time.
  [[nodiscard]] std::shared_ptr<const std::vector<double>> power(const Objective& block, size_t k,
                                                                 const std::function<std::vector<double>()>& compute);
  [[nodiscard]] size_t hits() const;

 private:
  using Key = std::vector<uint64_t>;
  struct Entry {
    std::shared_ptr<const PartialDp> dp;
    std::map<size_t, std::shared_ptr<const std::vector<double>>> powers;
  };
  Entry& entry(const Objective& block);  // with mutex_ held
  mutable std::mutex mutex_;
  std::map<Key, Entry> entries_;
  size_t hits_ = 0;
};

}  // namespace pase
