#pragma once
// Min-plus products of square matrices (internal to the dp library): how a
// run of k identical blocks' transfer table T becomes T^k.
#include <cstddef>
#include <functional>
#include <vector>

namespace pase {

/// R = A ⊗ B over C × C matrices: R[i][j] = min over l of A[i][l] + B[l][j];
/// the same doubles whatever the thread count (min does not round).
[[nodiscard]] std::vector<double> min_plus(const std::vector<double>& a, const std::vector<double>& b, size_t c,
                                           int threads);

/// T^k by squaring (products_for(k) products, `done` called after each).
[[nodiscard]] std::vector<double> min_plus_power(const std::vector<double>& t, size_t c, size_t k, int threads,
                                                 const std::function<void()>& done);

/// The min-plus products T^k takes by squaring.
[[nodiscard]] size_t products_for(size_t k);

}  // namespace pase
