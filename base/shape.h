#pragma once
// Tensor shapes and overflow-checked size arithmetic.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pase {

using Shape = std::vector<int64_t>;

/// Product of the sizes, or nullopt when it does not fit in 63 bits.
[[nodiscard]] std::optional<int64_t> checked_product(const Shape& shape);

/// "[128, 3, 227, 227]".
[[nodiscard]] std::string shape_to_string(const Shape& shape);

}  // namespace pase
