#include "dp/table_job.h"

#include <map>
#include <unordered_map>

#include "base/checked_math.h"

namespace pase {
namespace {

// Numbers the distinct combinations of classes that w's configurations take
// on v's edges to w (`mine`), in order of first appearance: map[c] is the
// number of configuration c's combination. Returns a configuration of each
// combination. A combination is packed into one integer (mixed radix over the
// edges' class counts); a dense lookup serves when that space is small.
std::vector<size_t> number_class_combinations(const std::vector<const EdgeRows*>& mine, size_t configs,
                                              size_t w_configs, std::vector<int32_t>& map) {
  uint64_t key_space = 1;
  for (const EdgeRows* edge : mine) key_space = saturating_mul(key_space, edge->rows.size() / configs);
  map.resize(w_configs);
  std::vector<size_t> representative;
  std::vector<int32_t> dense(key_space <= 4 * w_configs ? key_space : 0, -1);
  std::unordered_map<uint64_t, int32_t> sparse;
  std::map<std::vector<int32_t>, int32_t> by_tuple;  // only if packed keys would overflow
  std::vector<int32_t> tuple(mine.size());
  for (size_t c = 0; c < w_configs; ++c) {
    uint64_t key = 0;
    for (size_t j = 0; j < mine.size(); ++j) {
      tuple[j] = (*mine[j]->w_class)[c];
      key = key * (mine[j]->rows.size() / configs) + static_cast<uint64_t>(tuple[j]);
    }
    int32_t next = static_cast<int32_t>(representative.size());
    int32_t& slot = key_space == kSaturated ? by_tuple.try_emplace(tuple, -1).first->second
                    : dense.empty()         ? sparse.try_emplace(key, -1).first->second
                                            : dense[key];
    if (slot < 0) {
      slot = next;
      representative.push_back(c);
    }
    map[c] = slot;
  }
  return representative;
}

}  // namespace

TableJob plan_job(const Objective& objective, const std::vector<int>& scope, size_t configs, const double* own,
                  const std::vector<EdgeRows>& edges, const std::vector<MessageRead>& reads) {
  TableJob job;
  job.configs = configs;
  job.own = own;
  const size_t k = scope.size();
  std::vector<char> read_by_message(k, 0);
  for (const MessageRead& read : reads) {
    job.reads.push_back(&read);
    for (const auto& term : read.terms) read_by_message[term.first] = 1;
  }
  job.radix.resize(k);
  job.virtual_of.resize(k);
  std::vector<std::vector<size_t>> representative(k);  // virtual digit -> a configuration of w
  for (size_t i = 0; i < k; ++i) {
    size_t w_configs = objective.config_count(scope[i]);
    if (read_by_message[i]) {
      job.radix[i] = w_configs;
      continue;
    }
    std::vector<const EdgeRows*> mine;
    for (const EdgeRows& edge : edges)
      if (static_cast<size_t>(edge.scope_index) == i) mine.push_back(&edge);
    representative[i] = number_class_combinations(mine, configs, w_configs, job.virtual_of[i]);
    job.radix[i] = representative[i].size();
  }
  job.stride.assign(k, 1);
  for (size_t i = k; i-- > 0;) {
    job.stride[i] = job.entries;
    job.entries *= job.radix[i];
  }
  for (const EdgeRows& edge : edges) {
    TableJob::Edge e;
    e.scope_index = edge.scope_index;
    size_t i = static_cast<size_t>(edge.scope_index);
    for (uint64_t digit = 0; digit < job.radix[i]; ++digit) {
      size_t config = job.virtual_of[i].empty() ? digit : representative[i][digit];
      e.row.push_back(edge.rows.data() + static_cast<size_t>((*edge.w_class)[config]) * configs);
    }
    job.edges.push_back(std::move(e));
  }
  return job;
}

}  // namespace pase
