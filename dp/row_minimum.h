#pragma once
// The inner loop of the DP (internal to the dp library): the cheapest
// configuration of a row of sums, ties to the first. Inline: it runs once per
// table entry and must be compiled into the fill's loop.
#include <cstddef>
#include <limits>
#include <utility>

namespace pase {

template <typename Value>
inline std::pair<double, size_t> first_minimum_scan(size_t n, Value value) {
  double best = std::numeric_limits<double>::infinity();
  size_t at = 0;
  for (size_t s = 0; s < n; ++s) {
    const double v = value(s);
    if (v < best) {
      best = v;
      at = s;
    }
  }
  return {best, at};
}

// Below this many configurations the plain scan wins (measured on the zoo).
constexpr size_t kShortRow = 64;

// The first s < n minimising value(s), and the minimum. Four independent
// running minima (with their positions) break the compare-and-branch chain of
// a plain scan, about twice as fast on the DP's rows; merging them by value,
// then by position, keeps "ties go to the first configuration" exact.
template <typename Value>
inline std::pair<double, size_t> first_minimum(size_t n, Value value) {
  constexpr size_t kLanes = 4;
  if (n < kShortRow) return first_minimum_scan(n, value);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double lane_best[kLanes] = {kInf, kInf, kInf, kInf};
  size_t lane_at[kLanes] = {0, 0, 0, 0};
  size_t s = 0;
  for (; s + kLanes <= n; s += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const double v = value(s + l);
      const bool better = v < lane_best[l];
      lane_best[l] = better ? v : lane_best[l];
      lane_at[l] = better ? s + l : lane_at[l];
    }
  }
  double best = kInf;
  size_t at = n;
  for (size_t l = 0; l < kLanes; ++l) {
    if (lane_best[l] < best || (lane_best[l] == best && lane_at[l] < at)) {
      best = lane_best[l];
      at = lane_at[l];
    }
  }
  for (; s < n; ++s) {
    const double v = value(s);
    if (v < best) {
      best = v;
      at = s;
    }
  }
  if (at >= n) at = 0;  // nothing finite: keep the first
  return {best, at};
}

// min over s of base[s] + sum of rows[j][s], and the first s reaching it.
// Up to two rows are added on the fly; more are summed into `scratch` first,
// in the same order, so every sum is the same double either way.
inline std::pair<double, size_t> min_of_sum(const double* base, const double* const* rows, size_t row_count, double* scratch,
                                            size_t n) {
  if (row_count == 0) return first_minimum(n, [base](size_t s) { return base[s]; });
  const double* a = rows[0];
  if (row_count == 1) return first_minimum(n, [base, a](size_t s) { return base[s] + a[s]; });
  const double* b = rows[1];
  if (row_count == 2) return first_minimum(n, [base, a, b](size_t s) { return base[s] + a[s] + b[s]; });
#pragma omp simd
  for (size_t s = 0; s < n; ++s) scratch[s] = base[s] + a[s];
  for (size_t j = 1; j < row_count; ++j) {
    const double* row = rows[j];
#pragma omp simd
    for (size_t s = 0; s < n; ++s) scratch[s] += row[s];
  }
  return first_minimum(n, [scratch](size_t s) { return scratch[s]; });
}

}  // namespace pase
