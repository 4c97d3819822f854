// SharedArray (base/shared_array.h): copies share one storage, compare
// by value like std::vector, and value_ids numbers arrays by value.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "base/shared_array.h"

using namespace pase;

TEST_CASE("SharedArray") {
  SUBCASE("copies share the values, assigning a vector makes new storage") {
    const SharedArray<double> a = std::vector<double>{1.5, 2.5, 3.5};
    SharedArray<double> b = a;
    CHECK(b.shares_with(a));
    CHECK(b.data() == a.data());
    CHECK(b.size() == 3);
    CHECK(b[1] == 2.5);
    CHECK(b.bytes() == 3 * sizeof(double));
    b = std::vector<double>{1.5, 2.5, 3.5};
    CHECK_FALSE(b.shares_with(a));
    CHECK(b == a);  // equal values, other storage
    CHECK(b.copy() == std::vector<double>{1.5, 2.5, 3.5});
  }
  SUBCASE("ordered as std::vector") {
    const std::vector<std::vector<int>> values = {{}, {1}, {1, 2}, {1, 3}, {2}, {0, 9, 9}};
    for (const auto& x : values)
      for (const auto& y : values) {
        CAPTURE(x.size());
        CAPTURE(y.size());
        const SharedArray<int> a = x, b = y;
        CHECK((a < b) == (x < y));
        CHECK((a == b) == (x == y));
        CHECK((a != b) == (x != y));
      }
  }
  SUBCASE("a moved-from array is empty; the move keeps the values") {
    SharedArray<int> a = {4, 5};
    SharedArray<int> b = std::move(a);
    CHECK(b == SharedArray<int>{4, 5});
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move): what a move leaves is specified
    CHECK(a.data() == nullptr);
    SharedArray<int> c;
    c = std::move(b);
    CHECK(c == SharedArray<int>{4, 5});
    CHECK(b.empty());  // NOLINT(bugprone-use-after-move)
  }
}

TEST_CASE("value_ids") {
  const SharedArray<int> x = {1, 2}, y = {3};
  const std::vector<SharedArray<int>> arrays = {x, y, x, std::vector<int>{1, 2}, SharedArray<int>{}, y, std::vector<int>{}};
  // Numbered by value in order of first appearance, whether shared or equal copies.
  CHECK(value_ids(arrays) == std::vector<int>{0, 1, 0, 0, 2, 1, 2});
}
