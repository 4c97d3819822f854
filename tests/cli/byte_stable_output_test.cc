// Strategy files, batch summaries and compare files are the same bytes from
// run to run and on any thread count (users diff and cache them); what a run
// measures (seconds, peak table bytes) is written only with --timings.
#include <doctest/doctest.h>

#include <string>

#include "test_support.h"
#include "base/text_file.h"

namespace {

std::string graph(const std::string& name) { return "\"" + pase::test::source_path("data/graphs/" + name + ".json") + "\""; }

// Runs `pase ARGS` with OUT as its output file and returns the file's bytes.
std::string written(const std::string& args, const std::string& out) {
  pase::test::CommandResult result = pase::test::run_pase(args + " \"" + out + "\"");
  REQUIRE(result.status == 0);
  return pase::read_text_file(out);
}

}  // namespace

TEST_CASE("solve -o: the same bytes on every run and thread count") {
  const std::string out = pase::test::write_temp_file("stable.json", "");
  // The Transformer at p = 8 fills its tables on several threads when given them.
  const std::string base = "solve " + graph("transformer") + " --devices 8 ";
  const std::string first = written(base + "--threads 1 -o", out);
  CHECK(first.find("\"seconds\"") == std::string::npos);
  CHECK(first.find("\"peak_table_bytes\"") == std::string::npos);
  CHECK(first.find("\"table_entries\":") != std::string::npos);
  CHECK(written(base + "--threads 1 -o", out) == first);
  CHECK(written(base + "--threads 2 -o", out) == first);
  SUBCASE("--timings adds what the run measured") {
    const std::string timed = written(base + "--threads 2 --timings -o", out);
    CHECK(timed.find(",\"peak_table_bytes\":") != std::string::npos);
    CHECK(timed.find(",\"seconds\":") != std::string::npos);
  }
}

TEST_CASE("batch --summary: the same bytes on every run, thread count and --jobs") {
  const std::string inputs = "batch " + graph("alexnet") + " " + graph("transformer") + " " + graph("rnnlm") + " --devices 8,16 ";
  for (const char* kind : {"json", "csv"}) {
    CAPTURE(kind);
    const std::string out = pase::test::write_temp_file(std::string("stable_summary.") + kind, "");
    const std::string first = written(inputs + "--threads 1 --summary", out);
    CHECK(first.find("seconds") == (std::string(kind) == "csv" ? first.find("seconds,message") : std::string::npos));
    CHECK(written(inputs + "--threads 1 --summary", out) == first);
    CHECK(written(inputs + "--threads 2 --summary", out) == first);
    CHECK(written(inputs + "--threads 1 --jobs 2 --summary", out) == first);
    const std::string timed = written(inputs + "--timings --summary", out);
    CHECK(timed != first);
    CHECK(timed.find(std::string(kind) == "json" ? "\"seconds\": " : ",ok,") != std::string::npos);
  }
}

TEST_CASE("compare --json/--csv: the same bytes on every run") {
  const std::string base = "compare " + graph("alexnet") + " --devices 8 --mcmc-iterations 2000 ";
  const std::string json = pase::test::write_temp_file("stable_compare.json", "");
  const std::string first = written(base + "--json", json);
  CHECK(first.find("\"search_seconds\": null") != std::string::npos);
  CHECK(first.find("\"search_seconds\": 0") == std::string::npos);
  CHECK(written(base + "--json", json) == first);
  const std::string csv = pase::test::write_temp_file("stable_compare.csv", "");
  const std::string table = written(base + "--csv", csv);
  CHECK(written(base + "--csv", csv) == table);
  CHECK(written(base + "--timings --json", json).find("\"search_seconds\": null") != std::string::npos);  // fixed baselines
}
