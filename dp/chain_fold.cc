#include "dp/chain_fold.h"

#include "dp/block_table_cache.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>

#include "base/check.h"
#include "base/checked_math.h"
#include "dp/chain_reduction.h"
#include "dp/fold.h"
#include "dp/min_plus.h"
#include "dp/pendant_split.h"

namespace pase {

// What a chained solve runs, decided by plan_chain: per run (outermost
// first), its fold and the order of its one block's DP; for what is left
// after the last run, its order and the DP's own folding.
struct ChainParts {
  ChainFold fold;
  EliminationPlan block_plan;  // over reduce()'s block objective, its two separators last
  uint64_t block_tables = 0;   // the block's tables the progress counts (all but the separators)
  uint64_t chain_bytes = 0;    // T, M, the squares, and the back-substitution's argmins
  uint64_t product_work = 0;   // C^3 per min-plus product
  uint64_t back_work = 0;      // C^2 per block of back-substitution
  std::shared_ptr<const ChainParts> inner;  // the reduced objective folds again, or else:
  EliminationPlan rest_plan;
  std::vector<int> rest_same_as;
  TablePlan rest_sizes;
  // The rest's order kind: with a block cache, what hangs off the run's two
  // separators is split off at run time with it (hanging_splits), only then.
  OrderKind rest_order = OrderKind::MinDegree;
};

namespace {

// The progress of a chained solve as one DP's: its parts (the block's DP,
// the min-plus products, the rest's DP, back-substitution) run one after
// another, each counted from where the ones before left off, against the
// totals the sizing pass planned.
class ChainProgress {
 public:
  ChainProgress(std::function<void(const DpProgress&)> report, uint64_t tables, uint64_t work)
      : report_(std::move(report)) {
    done_.tables = tables;
    done_.work = work;
  }

  // The callback for a DP part: its own counts, on top of the parts before
  // (a part's counts are capped at its plan: a folded DP's copied tables
  // report more steps than it planned).
  [[nodiscard]] std::function<void(const DpProgress&)> part() {
    if (!report_) return {};
    return [this](const DpProgress& local) {
      DpProgress now = done_;
      now.tables_done += std::min(local.tables_done, local.tables);
      now.work_done += std::min(local.work_done, local.work);
      send(now);
    };
  }
  // A part finished: `tables` tables and `work` steps of the plan.
  void finish(uint64_t tables, uint64_t work) {
    done_.tables_done += tables;
    done_.work_done = saturating_add(done_.work_done, work);
    if (report_) send(done_);
  }

 private:
  void send(DpProgress now) const {
    now.tables_done = std::min(now.tables_done, now.tables);
    now.work_done = std::min(now.work_done, now.work);
    report_(now);
  }

  std::function<void(const DpProgress&)> report_;
  DpProgress done_;
};

// Sizes of one DP, moved onto the objective's vertices (`to_objective`: per
// vertex of the DP's objective, the objective's vertex or -1).
void add_tables(TablePlan& into, const TablePlan& part, const std::vector<int>& to_objective) {
  for (size_t v = 0; v < part.entries.size(); ++v)
    if (to_objective[v] >= 0) into.entries[static_cast<size_t>(to_objective[v])] = part.entries[v];
  into.total_entries = saturating_add(into.total_entries, part.total_entries);
  into.table_bytes = saturating_add(into.table_bytes, part.table_bytes);
  into.working_bytes = std::max(into.working_bytes, part.working_bytes);
  into.total_work = saturating_add(into.total_work, part.total_work);
  into.threads = std::max(into.threads, part.threads);
  if (part.largest_vertex >= 0 && to_objective[static_cast<size_t>(part.largest_vertex)] >= 0 &&
      (into.largest_vertex < 0 || part.entries[static_cast<size_t>(part.largest_vertex)] > into.entries[static_cast<size_t>(into.largest_vertex)]))
    into.largest_vertex = to_objective[static_cast<size_t>(part.largest_vertex)];
}

// Per vertex of the block objective: the objective's vertex (block one of
// the run), or -1 for the two separators.
std::vector<int> block_to_objective(const Reduction& r) {
  std::vector<int> to(r.block_vertex.size(), -1);
  for (size_t v = 0; v < r.block_vertex.size(); ++v)
    if (r.block_vertex[v] >= 0) to[v] = static_cast<int>(r.fold.first) + r.block_vertex[v];
  return to;
}

// Per vertex of the reduced objective: the objective's vertex (a separator:
// its first member).
std::vector<int> reduced_to_objective(const Reduction& r) {
  std::vector<int> to = r.reduced_vertex;
  to[static_cast<size_t>(r.z0)] = r.before.members.front();
  to[static_cast<size_t>(r.zk)] = r.last.members.front();
  return to;
}

// The run's report, its separator named by the first block's vertices.
ChainReport chain_report(const Reduction& r) {
  ChainReport report;
  report.fold = r.fold;
  report.separator_vertices = r.last.members;
  for (int& v : report.separator_vertices) v -= static_cast<int>((r.fold.blocks - 1) * r.fold.period);
  return report;
}

// The one block's DP, then T^k: their sizes, work and progress steps.
// Returns the block DP's table entries.
uint64_t plan_block_and_run(ChainParts& parts, PlannedChain& out, const Reduction& r, int threads) {
  parts.block_plan = min_degree_keeping_last(undirected_neighbours(r.block.objective),
                                             r.block.objective.config_counts(), {r.z_in, r.z_out});
  parts.block_tables = r.block.objective.vertex_count() - 2;  // all but the two separators
  const TablePlan block_sizes = measure_tables(r.block.objective, parts.block_plan, threads);
  add_tables(out.tables, block_sizes, block_to_objective(r));
  const uint64_t c = r.last.configs, k = r.fold.blocks;
  // T, M and the squares (four C × C), and at back-substitution an argmin per
  // block and separator configuration.
  parts.chain_bytes = 4 * c * c * sizeof(double) + k * c * sizeof(int32_t) + 2 * c * sizeof(double);
  out.tables.table_bytes = saturating_add(out.tables.table_bytes, parts.chain_bytes);
  out.tables.total_entries = saturating_add(out.tables.total_entries, c * c);
  // Each product C^3 steps, back-substitution C^2 per block; each product
  // and back-substitution count as a table in the progress.
  parts.product_work = c * c * c;
  parts.back_work = k * c * c;
  out.tables.total_work = saturating_add(out.tables.total_work, products_for(k) * parts.product_work + parts.back_work);
  out.progress_tables = parts.block_tables + products_for(k) + 1;
  return block_sizes.total_entries;
}

// What is left after the run: the DP over `order` with its own folding.
void plan_rest(ChainParts& parts, PlannedChain& out, const Reduction& r, OrderKind order, int threads) {
  const Objective& small = r.reduced.objective;
  parts.rest_plan = make_plan(undirected_neighbours(small), order, small.config_counts());
  if (std::optional<Folding> folding = find_folding(small, parts.rest_plan)) parts.rest_same_as = std::move(folding->same_as);
  parts.rest_sizes = measure_tables(small, parts.rest_plan, threads, parts.rest_same_as);
  parts.rest_order = order;
  add_tables(out.tables, parts.rest_sizes, reduced_to_objective(r));
  out.progress_tables += small.vertex_count();
}

// The totals of every part: bytes at once, and the vertex reports name.
void finish_tables(TablePlan& tables) {
  tables.total_bytes = saturating_add(tables.table_bytes, tables.working_bytes);
  // Reports name the largest table's vertex: one of the objective's, even
  // when the largest is a separator's (kept, so never built).
  if (tables.largest_vertex < 0)
    tables.largest_vertex =
        static_cast<int>(std::max_element(tables.entries.begin(), tables.entries.end()) - tables.entries.begin());
}

// The separators' configurations along the run, from its two ends': f(j)(s) =
// min over s' of f(j-1)(s') + T[s'][s], back from the last. separator[j] is
// the separator before block j (j = k: the last block's own).
std::vector<int32_t> chain_separators(const std::vector<double>& t, size_t c, size_t k, size_t s0, int32_t sk) {
  std::vector<int32_t> separator(k + 1);
  separator[0] = static_cast<int32_t>(s0);
  std::vector<double> f(t.begin() + static_cast<std::ptrdiff_t>(s0 * c), t.begin() + static_cast<std::ptrdiff_t>(s0 * c + c));
  std::vector<double> next(c);
  std::vector<int32_t> argmin(k * c, static_cast<int32_t>(s0));  // per block j >= 1: the best separator before it
  for (size_t j = 1; j < k; ++j) {
    std::fill(next.begin(), next.end(), std::numeric_limits<double>::infinity());
    int32_t* arg = argmin.data() + j * c;
    for (size_t from = 0; from < c; ++from) {
      const double x = f[from];
      const double* row = t.data() + from * c;
      for (size_t to = 0; to < c; ++to)
        if (x + row[to] < next[to]) next[to] = x + row[to], arg[to] = static_cast<int32_t>(from);
    }
    f.swap(next);
  }
  separator[k] = sk;
  for (size_t j = k; j-- > 1;) separator[j] = argmin[j * c + static_cast<size_t>(separator[j + 1])];
  return separator;
}

// The whole strategy from the rest's and the block's: the reduced objective's
// vertices, the separators along the run, and each block's inner vertices
// read from the one block's argmins with its two separators fixed.
std::vector<int32_t> read_back_chain(const Reduction& r, const PartialDp& block, const EliminationPlan& block_plan,
                                     const std::vector<int32_t>& rest, size_t n) {
  const ChainFold& fold = r.fold;
  std::vector<int32_t> choice(n, 0);
  for (size_t v = 0; v < r.reduced_vertex.size(); ++v)
    if (r.reduced_vertex[v] >= 0) choice[static_cast<size_t>(r.reduced_vertex[v])] = rest[v];
  const size_t s0 = static_cast<size_t>(rest[static_cast<size_t>(r.z0)]);
  for (size_t i = 0; i < r.before.members.size(); ++i) choice[static_cast<size_t>(r.before.members[i])] = r.before.digit(s0, i);
  const std::vector<int32_t> separator =
      chain_separators(block.table, r.last.configs, fold.blocks, s0, rest[static_cast<size_t>(r.zk)]);
  std::vector<int32_t> inner(r.block.objective.vertex_count(), 0);
  for (size_t j = 0; j < fold.blocks; ++j) {
    inner[static_cast<size_t>(r.z_in)] = separator[j];
    inner[static_cast<size_t>(r.z_out)] = separator[j + 1];
    read_back(block, r.block.objective, block_plan, inner);
    const size_t base = fold.first + j * fold.period;
    for (size_t v = 0; v < r.block_vertex.size(); ++v)
      if (r.block_vertex[v] >= 0) choice[base + static_cast<size_t>(r.block_vertex[v])] = inner[v];
    for (size_t i = 0; i < fold.separator.size(); ++i)
      choice[base + static_cast<size_t>(fold.separator[i])] = r.last.digit(static_cast<size_t>(separator[j + 1]), i);
  }
  return choice;
}

// What hangs off the run's first separator in the rest, then off its last
// (pendant_split.h; the second split over what the first leaves): with a
// block cache they are eliminated on their own and their tables kept, as a
// run's block is (a pipeline stage's first block and last half block, the
// same in every stage).
std::vector<PendantSplit> hanging_splits(const Reduction& r, OrderKind order) {
  const Objective& small = r.reduced.objective;
  std::vector<PendantSplit> splits;
  if (std::optional<PendantSplit> head = split_pendant(small, r.z0, r.zk, order)) splits.push_back(std::move(*head));
  const Objective left = splits.empty() ? small : rest_objective(small, splits[0], std::vector<double>(r.before.configs, 0.0));
  auto at = [&](int v) {
    if (splits.empty()) return v;
    const std::vector<int>& kept = splits[0].rest;
    return static_cast<int>(std::find(kept.begin(), kept.end(), v) - kept.begin());
  };
  if (std::optional<PendantSplit> tail = split_pendant(left, at(r.zk), at(r.z0), order)) splits.push_back(std::move(*tail));
  return splits;
}

// The rest's DP in parts: what hangs off the run's first separator, then
// what hangs off its last (each table from the cache, or computed and kept
// there), then what is left with those tables added to the separators'
// costs. The same optimum as the rest's DP, up to the order of summation.
DpResult solve_hanging(const std::vector<PendantSplit>& splits, size_t i, const Objective& objective,
                       const std::vector<std::string>& names, const DpOptions& options) {
  const PendantSplit& split = splits[i];
  const Objective pendant = pendant_objective(objective, split);
  std::vector<std::string> pendant_names;
  for (int v : split.pendant) pendant_names.push_back(names[static_cast<size_t>(v)]);
  pendant_names.push_back(names[static_cast<size_t>(split.root)]);
  const std::shared_ptr<const PartialDp> hanging = options.block_tables->block(
      pendant, [&] { return eliminate_dp(pendant, split.pendant_plan, pendant_names, options, 1); });
  const Objective rest = rest_objective(objective, split, hanging->table);
  std::vector<std::string> rest_names;
  for (int v : split.rest) rest_names.push_back(names[static_cast<size_t>(v)]);
  const DpResult left = i + 1 < splits.size() ? solve_hanging(splits, i + 1, rest, rest_names, options)
                                              : solve_dp(rest, split.rest_plan, rest_names, options);
  DpResult result;
  result.cost = left.cost;
  result.choice.assign(objective.vertex_count(), 0);
  for (size_t j = 0; j < split.rest.size(); ++j) result.choice[static_cast<size_t>(split.rest[j])] = left.choice[j];
  std::vector<int32_t> inner(split.pendant.size() + 1, 0);
  inner.back() = left.choice[static_cast<size_t>(split.rest_root)];
  read_back(*hanging, pendant, split.pendant_plan, inner);
  for (size_t j = 0; j < split.pendant.size(); ++j) result.choice[static_cast<size_t>(split.pendant[j])] = inner[j];
  result.stats = left.stats;
  result.stats.max_dependent_set = std::max(left.stats.max_dependent_set, hanging->stats.max_dependent_set);
  result.stats.peak_table_bytes = std::max(left.stats.peak_table_bytes, hanging->stats.peak_table_bytes) + hanging->argmin_bytes;
  return result;
}

// Runs one level of a planned chain on `objective` (its run's block, T^k,
// what is left, back-substitution), the levels inside it recursively.
DpResult run_parts(const ChainParts& parts, const Objective& objective, const std::vector<std::string>& names,
                   const DpOptions& options, ChainProgress& progress) {
  Reduction r = reduce(objective, names, parts.fold);
  const size_t c = r.last.configs, k = parts.fold.blocks;
  PASE_ASSERT(r.before.configs == c, r.before.configs, c);  // validated: the same edges, so the same configurations
  DpOptions block_options = options;
  block_options.same_as.clear();
  block_options.progress = progress.part();
  auto compute_block = [&] { return eliminate_dp(r.block.objective, parts.block_plan, r.block.names, block_options, 2); };
  const std::shared_ptr<const PartialDp> kept =
      options.block_tables ? options.block_tables->block(r.block.objective, compute_block)
                           : std::make_shared<const PartialDp>(compute_block());
  const PartialDp& block = *kept;
  progress.finish(parts.block_tables, block.sizes.total_work);
  if (options.block_tables) {
    r.reduced.objective.pairs[r.run_edge].cost = options.block_tables->power(
        kept, c, k, options.threads, [&](size_t products) {
          for (size_t p = 0; p < products; ++p) progress.finish(1, parts.product_work);
        });
  } else {
    r.reduced.objective.pairs[r.run_edge].cost = std::make_shared<const std::vector<double>>(
        min_plus_power(block.table, c, k, options.threads, [&] { progress.finish(1, parts.product_work); }));
  }
  DpResult rest;
  if (parts.inner) {
    rest = run_parts(*parts.inner, r.reduced.objective, r.reduced.names, options, progress);
  } else if (const std::vector<PendantSplit> splits = options.block_tables ? hanging_splits(r, parts.rest_order)
                                                                           : std::vector<PendantSplit>{};
             !splits.empty()) {
    DpOptions part = options;
    part.same_as.clear();
    part.progress = {};
    rest = solve_hanging(splits, 0, r.reduced.objective, r.reduced.names, part);
    progress.finish(r.reduced.objective.vertex_count(), parts.rest_sizes.total_work);
  } else {
    DpOptions dp = options;
    dp.same_as = parts.rest_same_as;
    dp.progress = progress.part();
    rest = run_dp(r.reduced.objective, parts.rest_plan, parts.rest_sizes, dp);
    progress.finish(r.reduced.objective.vertex_count(), parts.rest_sizes.total_work);
  }
  DpResult result;
  result.cost = rest.cost;
  result.choice = read_back_chain(r, block, parts.block_plan, rest.choice, objective.vertex_count());
  progress.finish(1, parts.back_work);
  result.stats = rest.stats;
  result.stats.max_dependent_set = std::max(rest.stats.max_dependent_set, block.stats.max_dependent_set);
  // The block's argmins stay while the rest is solved.
  result.stats.peak_table_bytes =
      std::max(block.stats.peak_table_bytes, block.argmin_bytes + parts.chain_bytes + rest.stats.peak_table_bytes);
  return result;
}

}  // namespace

std::optional<PlannedChain> plan_chain(const Objective& objective, const std::vector<std::string>& names,
                                       OrderKind order, int threads) {
  const std::optional<ChainFold> fold = find_chain(objective);
  if (!fold) return std::nullopt;
  const Reduction r = reduce(objective, names, *fold);
  PASE_ASSERT(r.before.configs == r.last.configs, r.before.configs, r.last.configs);
  auto parts = std::make_shared<ChainParts>();
  parts->fold = *fold;
  PlannedChain out;
  out.tables.entries.assign(objective.vertex_count(), 0);
  ChainReport report = chain_report(r);
  report.block_entries = plan_block_and_run(*parts, out, r, threads);
  out.folds.push_back(report);
  if (std::optional<PlannedChain> inner = plan_chain(r.reduced.objective, r.reduced.names, order, threads)) {
    const std::vector<int> to_objective = reduced_to_objective(r);
    add_tables(out.tables, inner->tables, to_objective);
    out.progress_tables += inner->progress_tables;
    for (ChainReport& nested : inner->folds) {
      nested.fold.first = static_cast<size_t>(to_objective[nested.fold.first]);
      for (int& v : nested.separator_vertices) v = to_objective[static_cast<size_t>(v)];
      out.folds.push_back(nested);
    }
    parts->inner = inner->parts;
  } else {
    plan_rest(*parts, out, r, order, threads);
  }
  finish_tables(out.tables);
  out.parts = std::move(parts);
  return out;
}

std::optional<LimitError> chain_limit_error(const PlannedChain& planned, const std::vector<std::string>& names,
                                            const DpOptions& options) {
  // As limit_error does a DP's: the sum of the parts, the min-plus products
  // and T, T^k and their squares included.
  const TablePlan& sizes = planned.tables;
  auto text = [](uint64_t x) { return x == kSaturated ? std::string("more than 2^64") : std::to_string(x); };
  const size_t v = static_cast<size_t>(sizes.largest_vertex);
  const std::string largest = "'" + names[v] + "' with " + text(sizes.entries[v]) + " entries";
  if (sizes.total_bytes > options.max_table_bytes)
    return LimitError({"max_table_bytes", "the table byte limit",
                      "the DP tables would need " + text(sizes.total_bytes) + " bytes (" + text(sizes.working_bytes) +
                          " of them working buffers; folded: a block's, its transfer tables and the rest's), above the limit of " +
                          std::to_string(options.max_table_bytes) + " (",
                      "); the largest is vertex " + largest});
  if (sizes.total_work > options.max_work)
    return LimitError({"max_work", "the work limit",
                      "the DP would take " + text(sizes.total_work) +
                          " steps (table entries x configurations; folded: C^3 per min-plus product of transfer tables), "
                          "above the limit of " + std::to_string(options.max_work) + " (",
                      "; about 10^9 steps per second per core); the largest table is vertex " + largest});
  return std::nullopt;
}

DpResult run_chain(const PlannedChain& planned, const Objective& objective, const std::vector<std::string>& names,
                   const DpOptions& options) {
  ChainProgress progress(options.progress, planned.progress_tables, planned.tables.total_work);
  DpResult result = run_parts(*planned.parts, objective, names, options, progress);
  result.stats.table_entries = planned.tables.total_entries;
  return result;
}

std::optional<ChainSolution> solve_chained(const Objective& objective, const std::vector<std::string>& names,
                                           const DpOptions& options, OrderKind order, bool run) {
  // Planned first, whole: the limits and the progress line are over every
  // part, and nothing is computed for a solve that would be refused.
  std::optional<PlannedChain> planned = plan_chain(objective, names, order, options.threads);
  if (!planned) return std::nullopt;
  ChainSolution out;
  if (run) {
    if (std::optional<LimitError> error = chain_limit_error(*planned, names, options)) throw *error;
    out.result = run_chain(*planned, objective, names, options);
  }
  out.tables = std::move(planned->tables);
  out.folds = std::move(planned->folds);
  out.progress_tables = planned->progress_tables;
  return out;
}

}  // namespace pase
