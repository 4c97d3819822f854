#include "dp/dp.h"

#include <chrono>
#include <memory>

#include "base/check.h"
#include "dp/dynamic_program.h"

namespace pase {

struct PartialArgmins {
  std::vector<ArgminTable> tables;
};

DpResult solve_dp(const Objective& objective, const EliminationPlan& plan, const std::vector<std::string>& names,
                  const DpOptions& options) {
  const size_t n = objective.vertex_count();
  PASE_ASSERT(plan.order.size() == n && plan.position.size() == n && plan.dependent.size() == n && names.size() == n, n,
              plan.order.size(), plan.position.size(), plan.dependent.size(), names.size());
  const TablePlan sizes = measure_tables(objective, plan, options.threads, options.same_as);
  check_limits(plan, sizes, names, options);
  return run_dp(objective, plan, sizes, options);
}

DpResult run_dp(const Objective& objective, const EliminationPlan& plan, const TablePlan& sizes, const DpOptions& options) {
  auto start = std::chrono::steady_clock::now();
  const size_t n = objective.vertex_count();
  PASE_ASSERT(plan.order.size() == n && sizes.entries.size() == n, n, plan.order.size(), sizes.entries.size());
  PASE_ASSERT(options.same_as.empty() || options.same_as.size() == n, options.same_as.size(), n);
  DpResult result = DynamicProgram(objective, plan, sizes, options.progress, options.same_as).run();
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

PartialDp eliminate_dp(const Objective& objective, const EliminationPlan& plan, const std::vector<std::string>& names,
                       const DpOptions& options, size_t kept) {
  auto start = std::chrono::steady_clock::now();
  const size_t n = objective.vertex_count();
  PASE_ASSERT(plan.order.size() == n && names.size() == n && kept <= n && options.same_as.empty(), n, plan.order.size(),
              names.size(), kept);
  PartialDp result;
  result.kept.assign(plan.order.end() - static_cast<std::ptrdiff_t>(kept), plan.order.end());
  // The kept vertices' tables are never built: the plan's sizes count them,
  // an upper bound of what the kept table itself takes.
  result.sizes = measure_tables(objective, plan, options.threads);
  check_limits(plan, result.sizes, names, options);
  const std::vector<int> no_followers;  // the DP keeps a reference
  DynamicProgram dp(objective, plan, result.sizes, options.progress, no_followers, kept);
  result.table = dp.run_keeping(result.kept);
  result.stats = dp.stats();
  auto argmins = std::make_shared<PartialArgmins>();
  argmins->tables = dp.take_argmins();
  for (const ArgminTable& table : argmins->tables) result.argmin_bytes += table.bytes();
  result.argmins = std::move(argmins);
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void read_back(const PartialDp& partial, const Objective& objective, const EliminationPlan& plan,
               std::vector<int32_t>& choice) {
  const std::vector<ArgminTable>& tables = partial.argmins->tables;
  std::vector<uint64_t> stride;
  for (size_t i = plan.order.size() - partial.kept.size(); i-- > 0;) {
    const int v = plan.order[i];
    const std::vector<int>& scope = plan.dependent[v];
    stride = strides_of(scope, objective);
    uint64_t index = 0;
    for (size_t j = 0; j < scope.size(); ++j) index += static_cast<uint64_t>(choice[scope[j]]) * stride[j];
    PASE_ASSERT(index < partial.sizes.entries[v], v, index, partial.sizes.entries[v]);
    choice[v] = static_cast<int32_t>(tables[static_cast<size_t>(v)].get(index));
  }
}

}  // namespace pase
