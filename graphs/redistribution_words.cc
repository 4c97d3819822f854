#include "graphs/redistribution_words.h"

#include <array>
#include <vector>

namespace pase {

double redistribution_words(const Shape& tensor, const int64_t* a, const int64_t* b) {
  // Tensors rarely have more than a handful of dimensions: no allocation then.
  constexpr size_t kOnStack = 16;
  std::array<double, 2 * kOnStack> on_stack;
  std::vector<double> on_heap;
  const size_t rank = tensor.size();
  double* extents = on_stack.data();
  if (rank > kOnStack) {
    on_heap.resize(2 * rank);
    extents = on_heap.data();
  }
  double* held = extents;
  double* needed = extents + rank;
  double need = 1.0;
  int64_t held_parts = 1, needed_parts = 1;
  for (size_t i = 0; i < rank; ++i) {
    double extent = static_cast<double>(tensor[i]);
    held[i] = extent / static_cast<double>(a[i]);
    needed[i] = extent / static_cast<double>(b[i]);
    need *= needed[i];
    held_parts *= a[i];
    needed_parts *= b[i];
  }
  return fetched_words(held, needed, need, held_parts, needed_parts, rank);
}

}  // namespace pase
