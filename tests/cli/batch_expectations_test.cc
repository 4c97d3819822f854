// How `batch --expect` matches a result to its record (cli/batch_expectations.h):
// the same file, else the one record of its file name, else the one record of
// its graph; a changed optimum, or an optimum where a failure was recorded,
// is a mismatch.
#include <doctest/doctest.h>

#include <fstream>

#include "base/text_file.h"
#include "cli/batch_expectations.h"
#include "costmodel/cost_model.h"
#include "test_support.h"

using namespace pase;

namespace {

Expectations read_records(const std::string& results) {
  const std::string path = test::write_temp_file(
      "expectations.json", R"({"format": "pase-batch-summary", "version": 1, "cost_model": "pase", "results": [)" +
                               results + "]}");
  const PaseCostModel model(Machine{});
  return Expectations::read(path, {&model, "", false});
}

}  // namespace

TEST_CASE("batch expectations: the same file, else its file name where one file has it, else its graph") {
  const Expectations e = read_records(
      R"({"file": "zoo/./a.json", "graph": "alpha", "devices": 4, "status": "ok", "cost": 1.0},
         {"file": "zoo/b.json", "graph": "beta", "devices": 4, "status": "error", "cost": null},
         {"file": "zoo/b.json", "graph": "beta", "devices": 8, "status": "ok", "cost": 2.0},
         {"file": "one/c.json", "graph": "gamma", "devices": 4, "status": "ok", "cost": 3.0},
         {"file": "two/c.json", "graph": "delta", "devices": 4, "status": "ok", "cost": 4.0})");
  REQUIRE(e.records().size() == 5);
  CHECK(e.match("zoo/a.json", "alpha", 4, 1) == &e.records()[0]);          // the same file, normalized
  CHECK(e.match("elsewhere/a.json", "other", 4, 1) == &e.records()[0]);    // its file name
  CHECK(e.match("elsewhere/a.json", "other", 4, 2) == nullptr);  // two given files named a.json, no graph to go by
  CHECK(e.match("elsewhere/a.json", "alpha", 4, 2) == &e.records()[0]);  // ... but its graph
  CHECK(e.match("elsewhere/renamed.json", "beta", 8, 1) == &e.records()[2]);  // its graph
  CHECK(e.match("elsewhere/c.json", "gamma", 4, 1) == &e.records()[3]);    // c.json twice recorded: the graph decides
  CHECK(e.match("elsewhere/c.json", "epsilon", 4, 1) == nullptr);
  CHECK(e.match("zoo/a.json", "alpha", 8, 1) == nullptr);                  // no record at p = 8
  CHECK(expectation_mismatch(e.records()[0], 1.0) == "");
  CHECK(expectation_mismatch(e.records()[0], 1.0 + 1e-12) == "");
  CHECK(expectation_mismatch(e.records()[0], 1.5) == "expected 1");
  CHECK(expectation_mismatch(e.records()[1], 7.0) == "expected no optimum: recorded error");
}
