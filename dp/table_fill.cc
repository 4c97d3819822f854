#include "dp/table_fill.h"

#include <algorithm>

#include "dp/row_minimum.h"

namespace pase {

TableFill::TableFill(const TableJob& job, double* out_cost, uint32_t* out_arg)
    : job_(job), out_cost_(out_cost), out_arg_(out_arg), k_(job.radix.size()), fast_(k_ ? k_ - 1 : 0),
      run_(k_ ? job.radix[fast_] : 1) {
  sort_factors();
  const size_t configs = job_.configs;
  const uint64_t inner_factors = 1 + inner_edges_.size() + inner_reads_.size();
  chunk_ = std::max<uint64_t>(1, std::min<uint64_t>(run_, (uint64_t{1} << 16) / (configs * inner_factors)));
  chunks_per_run_ = (run_ + chunk_ - 1) / chunk_;
  items_ = job_.entries / run_ * chunks_per_run_;
  // Items of at least kGrainSteps inner steps: small tables are filled on
  // one thread, and large ones are not cut finer than scheduling pays for.
  grain_ = std::max<uint64_t>(1, kGrainSteps / (chunk_ * configs * inner_factors));
}

void TableFill::fill(const tbb::blocked_range<uint64_t>& range, FillScratch& scratch) const {
  for (uint64_t item = range.begin(); item != range.end(); ++item) {
    const uint64_t outer = item / chunks_per_run_;
    const uint64_t first = (item % chunks_per_run_) * chunk_, last = std::min(run_, first + chunk_);
    start_run(outer, scratch);
    sweep_fast_digit(outer, first, last, scratch);
  }
}

void TableFill::sort_factors() {
  for (const TableJob::Edge& edge : job_.edges)
    (k_ && static_cast<size_t>(edge.scope_index) == fast_ ? inner_edges_ : outer_edges_).push_back(&edge);
  for (const MessageRead* read : job_.reads) {
    uint64_t fast_stride = 0;
    for (const auto& [index, message_stride] : read->terms)
      if (k_ && static_cast<size_t>(index) == fast_) fast_stride = message_stride;
    (fast_stride ? inner_reads_ : outer_reads_).emplace_back(read, fast_stride);
  }
}

void TableFill::start_run(uint64_t outer, FillScratch& scratch) const {
  const size_t configs = job_.configs;
  std::vector<uint64_t>& digit = scratch.digit;
  std::vector<double>& base = scratch.base;
  uint64_t rest = outer * run_;
  for (size_t i = 0; i < k_; ++i) {
    digit[i] = rest / job_.stride[i];
    rest %= job_.stride[i];
  }
  std::copy(job_.own, job_.own + configs, base.begin());
  for (const TableJob::Edge* edge : outer_edges_) {
    const double* row = edge->row[digit[edge->scope_index]];
    for (size_t s = 0; s < configs; ++s) base[s] += row[s];
  }
  for (const auto& [read, unused] : outer_reads_) {
    uint64_t offset = 0;
    for (const auto& [index, message_stride] : read->terms) offset += digit[index] * message_stride;
    const double* row = read->cost + offset;
    for (size_t s = 0; s < configs; ++s) base[s] += row[s];
  }
  for (size_t m = 0; m < inner_reads_.size(); ++m) {
    scratch.inner_offset[m] = 0;
    for (const auto& [index, message_stride] : inner_reads_[m].first->terms)
      if (static_cast<size_t>(index) != fast_) scratch.inner_offset[m] += digit[index] * message_stride;
  }
}

void TableFill::sweep_fast_digit(uint64_t outer, uint64_t first, uint64_t last, FillScratch& scratch) const {
  const size_t configs = job_.configs;
  const double* base = scratch.base.data();
  double* acc = scratch.acc.data();
  double* out_cost = out_cost_ + outer * run_;
  uint32_t* out_arg = out_arg_ + outer * run_;
  std::vector<const double*>& rows = scratch.rows;
  for (uint64_t d = first; d < last; ++d) {
    rows.clear();
    for (const TableJob::Edge* edge : inner_edges_) rows.push_back(edge->row[d]);
    for (size_t m = 0; m < inner_reads_.size(); ++m)
      rows.push_back(inner_reads_[m].first->cost + scratch.inner_offset[m] + d * inner_reads_[m].second);
    auto [best_cost, best] = min_of_sum(base, rows.data(), rows.size(), acc, configs);
    out_cost[d] = best_cost;
    out_arg[d] = static_cast<uint32_t>(best);
  }
}

}  // namespace pase
