// Every way to give pipeline stages their devices (stages/device_splits.h):
// against an independent count (stars and bars, by Pascal's rule) and by
// what each split must be; the unit a node gives; the refusals.
#include <doctest/doctest.h>

#include <set>

#include "base/error.h"
#include "stages/device_splits.h"

using namespace pase;

namespace {

// C(n, k) by Pascal's rule: the number of compositions of n + 1 into k + 1 parts.
double pascal(int n, int k) {
  if (k < 0 || k > n) return 0;
  std::vector<double> row(static_cast<size_t>(n) + 1, 0.0);
  row[0] = 1;
  for (int i = 1; i <= n; ++i)
    for (int j = i; j > 0; --j) row[j] += row[j - 1];
  return row[static_cast<size_t>(k)];
}

}  // namespace

TEST_CASE("device splits: every composition once, in order, each part a positive multiple of the unit") {
  for (int64_t unit : {1, 2, 8})
    for (int64_t units = 1; units <= 12; ++units)
      for (int stages = 1; stages <= 6; ++stages) {
        const int64_t devices = units * unit;
        const auto splits = device_splits(devices, stages, unit, 100000);
        CHECK(static_cast<double>(splits.size()) == pascal(static_cast<int>(units) - 1, stages - 1));
        CHECK(device_split_count(devices, stages, unit) == pascal(static_cast<int>(units) - 1, stages - 1));
        std::set<std::vector<int64_t>> seen(splits.begin(), splits.end());
        CHECK(seen.size() == splits.size());
        for (size_t i = 0; i < splits.size(); ++i) {
          int64_t sum = 0;
          for (int64_t part : splits[i]) {
            CHECK(part >= unit);
            CHECK(part % unit == 0);
            sum += part;
          }
          CHECK(sum == devices);
          CHECK(static_cast<int>(splits[i].size()) == stages);
          if (i > 0) CHECK(splits[i - 1] < splits[i]);
        }
      }
  CHECK(device_splits(8, 3, 1, 100) == std::vector<std::vector<int64_t>>{
                                           {1, 1, 6}, {1, 2, 5}, {1, 3, 4}, {1, 4, 3}, {1, 5, 2}, {1, 6, 1}, {2, 1, 5},
                                           {2, 2, 4}, {2, 3, 3}, {2, 4, 2}, {2, 5, 1}, {3, 1, 4}, {3, 2, 3}, {3, 3, 2},
                                           {3, 4, 1}, {4, 1, 3}, {4, 2, 2}, {4, 3, 1}, {5, 1, 2}, {5, 2, 1}, {6, 1, 1}});
}

TEST_CASE("device splits: a node is the unit of a job of whole nodes; past the limit a refusal counts the ways") {
  CHECK(device_split_unit(1024, 8) == 8);
  CHECK(device_split_unit(8, 8) == 1);   // one node: any device count
  CHECK(device_split_unit(12, 8) == 1);  // not whole nodes
  CHECK(device_split_unit(64, 0) == 1);  // no nodes
  CHECK(device_split_count(1024, 8, 8) == doctest::Approx(pascal(127, 7)).epsilon(1e-9));
  CHECK_THROWS_WITH_AS((void)device_splits(1024, 8, 8, 4096),
                       "the stage devices: 8.94e+10 ways to give 8 stages 128 units of 8 devices, above the limit of "
                       "4096 (give each stage's devices, or fewer stages)",
                       OptionError);
  CHECK_THROWS_WITH_AS((void)device_splits(12, 2, 8, 4096),
                       "the stage devices: a unit of 8 devices does not divide 12", OptionError);
  CHECK(device_splits(8, 9, 1, 10).empty());  // more stages than devices
}
