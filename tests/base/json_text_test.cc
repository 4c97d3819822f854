// The direct JSON writer must produce what nlohmann::json's dump() produces,
// since strategy files written by either are compared and diffed by users.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "base/json_text.h"

using namespace pase;

namespace {
std::string number_text(double value) {
  std::string out;
  append_json_number(out, value);
  return out;
}
}  // namespace

TEST_CASE("append_json_number matches nlohmann's layout") {
  for (double value : {0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1.5e-5, 1e-4, 0.00012345, 123.456, 1e15, 1e16, 123456789012345.0,
                       1234567890123456.0, 97098296512.0, 2476066881536.0, 1.7976931348623157e308, 5e-324, 1e21, 3.0e-7,
                       65568.0, 1e100, -2.5e-10})
    CHECK_MESSAGE(number_text(value) == nlohmann::json(value).dump(), value);
  CHECK(number_text(std::numeric_limits<double>::infinity()) == "null");
  CHECK(number_text(std::nan("")) == "null");
}

TEST_CASE("append_json_number reads back exactly") {
  std::mt19937_64 random(7);
  std::uniform_int_distribution<uint64_t> bits;
  int identical = 0;
  for (int i = 0; i < 20000; ++i) {
    uint64_t pattern = bits(random);
    double value;
    std::memcpy(&value, &pattern, sizeof value);
    if (!std::isfinite(value)) continue;
    std::string text = number_text(value);
    double back = nlohmann::json::parse(text).get<double>();
    REQUIRE_MESSAGE(std::memcmp(&back, &value, sizeof value) == 0, text);
    identical += text == nlohmann::json(value).dump();
  }
  // nlohmann's Grisu2 is shortest almost always; ours always is.
  CHECK(identical > 19000);
}

TEST_CASE("append_json_string escapes like nlohmann") {
  std::string all;
  for (int c = 1; c < 128; ++c) all += static_cast<char>(c);
  all += "caf\xc3\xa9 / \"quoted\" \\ path";
  std::string out;
  append_json_string(out, all);
  CHECK(out == nlohmann::json(all).dump());
}

TEST_CASE("append_json_array") {
  std::string out;
  append_json_array(out, std::vector<int64_t>{64, -1, 9007199254740993});
  append_json_array(out, std::vector<int32_t>{});
  CHECK(out == "[64,-1,9007199254740993][]");
}
