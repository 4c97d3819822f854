// The JSON-reading toolkit every input file goes through: the exact one-line
// error of each kind of bad field, and values quoted short.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_document.h"
#include "base/json_reader.h"

using namespace pase;
using json = nlohmann::json;

namespace {

// The message `read` throws for the document `text` ("(no error)" if none).
template <typename Read>
std::string error_of(const std::string& text, Read read) {
  json document = parse_json_document(text, "f.json");
  try {
    read(JsonReader(document, "f.json"));
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("JsonReader: one line naming file, subject and field") {
  SUBCASE("a missing field, with and without a note") {
    CHECK(error_of(R"({"a": 1})", [](const JsonReader& r) { (void)r.required("nodes"); }) ==
          "f.json: field 'nodes': missing");
    CHECK(error_of(R"({"a": 1})", [](const JsonReader& r) { (void)r.required("units", "required by op 'fc'"); }) ==
          "f.json: field 'units': missing (required by op 'fc')");
    CHECK(error_of(R"({"device": {}})", [](const JsonReader& r) { (void)r.required("device").required("name"); }) ==
          "f.json: field 'device.name': missing");
  }
  SUBCASE("a wrong type") {
    auto units = [](const JsonReader& r) { (void)r.as_subject("node 'fc1'").required("units").as_positive(); };
    CHECK(error_of(R"({"units": "4"})", units) == "f.json: node 'fc1': field 'units': expected an integer, got a string \"4\"");
    CHECK(error_of(R"({"units": 2.5})", units) ==
          "f.json: node 'fc1': field 'units': expected an integer, got a non-integer number 2.5");
    CHECK(error_of(R"({"units": [4]})", units) == "f.json: node 'fc1': field 'units': expected an integer, got an array");
    CHECK(error_of(R"({"units": 18446744073709551615})", units) ==
          "f.json: node 'fc1': field 'units': integer 18446744073709551615 does not fit in 64 bits");
    CHECK(error_of(R"({"name": 7})", [](const JsonReader& r) { (void)r.required("name").as_string(); }) ==
          "f.json: field 'name': expected a string, got an integer");
    CHECK(error_of(R"({"nodes": {}})", [](const JsonReader& r) { (void)r.required("nodes").items("nodes"); }) ==
          "f.json: field 'nodes': expected an array of nodes, got an object");
    CHECK(error_of("[1]", [](const JsonReader& r) { r.expect_object("a JSON object at the top level"); }) ==
          "f.json: expected a JSON object at the top level, got an array");
    CHECK(error_of(R"({"k": null})", [](const JsonReader& r) { (void)r.required("k").as_bool(); }) ==
          "f.json: field 'k': expected true or false, got a null");
  }
  SUBCASE("a negative or zero size") {
    CHECK(error_of(R"({"shape": [2, -3]})", [](const JsonReader& r) { (void)r.required("shape").as_shape(); }) ==
          "f.json: field 'shape[1]': expected a positive size, got -3");
    CHECK(error_of(R"({"a": [2, 0]})", [](const JsonReader& r) {
            (void)r.required("a").as_subject("tensor 'a'").as_shape();
          }) == "f.json: tensor 'a'[1]: expected a positive size, got 0");
    CHECK(error_of(R"({"pad": -1})", [](const JsonReader& r) { (void)r.required("pad").as_non_negative(); }) ==
          "f.json: field 'pad': expected a non-negative integer, got -1");
    CHECK(error_of(R"({"p": 0})", [](const JsonReader& r) { (void)r.required("p").as_positive("number of devices"); }) ==
          "f.json: field 'p': expected a positive number of devices, got 0");
    CHECK(error_of(R"({"gb": -1.5})", [](const JsonReader& r) { (void)r.required("gb").as_positive_number(); }) ==
          "f.json: field 'gb': expected a positive number, got -1.5");
    CHECK(error_of(R"({"shape": [4294967296, 4294967296]})", [](const JsonReader& r) {
            (void)r.required("shape").as_shape();
          }) == "f.json: field 'shape': sizes [4294967296, 4294967296] multiply to more than 2^63");
    CHECK(error_of(R"({"shape": [-1, 4]})", [](const JsonReader& r) { (void)r.required("shape").as_shape(true); }) ==
          "(no error)");
  }
  SUBCASE("an unknown field, with a suggestion") {
    auto known = [](const JsonReader& r) { r.check_known_fields({"devices", "layers"}, "a test file"); };
    CHECK(error_of(R"({"devics": 8})", known) == "f.json: field 'devics': unknown field for a test file (did you mean 'devices'?)");
    CHECK(error_of(R"({"zzz": 8})", known) == "f.json: field 'zzz': unknown field for a test file");
    CHECK(error_of(R"({"device": {"colour": 1}})", [](const JsonReader& r) {
            r.required("device").check_known_fields({"name"});
          }) == "f.json: field 'device.colour': unknown field");
    const std::string key(500, 'k');
    CHECK(error_of("{\"" + key + "\": 1}", known) == "f.json: field '" + std::string(77, 'k') + "...': unknown field for a test file");
  }
  SUBCASE("a path into nested arrays") {
    auto cube = [](const JsonReader& r) {
      for (const JsonReader& plane : r.required("gemm").required("nn").items())
        for (const JsonReader& row : plane.items())
          for (const JsonReader& value : row.items()) (void)value.as_positive_number();
    };
    CHECK(error_of(R"({"gemm": {"nn": [[[1, 2, 3]], [[4, 5, 0]]]}})", cube) ==
          "f.json: field 'gemm.nn[1][0][2]': expected a positive number, got 0");
    auto layers = [](const JsonReader& r) {
      std::vector<JsonReader> items = r.required("layers").items();
      for (size_t i = 0; i < items.size(); ++i) {
        JsonReader layer = items[i].as_subject("layers[" + std::to_string(i) + "]");
        layer = layer.as_subject("layer '" + layer.required("name").as_string() + "'");
        for (const JsonReader& split : layer.required("config").items()) (void)split.as_positive();
      }
    };
    CHECK(error_of(R"({"layers": [{"name": "a", "config": [1]}, {"config": [1]}]})", layers) ==
          "f.json: layers[1]: field 'name': missing");
    CHECK(error_of(R"({"layers": [{"name": "a", "config": [1]}, {"name": "b", "config": [2, 0]}]})", layers) ==
          "f.json: layer 'b': field 'config[1]': expected a positive size, got 0");
  }
  SUBCASE("format and version") {
    auto header = [](const JsonReader& r) { r.check_header("pase-test", 1); };
    CHECK(error_of(R"({"version": 1})", header) == "f.json: field 'format': missing (expected \"pase-test\")");
    CHECK(error_of(R"({"format": "pase-graph", "version": 1})", header) ==
          "f.json: field 'format': expected \"pase-test\", got \"pase-graph\"");
    CHECK(error_of(R"({"format": "pase-test"})", header) == "f.json: field 'version': missing (expected 1)");
    CHECK(error_of(R"({"format": "pase-test", "version": 2})", header) ==
          "f.json: field 'version': unsupported version 2 (this pase reads version 1)");
    CHECK(error_of(R"({"format": "pase-test", "version": 1})", header) == "(no error)");
  }
}

TEST_CASE("JsonReader: values are quoted short") {
  SUBCASE("a long value") {
    const std::string long_format(10000, 'x');
    std::string message = error_of("{\"format\": \"" + long_format + "\", \"version\": 1}",
                                   [](const JsonReader& r) { r.check_header("pase-graph", 1); });
    CHECK(message == "f.json: field 'format': expected \"pase-graph\", got \"" + std::string(75, 'x') + "...\"");
    std::string items = "1";
    for (int i = 0; i < 1500; ++i) items += ",1";
    message = error_of("{\"format\": [" + items + "], \"version\": 1}",
                       [](const JsonReader& r) { r.check_header("pase-graph", 1); });
    CHECK(message == "f.json: field 'format': expected \"pase-graph\", got an array of 1501 items");
  }
  SUBCASE("a deeply nested value is not walked") {
    const size_t depth = 100000;
    json document = json::parse(std::string(depth, '[') + std::string(depth, ']'));  // nlohmann's parser, unbounded
    CHECK(json_excerpt(document) == "an array of 1 item");
    const size_t allowed = kMaxJsonDepth - 1;  // inside the object
    CHECK(error_of("{\"v\": " + std::string(allowed, '[') + std::string(allowed, ']') + "}", [](const JsonReader& r) {
            r.required("v").fail("recorded with " + json_excerpt(r.required("v").value()));
          }) == "f.json: field 'v': recorded with an array of 1 item");
  }
  SUBCASE("a short value as dump() writes it") {
    json small = json::parse(R"({"flops_tflops": 10.0, "name": "a\"b\n", "list": [true, null, -1e-7]})");
    CHECK(json_excerpt(small) == small.dump());
    CHECK(json_excerpt(json::object()) == "{}");
    CHECK(json_excerpt(json::parse(R"({"a": 1, "b": 2})"), 5) == "an object of 2 fields");
    CHECK(json_excerpt(json("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"), 9) == "\"\xc3\xa9\xc3\xa9...\"");  // whole characters only
  }
}
