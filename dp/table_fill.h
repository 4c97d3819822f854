#pragma once
// Filling one vertex's table (internal to the dp library): for every entry,
// the cheapest configuration of the vertex given its dependent set, over the
// job's (virtual) entries, in items that threads share.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>

#include "dp/table_job.h"

namespace pase {

// A fill is cut into items of at least this many inner steps.
inline constexpr uint64_t kGrainSteps = uint64_t{1} << 16;

// A thread's buffers for filling tables, sized once for the largest vertex
// (most configurations, members of D(v), factors) so they never grow.
struct FillScratch {
  FillScratch(size_t configs, size_t members, size_t factors)
      : base(configs), acc(configs), digit(members), inner_offset(factors) {
    rows.reserve(factors);
  }
  // What one costs: counted in the peak, and per thread in the plan's bound.
  static uint64_t bytes(size_t configs, size_t members, size_t factors) {
    return 2 * configs * sizeof(double) + members * sizeof(uint64_t) + factors * (sizeof(uint64_t) + sizeof(const double*));
  }

  std::vector<double> base, acc;
  std::vector<uint64_t> digit, inner_offset;
  std::vector<const double*> rows;
};

// Fills cost/argmin over a job's (virtual) entries. The last member of D(v)
// changes fastest; the factors that do not read it are summed once per run
// into `base`, and the sweep over the fast digit adds only the others. The
// work is cut into items: a chunk of one run of the fast digit.
class TableFill {
 public:
  TableFill(const TableJob& job, double* out_cost, uint32_t* out_arg);

  [[nodiscard]] uint64_t items() const { return items_; }
  [[nodiscard]] uint64_t grain() const { return grain_; }

  // Fills the items of `range` (on the calling thread, with its scratch).
  void fill(const tbb::blocked_range<uint64_t>& range, FillScratch& scratch) const;

 private:
  // Splits edges and waiting tables by whether they read the fast digit.
  void sort_factors();

  // Digits of run `outer`; base = own cost + the factors constant over the
  // run; the offsets of the waiting tables that the sweep reads.
  void start_run(uint64_t outer, FillScratch& scratch) const;

  // The entries first..last of run `outer`: each the minimum over v's
  // configurations of base plus the rows that read the fast digit.
  void sweep_fast_digit(uint64_t outer, uint64_t first, uint64_t last, FillScratch& scratch) const;

  const TableJob& job_;
  double* out_cost_;
  uint32_t* out_arg_;
  size_t k_, fast_;
  uint64_t run_;
  std::vector<const TableJob::Edge*> outer_edges_, inner_edges_;
  std::vector<std::pair<const MessageRead*, uint64_t>> outer_reads_, inner_reads_;  // (read, stride of the fast digit)
  uint64_t chunk_ = 1, chunks_per_run_ = 1, items_ = 0, grain_ = 1;
};

}  // namespace pase
