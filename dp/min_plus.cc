#include "dp/min_plus.h"

#include <algorithm>
#include <limits>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace pase {

// R = A ⊗ B in the min-plus sense over C × C matrices: R[i][j] = min over l of
// A[i][l] + B[l][j]. Each entry is the exact minimum of the same sums whatever
// the order or the thread count (min does not round).
std::vector<double> min_plus(const std::vector<double>& a, const std::vector<double>& b, size_t c, int threads) {
  std::vector<double> r(c * c, std::numeric_limits<double>::infinity());
  auto rows = [&](const tbb::blocked_range<size_t>& range) {
    for (size_t i = range.begin(); i != range.end(); ++i) {
      double* out = r.data() + i * c;
      for (size_t l = 0; l < c; ++l) {
        const double x = a[i * c + l];
        const double* row = b.data() + l * c;
        for (size_t j = 0; j < c; ++j) out[j] = std::min(out[j], x + row[j]);
      }
    }
  };
  if (threads == 1 || c < 64) {
    rows(tbb::blocked_range<size_t>(0, c));
  } else {
    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    arena.execute([&] { tbb::parallel_for(tbb::blocked_range<size_t>(0, c, 8), rows); });
  }
  return r;
}

// T^k by squaring (products_for(k) products, `done` called after each).
std::vector<double> min_plus_power(const std::vector<double>& t, size_t c, size_t k, int threads,
                                   const std::function<void()>& done) {
  std::vector<double> result, square = t;
  bool have = false;
  for (size_t e = k; e > 0; e >>= 1) {
    if (e & 1) {
      if (have) {
        result = min_plus(result, square, c, threads);
        done();
      } else {
        result = square;
      }
      have = true;
    }
    if (e > 1) {
      square = min_plus(square, square, c, threads);
      done();
    }
  }
  return result;
}

// The min-plus products T^k takes by squaring.
size_t products_for(size_t k) {
  size_t count = 0;
  for (size_t e = k; e > 1; e >>= 1) count += 1 + (e & 1);
  return count;
}

}  // namespace pase
