// PASE_ASSERT: the message a broken invariant carries, that nothing is
// evaluated while the invariant holds, and that the solver's checks fire.
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/exit_status.h"
#include "base/check.h"
#include "dp/ordering.h"

namespace {

int calls = 0;
int counted(int value) {
  ++calls;
  return value;
}

int sum(int a, int b) { return a + b; }

// What PASE_ASSERT at `line` of this file says.
std::string at(int line, const std::string& rest) { return std::string(__FILE__) + ":" + std::to_string(line) + ": " + rest; }

}  // namespace

TEST_CASE("PASE_ASSERT: a broken invariant throws std::logic_error with the place, the condition and each value") {
  const int index = -1, count = 40;
  int line = 0;
  auto check = [&] { line = __LINE__; PASE_ASSERT(index >= 0 && index < count, index, count); };
  try {
    check();
    FAIL("PASE_ASSERT did not throw");
  } catch (const std::logic_error& error) {
    CHECK(std::string(error.what()) == at(line, "index >= 0 && index < count failed (index = -1, count = 40)"));
  }
  // The file is named relative to the source tree, not by a path of the build machine.
  CHECK(std::string(__FILE__).rfind("tests/base/check_test.cc", 0) == 0);
}

TEST_CASE("PASE_ASSERT: values are named as written, commas inside calls and braces included") {
  const std::vector<int> sizes = {3, 4};
  const std::string name = "conv1";
  int line = 0;
  auto check = [&] { line = __LINE__; PASE_ASSERT(sum(sizes[0], sizes[1]) == 8, sum(sizes[0], sizes[1]), std::vector<int>{1, 2}.size(), name); };
  try {
    check();
    FAIL("PASE_ASSERT did not throw");
  } catch (const std::logic_error& error) {
    CHECK(std::string(error.what()) ==
          at(line, "sum(sizes[0], sizes[1]) == 8 failed (sum(sizes[0], sizes[1]) = 7, std::vector<int>{1, 2}.size() = 2, name = conv1)"));
  }
}

TEST_CASE("PASE_ASSERT: a holding invariant neither throws nor evaluates its values") {
  calls = 0;
  CHECK_NOTHROW(PASE_ASSERT(1 + 1 == 2, counted(1), counted(2)));
  CHECK(calls == 0);
  // Failing, each value is evaluated once, the condition once.
  CHECK_THROWS_AS(PASE_ASSERT(counted(1) == 2, counted(3)), std::logic_error);
  CHECK(calls == 2);
}

TEST_CASE("PASE_ASSERT: the CLI reports a broken invariant as an internal error, exit status 4") {
  std::ostringstream captured;
  std::streambuf* saved = std::cerr.rdbuf(captured.rdbuf());
  int line = 0;
  const int status = pase::run_reporting_errors([&] {
    const int step = 7;
    line = __LINE__; PASE_ASSERT(step < 3, step);
    return 0;
  });
  std::cerr.rdbuf(saved);
  CHECK(status == pase::kExitInternal);
  CHECK(captured.str() == "error: internal: " + at(line, "step < 3 failed (step = 7)") + "\n");
}

TEST_CASE("plan_for_order: an order that repeats a vertex is a broken invariant, not a plan") {
  const std::vector<std::vector<int>> path = {{1}, {0, 2}, {1}};
  CHECK_NOTHROW((void)pase::plan_for_order(path, {2, 0, 1}));
  try {
    (void)pase::plan_for_order(path, {0, 1, 1});
    FAIL("plan_for_order accepted a repeated vertex");
  } catch (const std::logic_error& error) {
    const std::string message = error.what();
    CHECK(message.rfind("dp/ordering.cc:", 0) == 0);
    CHECK(message.find(": v >= 0 && static_cast<size_t>(v) < n && plan.position[v] < 0 failed (i = 2, v = 1, n = 3)") !=
          std::string::npos);
  }
  CHECK_THROWS_AS((void)pase::plan_for_order(path, {0, 1}), std::logic_error);  // a vertex missing
}
