#include "base/shape.h"

#include "base/checked_math.h"

namespace pase {

std::optional<int64_t> checked_product(const Shape& shape) {
  int64_t product = 1;
  for (int64_t size : shape) {
    if (size <= 0) return std::nullopt;
    std::optional<int64_t> next = checked_mul(product, size);
    if (!next) return std::nullopt;
    product = *next;
  }
  return product;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace pase
