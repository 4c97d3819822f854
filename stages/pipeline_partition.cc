#include "stages/pipeline_partition.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pase {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every stage's value, asked once: values[(k * P1 + i) * P1 + j].
struct ValueTable {
  int p1 = 0, stages = 0;
  std::vector<std::optional<StageValue>> values;
  [[nodiscard]] const std::optional<StageValue>& at(int k, int i, int j) const {
    return values[(static_cast<size_t>(k) * p1 + i) * p1 + j];
  }
};

ValueTable ask_values(const PartitionProblem& problem) {
  ValueTable table;
  table.p1 = problem.positions + 1;
  table.stages = problem.stages;
  table.values.resize(static_cast<size_t>(problem.stages) * table.p1 * table.p1);
  const int p = problem.positions, s = problem.stages;
  for (int k = 0; k < s; ++k)
    for (int i = k; i + (s - k) <= p; ++i)  // room for k stages before, s - k - 1 after
      for (int j = i + 1; j + (s - k - 1) <= p; ++j) {
        if (k == 0 && i != 0) continue;
        if (k == s - 1 && j != p) continue;
        table.values[(static_cast<size_t>(k) * table.p1 + i) * table.p1 + j] = problem.value(k, i, j);
      }
  return table;
}

// A partial partition: its sum of t and max of w, and where it came from.
struct Pair {
  double sum = 0, max_w = 0;
  int from = -1, index = -1;
};

// The pairs no other pair beats in both sum and max_w, least sum first.
void keep_pareto(std::vector<Pair>& pairs) {
  std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
    return a.sum != b.sum ? a.sum < b.sum : a.max_w < b.max_w;
  });
  std::vector<Pair> kept;
  for (const Pair& pair : pairs)
    if (kept.empty() || pair.max_w < kept.back().max_w) kept.push_back(pair);
  pairs = std::move(kept);
}

// Pareto pairs of every k-stage prefix ending at j, each stage's t at most `cap`.
std::vector<std::vector<std::vector<Pair>>> pareto_prefixes(const ValueTable& table, int positions, double cap) {
  const int s = table.stages;
  std::vector<std::vector<std::vector<Pair>>> f(s + 1, std::vector<std::vector<Pair>>(positions + 1));
  f[0][0].push_back({});
  for (int k = 0; k < s; ++k) {
    for (int i = 0; i <= positions; ++i) {
      if (f[k][i].empty()) continue;
      for (int j = i + 1; j <= positions; ++j) {
        const std::optional<StageValue>& v = table.at(k, i, j);
        if (!v || v->t > cap) continue;
        for (size_t e = 0; e < f[k][i].size(); ++e)
          f[k + 1][j].push_back({f[k][i][e].sum + v->t, std::max(f[k][i][e].max_w, v->w), i, static_cast<int>(e)});
      }
    }
    for (int j = 0; j <= positions; ++j) keep_pareto(f[k + 1][j]);
  }
  return f;
}

// Least sum of `term` over partitions whose every stage has `limit_of` at most `limit`.
double least_sum(const ValueTable& table, int positions, double limit,
                 double (*term)(const StageValue&), double (*limit_of)(const StageValue&)) {
  const int s = table.stages;
  std::vector<double> f(positions + 1, kInf), next(positions + 1);
  f[0] = 0;
  for (int k = 0; k < s; ++k) {
    std::fill(next.begin(), next.end(), kInf);
    for (int i = 0; i <= positions; ++i) {
      if (f[i] == kInf) continue;
      for (int j = i + 1; j <= positions; ++j) {
        const std::optional<StageValue>& v = table.at(k, i, j);
        if (v && limit_of(*v) <= limit) next[j] = std::min(next[j], f[i] + term(*v));
      }
    }
    f.swap(next);
  }
  return f[positions];
}

double time_of(const StageValue& v) { return v.t; }
double time_bound_of(const StageValue& v) { return v.time_bound; }
double excess_of(const StageValue& v) { return v.step_bound - v.time_bound; }
double no_limit(const StageValue&) { return 0; }

// The distinct values of `of` over every stage that runs, least first.
std::vector<double> thresholds(const ValueTable& table, double (*of)(const StageValue&)) {
  std::vector<double> values;
  for (const std::optional<StageValue>& v : table.values)
    if (v) values.push_back(of(*v));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

double lower_bound(const ValueTable& table, int positions) {
  const double base = least_sum(table, positions, 0, time_bound_of, no_limit);
  double best = kInf;
  for (double d : thresholds(table, excess_of)) {
    if (d + base >= best) break;
    best = std::min(best, d + least_sum(table, positions, d, time_bound_of, excess_of));
  }
  return best;
}

}  // namespace

PartitionAnswer best_partition(const PartitionProblem& problem) {
  PartitionAnswer answer;
  if (problem.stages < 1 || problem.positions < problem.stages) return answer;
  const ValueTable table = ask_values(problem);
  const int p = problem.positions;
  const double m1 = static_cast<double>(problem.micro_batches - 1);
  const double base = least_sum(table, p, 0, time_of, no_limit);
  if (base == kInf) return answer;
  // One micro-batch: the max t term is zero, no threshold needed.
  std::vector<double> caps = m1 > 0 ? thresholds(table, time_of) : std::vector<double>{kInf};
  double best = kInf, best_cap = kInf;
  for (double cap : caps) {
    if (m1 * cap + base >= best) break;
    const auto f = pareto_prefixes(table, p, cap);
    for (const Pair& pair : f[problem.stages][p]) {
      const double step = (cap == kInf ? 0 : m1 * cap) + pair.sum + pair.max_w;
      if (step < best) best = step, best_cap = cap;
    }
  }
  // Read the best partition back from its threshold's prefixes.
  const auto f = pareto_prefixes(table, p, best_cap);
  const std::vector<Pair>& last = f[problem.stages][p];
  size_t at = 0;
  for (size_t e = 1; e < last.size(); ++e)
    if (last[e].sum + last[e].max_w < last[at].sum + last[at].max_w) at = e;
  answer.bounds.assign(problem.stages + 1, p);
  answer.stages.resize(problem.stages);
  int j = p, index = static_cast<int>(at);
  for (int k = problem.stages; k > 0; --k) {
    const Pair& pair = f[k][j][index];
    answer.bounds[k - 1] = pair.from;
    answer.stages[k - 1] = *table.at(k - 1, pair.from, j);
    j = pair.from;
    index = pair.index;
  }
  double sum = 0, max_t = 0, max_w = 0;
  for (const StageValue& v : answer.stages) sum += v.t, max_t = std::max(max_t, v.t), max_w = std::max(max_w, v.w);
  answer.step = sum + m1 * max_t + max_w;
  answer.lower_bound = std::min(lower_bound(table, p), answer.step);
  return answer;
}

namespace {

// The least sum of time_bound and the least largest excess of k stages
// covering [0, i) (`forward`) or of stages k.. covering [i, positions),
// at [k * p1 + i]; infinity where none do. An empty run's largest excess is
// minus infinity, so a range's own excess stands alone.
struct RunBounds {
  std::vector<double> sum, largest;
};

RunBounds run_bounds(const ValueTable& table, int positions, bool forward) {
  const int s = table.stages;
  const size_t p1 = static_cast<size_t>(table.p1);
  RunBounds runs{std::vector<double>((s + 1) * p1, kInf), std::vector<double>((s + 1) * p1, kInf)};
  auto cell = [&](int k, int i) { return static_cast<size_t>(k) * p1 + static_cast<size_t>(i); };
  const size_t start = forward ? cell(0, 0) : cell(s, positions);
  runs.sum[start] = 0, runs.largest[start] = -kInf;
  for (int step = 0; step < s; ++step) {
    const int k = forward ? step : s - 1 - step;  // the stage added
    const int from_k = forward ? k : k + 1, to_k = forward ? k + 1 : k;
    for (int i = 0; i <= positions; ++i)
      for (int j = i + 1; j <= positions; ++j) {
        const std::optional<StageValue>& v = table.at(k, i, j);
        const size_t from = forward ? cell(from_k, i) : cell(from_k, j), to = forward ? cell(to_k, j) : cell(to_k, i);
        if (!v || runs.sum[from] == kInf) continue;
        runs.sum[to] = std::min(runs.sum[to], runs.sum[from] + v->time_bound);
        runs.largest[to] = std::min(runs.largest[to], std::max(runs.largest[from], excess_of(*v)));
      }
  }
  return runs;
}

}  // namespace

HoldingBounds::HoldingBounds(const PartitionProblem& problem) : p1_(static_cast<size_t>(problem.positions + 1)) {
  const int s = problem.stages, p = problem.positions;
  bounds_.assign(static_cast<size_t>(std::max(s, 0)) * p1_ * p1_, kInf);
  if (s < 1 || p < s) return;
  const ValueTable table = ask_values(problem);
  const RunBounds before = run_bounds(table, p, true), after = run_bounds(table, p, false);
  for (int k = 0; k < s; ++k)
    for (int i = 0; i <= p; ++i)
      for (int j = i + 1; j <= p; ++j) {
        const std::optional<StageValue>& v = table.at(k, i, j);
        const size_t b = static_cast<size_t>(k) * p1_ + static_cast<size_t>(i);
        const size_t a = static_cast<size_t>(k + 1) * p1_ + static_cast<size_t>(j);
        if (!v || before.sum[b] == kInf || after.sum[a] == kInf) continue;
        bounds_[b * p1_ + static_cast<size_t>(j)] =
            before.sum[b] + v->time_bound + after.sum[a] + std::max({excess_of(*v), before.largest[b], after.largest[a]});
      }
}

}  // namespace pase
