#include "dp/table_expansion.h"

namespace pase {

void TableExpansion::operator()(const tbb::blocked_range<uint64_t>& range) const {
  if (!compacted_) {
    for (uint64_t alpha = range.begin(); alpha != range.end(); ++alpha) out_argmin_.set(alpha, compact_arg_[alpha]);
    return;
  }
  std::vector<uint64_t> digit(scope_.size());
  uint64_t rest = range.begin();
  for (size_t i = 0; i < scope_.size(); ++i) {
    digit[i] = rest / stride_[i];
    rest %= stride_[i];
  }
  for (uint64_t alpha = range.begin(); alpha != range.end(); ++alpha) {
    uint64_t compact = 0;
    for (size_t i = 0; i < scope_.size(); ++i)
      compact += (job_.virtual_of[i].empty() ? digit[i] : static_cast<uint64_t>(job_.virtual_of[i][digit[i]])) * job_.stride[i];
    out_cost_[alpha] = compact_cost_[compact];
    out_argmin_.set(alpha, compact_arg_[compact]);
    for (size_t i = scope_.size(); i-- > 0;) {  // odometer, last digit fastest
      if (++digit[i] < objective_.config_count(scope_[i])) break;
      digit[i] = 0;
    }
  }
}

}  // namespace pase
