// `pase batch`: a zoo in one command, a summary file, and --expect for CI.
#include <doctest/doctest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "graphs/graph_file.h"
#include "test_support.h"

using json = nlohmann::json;

namespace {

std::string quoted(const std::string& relative) { return "\"" + pase::test::source_path(relative) + "\""; }

// A result line of the table up to its cost (the golden optimum), as `pase batch` prints it.
std::string result_line(const std::string& graph, int64_t devices) {
  char line[128];
  std::snprintf(line, sizeof line, "%-14s p=%-6lld %20s", graph.c_str(), static_cast<long long>(devices),
                pase::test::flop_text(pase::test::zoo_optimum(graph, devices)).c_str());
  return line;
}

}  // namespace

TEST_CASE("pase batch: summary and expectations") {
  std::string summary = pase::test::write_temp_file("batch_summary.json", "");
  std::string files = quoted("data/graphs/alexnet.json") + " " + quoted("data/graphs/rnnlm.json");
  pase::test::CommandResult result = pase::test::run_pase("batch " + files + " --devices 8,16 --summary \"" + summary + "\"");
  REQUIRE(result.status == 0);
  CHECK(result.error == "");  // no progress: stderr is not a terminal
  CHECK(result.output.find(result_line("alexnet", 8)) == 0);
  CHECK(result.output.find("\n" + result_line("rnnlm", 16)) != std::string::npos);
  CHECK(result.output.find("\nbatch: 4 ok, 0 failed, 0 mismatched\n") != std::string::npos);

  json doc = json::parse(pase::read_text_file(summary));
  CHECK(doc["format"] == "pase-batch-summary");
  REQUIRE(doc["results"].size() == 4);
  CHECK(doc["results"][0]["graph"] == "alexnet");
  CHECK(doc["results"][0]["devices"] == 8);
  CHECK(doc["results"][0]["status"] == "ok");
  CHECK(doc["results"][0]["cost"] == pase::test::zoo_optimum("alexnet", 8));
  CHECK(doc["results"][3]["cost"] == pase::test::zoo_optimum("rnnlm", 16));

  SUBCASE("the summary fed back as --expect passes") {
    pase::test::CommandResult again =
        pase::test::run_pase("batch " + files + " --devices 8,16 --expect \"" + summary + "\"");
    CHECK(again.status == 0);
    CHECK(again.output.find("batch: 4 ok, 0 failed, 0 mismatched (4 of 4 expected optima checked)\n") != std::string::npos);
  }
  SUBCASE("a moved optimum fails") {
    CHECK(doc["results"][1]["graph"] == "alexnet");
    CHECK(doc["results"][1]["devices"] == 16);
    doc["results"][1]["cost"] = pase::test::zoo_optimum("alexnet", 16) * (1 + 1e-6);
    doc["results"][0]["cost"] = pase::test::zoo_optimum("alexnet", 8) * (1 + 1e-12);  // within the tolerance
    std::string edited = pase::test::write_temp_file("batch_expect.json", doc.dump());
    pase::test::CommandResult again =
        pase::test::run_pase("batch " + files + " --devices 8,16 --expect \"" + edited + "\"");
    CHECK(again.status == 1);
    CHECK(again.output.find(result_line("alexnet", 8)) == 0);
    CHECK(again.output.find("  mismatch: expected ") != std::string::npos);
    CHECK(again.output.find("batch: 3 ok, 0 failed, 1 mismatched (4 of 4 expected optima checked)\n") !=
          std::string::npos);
  }
  SUBCASE("expectations recorded on another machine are refused") {
    pase::test::CommandResult again =
        pase::test::run_pase("batch " + files + " --devices 8 --flops 20 --expect \"" + summary + "\"");
    CHECK(again.status == 1);
    CHECK(again.error == "error: " + summary +
                             ": field 'machine': recorded with {\"bandwidth_gbps\":16.0,\"flops_tflops\":10.0}, this run "
                             "uses {\"flops_tflops\":20.0,\"bandwidth_gbps\":16.0}\n");
  }
}

TEST_CASE("pase batch: keeps going after a failure") {
  std::string broken = pase::test::write_temp_file("broken.json", "{\"format\": \"pase-graph\", \"version\": 1, \"nodes\": [}");
  std::string summary = pase::test::write_temp_file("batch_summary.csv", "");
  pase::test::CommandResult result = pase::test::run_pase("batch \"" + broken + "\" " + quoted("data/graphs/alexnet.json") +
                                                          " --devices 8 --summary \"" + summary + "\"");
  CHECK(result.status == 1);
  CHECK(result.output.find("broken         p=8 ") == 0);
  CHECK(result.output.find("  error: " + broken + ": malformed JSON at line 1, column 50:") != std::string::npos);
  CHECK(result.output.find("\n" + result_line("alexnet", 8)) != std::string::npos);
  CHECK(result.output.find("\nbatch: 1 ok, 1 failed, 0 mismatched\n") != std::string::npos);
  std::string csv = pase::read_text_file(summary);
  CHECK(csv.find("graph,file,devices,status,cost,seconds,message,per_device_bytes,gap\n") == 0);
  CHECK(csv.find("\nbroken,") != std::string::npos);
  CHECK(csv.find(",8,error,,") != std::string::npos);
  CHECK(csv.find(",8,ok," + pase::test::flop_text(pase::test::zoo_optimum("alexnet", 8)) + ",") != std::string::npos);
}

TEST_CASE("pase batch: a whole directory") {
  pase::test::CommandResult result = pase::test::run_pase("batch " + quoted("data/graphs") + " --devices 4");
  CHECK(result.status == 0);
  for (const char* name : {"alexnet ", "inception3 ", "resnet101 ", "rnnlm ", "transformer "})
    CHECK(result.output.find(std::string("\n") + name) + result.output.find(name) != 2 * std::string::npos);
  CHECK(result.output.find("batch: 5 ok, 0 failed, 0 mismatched\n") != std::string::npos);
}

TEST_CASE("pase batch: bad options") {
  std::string alexnet = quoted("data/graphs/alexnet.json");
  pase::test::CommandResult summary = pase::test::run_pase("batch " + alexnet + " --devices 8 --summary out.txt");
  CHECK(summary.status == 1);
  CHECK(summary.error == "error: --summary: expected a file name ending in .json or .csv, got 'out.txt'\n");
  std::string notsummary = pase::test::write_temp_file("not_summary.json", "{\"format\": \"pase-strategy\"}");
  pase::test::CommandResult expect = pase::test::run_pase("batch " + alexnet + " --devices 8 --expect \"" + notsummary + "\"");
  CHECK(expect.status == 1);
  CHECK(expect.error == "error: " + notsummary + ": field 'format': expected \"pase-batch-summary\"\n");
}
