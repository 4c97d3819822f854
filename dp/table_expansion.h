#pragma once
// Expanding a table computed over class combinations to every assignment of
// the dependent set (internal to the dp library).
#include <cstdint>
#include <vector>

#include <tbb/blocked_range.h>

#include "dp/objective.h"
#include "dp/table_job.h"
#include "dp/table_storage.h"

namespace pase {

// Writes v's full table from the compact one the fill produced: each
// assignment of D(v) takes the entry of its class combination, and the
// argmins go into their narrow table.
class TableExpansion {
 public:
  // `compacted` false: the fill wrote the costs in place, only argmins move.
  TableExpansion(const Objective& objective, const std::vector<int>& scope, const std::vector<uint64_t>& stride,
                 const TableJob& job, bool compacted, const double* compact_cost, const uint32_t* compact_arg,
                 double* out_cost, ArgminTable& out_argmin)
      : objective_(objective), scope_(scope), stride_(stride), job_(job), compacted_(compacted),
        compact_cost_(compact_cost), compact_arg_(compact_arg), out_cost_(out_cost), out_argmin_(out_argmin) {}

  void operator()(const tbb::blocked_range<uint64_t>& range) const;

 private:
  const Objective& objective_;
  const std::vector<int>& scope_;
  const std::vector<uint64_t>& stride_;
  const TableJob& job_;
  bool compacted_;
  const double* compact_cost_;
  const uint32_t* compact_arg_;
  double* out_cost_;
  ArgminTable& out_argmin_;
};

}  // namespace pase
