// `pase compare`: the DP optimum against every baseline, as table, CSV, JSON and SVG.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/duration_text.h"
#include "cli/layer_table.h"
#include "test_support.h"
#include "base/text_file.h"

using json = nlohmann::json;

namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// The golden cost of a strategy on alexnet at p = 8, and its speed-up over data parallelism.
double alexnet8(const std::string& strategy) {
  return strategy == "pase" ? pase::test::zoo_optimum("alexnet", 8) : pase::test::baseline_cost(strategy, "alexnet", 8);
}
double speedup8(const std::string& strategy) { return alexnet8("data-parallel") / alexnet8(strategy); }

// The table's row up to its speed-up, as `pase compare` prints it.
std::string table_row(const std::string& strategy) {
  // Cost in units and as time at 10 TFLOP/s; the exact FLOP are in the CSV.
  const double flop = alexnet8(strategy);
  char line[160];
  std::snprintf(line, sizeof line, "%6d  %-14s  %11s  %9s  %8.2fx", 8, strategy.c_str(), pase::format_flop(flop).c_str(),
                pase::format_duration(flop / 10e12).c_str(), speedup8(strategy));
  return line;
}

// The CSV row up to its speed-up.
std::string csv_row(const std::string& strategy) {
  char line[160];
  std::snprintf(line, sizeof line, "\nalexnet,8,%s,%s,flop,%.6f,", strategy.c_str(),
                pase::test::flop_text(alexnet8(strategy)).c_str(), speedup8(strategy));
  return line;
}

}  // namespace

TEST_CASE("pase compare: alexnet") {
  std::string csv = pase::test::write_temp_file("compare.csv", "");
  std::string out = pase::test::write_temp_file("compare.json", "");
  std::string svg = pase::test::write_temp_file("compare.svg", "");
  pase::test::CommandResult result =
      pase::test::run_pase("compare \"" + pase::test::source_path("data/graphs/alexnet.json") +
                           "\" --devices 4,8,16,32,64 --timings --csv \"" + csv + "\" --json \"" + out + "\" --svg \"" + svg + "\"");
  REQUIRE(result.status == 0);
  CHECK(result.error == "");

  SUBCASE("the table") {
    CHECK(result.output.find("alexnet: predicted cost per strategy, cost model pase (flop)") == 0);
    CHECK(result.output.find(table_row("pase")) != std::string::npos);
    CHECK(result.output.find(table_row("data-parallel") + "          -") != std::string::npos);
    CHECK(result.output.find("note: megatron skipped: not transformer-like (no einsum with a head letter 'h')\n") !=
          std::string::npos);
  }
  SUBCASE("JSON: the DP is never worse than a baseline, MCMC never better than the DP") {
    json doc = json::parse(pase::read_text_file(out));
    CHECK(doc["format"] == "pase-compare");
    CHECK(doc["strategies"] == json({"data-parallel", "owt", "mcmc", "pase"}));
    CHECK(doc["skipped"][0]["strategy"] == "megatron");
    REQUIRE(doc["results"].size() == 5);
    for (const json& at : doc["results"]) {
      CAPTURE(at["devices"]);
      double optimum = 0, data_parallel = 0;
      for (const json& s : at["strategies"]) {
        if (s["name"] == "pase") optimum = s["cost"];
        if (s["name"] == "data-parallel") data_parallel = s["cost"];
      }
      REQUIRE(optimum > 0);
      for (const json& s : at["strategies"]) {
        CHECK(s["cost"].get<double>() >= optimum * (1 - 1e-9));
        CHECK(s["speedup"].get<double>() == doctest::Approx(data_parallel / s["cost"].get<double>()));
      }
      CHECK(at["strategies"][0]["speedup"] == 1.0);
      CHECK(at["strategies"][2]["search_seconds"].is_number());
      CHECK(at["strategies"][3]["search_seconds"].is_number());
      CHECK(at["strategies"][1]["search_seconds"].is_null());
    }
    CHECK(doc["results"][1]["devices"] == 8);
    CHECK(doc["results"][1]["strategies"][3]["cost"].get<double>() == doctest::Approx(alexnet8("pase")).epsilon(1e-12));
  }
  SUBCASE("CSV: one row per strategy and device count") {
    std::string text = pase::read_text_file(csv);
    CHECK(text.find("graph,devices,strategy,cost,unit,speedup,search_seconds,note,per_device_bytes\n") == 0);
    CHECK(count(text, "\n") == 1 + 5 * 4);
    CHECK(text.find(csv_row("pase")) != std::string::npos);
    CHECK(text.find(csv_row("owt") + ",,") != std::string::npos);  // no search time, no note, then its bytes
  }
  SUBCASE("SVG: a well-formed grouped bar chart") {
    std::string text = pase::read_text_file(svg);
    CHECK(text.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") == 0);
    CHECK(text.substr(text.size() - 7) == "</svg>\n");
    CHECK(count(text, "class=\"bar\"") == 5 * 4);  // one bar per strategy and p
    CHECK(count(text, "<rect") == count(text, "</rect>") + 1 + 4);  // background and legend swatches are self-closed
    CHECK(count(text, "<text") == count(text, "</text>"));
    CHECK(count(text, "<title>") == count(text, "</title>"));
    for (const char* label : {">data-parallel</text>", ">owt</text>", ">mcmc</text>", ">pase</text>",
                              ">devices (p)</text>", ">speed-up over data-parallel</text>", ">64</text>"})
      CHECK(text.find(label) != std::string::npos);
    char title[64];
    std::snprintf(title, sizeof title, "<title>8 pase: %g</title>", speedup8("pase"));
    CHECK(text.find(title) != std::string::npos);
    CHECK(text.find("stroke-dasharray") != std::string::npos);  // the 1x reference line
  }
}

TEST_CASE("pase compare: transformer has a megatron bar") {
  pase::test::CommandResult result = pase::test::run_pase(
      "compare \"" + pase::test::source_path("data/graphs/transformer.json") + "\" --devices 4,8 --mcmc-iterations 2000");
  REQUIRE(result.status == 0);
  CHECK(result.output.find("megatron") != std::string::npos);
  CHECK(result.output.find("note: owt skipped: no fc layer, owt would equal data-parallel\n") != std::string::npos);
  CHECK(result.output.find("seed 1, 2000 iterations") != std::string::npos);
}

TEST_CASE("pase compare: bad input") {
  std::string alexnet = "\"" + pase::test::source_path("data/graphs/alexnet.json") + "\"";
  pase::test::CommandResult zero = pase::test::run_pase("compare " + alexnet + " --devices 4,0");
  CHECK(zero.status == 2);
  CHECK(zero.error == "error: --devices: expected a positive number of devices, got 0\n");
  pase::test::CommandResult missing = pase::test::run_pase("compare nothere.json --devices 4");
  CHECK(missing.status == 1);
  CHECK(missing.error == "error: nothere.json: cannot open file\n");
}

TEST_CASE("compare under a memory cap keeps the device counts that fit, and notes the one that does not") {
  const std::string compared = pase::test::write_temp_file("compare_capped.json", "");
  const pase::test::CommandResult run = pase::test::run_pase(
      "compare " + pase::test::source_path("data/graphs/alexnet.json") +
      " --devices 1,8 --memory-per-device 200000000 --json \"" + compared + "\"");
  REQUIRE(run.status == 0);
  const std::string note =
      "note: every strategy at p = 1 skipped: no strategy fits in 200000000 bytes (0.19 GiB) per device at p = 1: the "
      "least any strategy needs is 1484109824 bytes (1.38 GiB)\n";
  CHECK(run.output.find(note) != std::string::npos);
  const auto doc = nlohmann::json::parse(pase::read_text_file(compared));
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["devices"] == 8);
  CHECK(doc["skipped"][0]["strategy"] == "every strategy at p = 1");
  // Where no count fits, the refusal itself (exit 3).
  const pase::test::CommandResult none = pase::test::run_pase(
      "compare " + pase::test::source_path("data/graphs/alexnet.json") + " --devices 1 --memory-per-device 200000000");
  CHECK(none.status == 3);
  CHECK(none.error == "error: refused: no strategy fits in 200000000 bytes (0.19 GiB) per device at p = 1: the least "
                      "any strategy needs is 1484109824 bytes (1.38 GiB)\n");
}

TEST_CASE("compare --simulate: every row's step simulated, and FlexFlow's search on the simulated step") {
  const std::string alexnet = "\"" + pase::test::source_path("data/graphs/alexnet.json") + "\"";
  const std::string common = "compare " + alexnet + " --devices 8 --machine dgx-a100 --dtype bf16 --micro-batches 2 "
                             "--gradient-overlap off --mcmc-iterations 5000 --simulate";
  const std::string delta_json = pase::test::write_temp_file("compare_simulated.json", "");
  const std::string full_json = pase::test::write_temp_file("compare_simulated_full.json", "");
  const std::string csv = pase::test::write_temp_file("compare_simulated.csv", "");
  const pase::test::CommandResult delta = pase::test::run_pase(common + " --json \"" + delta_json + "\" --csv \"" + csv + "\"");
  REQUIRE(delta.status == 0);
  CHECK(delta.output.find("  strategy               step    simulated   speed-up") != std::string::npos);
  CHECK(delta.output.find("note: simulated: one step of each strategy as pase simulate runs it") != std::string::npos);
  CHECK(pase::read_text_file(csv).find(",per_device_bytes,simulated\n") != std::string::npos);
  const pase::test::CommandResult full =
      pase::test::run_pase(common + " --mcmc-simulation full --json \"" + full_json + "\"");
  REQUIRE(full.status == 0);
  const json a = json::parse(pase::read_text_file(delta_json)), b = json::parse(pase::read_text_file(full_json));
  const json& rows = a["results"][0]["strategies"];
  CHECK(a["strategies"] == json({"data-parallel", "owt", "mcmc", "mcmc-simulated", "fsdp", "pase"}));
  double data_parallel = 0;
  for (const json& row : rows) {
    CAPTURE(row["name"]);
    REQUIRE(row["simulated_step"].is_number());
    // The sum adds every gradient all-reduce; the simulator hides them behind the backward pass.
    CHECK(row["simulated_step"].get<double>() <= row["cost"].get<double>() * (1 + 1e-12));
    if (row["name"] == "data-parallel") data_parallel = row["simulated_step"];
  }
  const json& searched = rows[3];
  CHECK(searched["name"] == "mcmc-simulated");
  CHECK(searched["simulated_step"].get<double>() < data_parallel);  // it starts there and keeps its best
  CHECK(searched["note"].get<std::string>().find("objective: the simulated step; seed 1, ") == 0);
  CHECK(searched["note"].get<std::string>().find("(delta simulation)") != std::string::npos);
  // The full simulation walks the same chain, re-timing every task.
  const json& again = b["results"][0]["strategies"][3];
  CHECK(again["simulated_step"] == searched["simulated_step"]);
  CHECK(again["cost"] == searched["cost"]);
  CHECK(again["note"].get<std::string>().find(" tasks, 84 re-timed a move (full simulation)") != std::string::npos);
}

TEST_CASE("compare --simulate: what it refuses") {
  const std::string alexnet = "\"" + pase::test::source_path("data/graphs/alexnet.json") + "\"";
  const pase::test::CommandResult placed =
      pase::test::run_pase("compare " + alexnet + " --devices 8 --cost-model calibrated --machine dgx-a100 --simulate --mesh auto");
  CHECK(placed.status == 2);
  CHECK(placed.error ==
        "error: --simulate: not with --mesh (the simulator takes a strategy's unplaced terms; docs/simulate.md)\n");
  const pase::test::CommandResult how =
      pase::test::run_pase("compare " + alexnet + " --devices 8 --simulate --mcmc-simulation partial");
  CHECK(how.status == 2);
  CHECK(how.error == "error: --mcmc-simulation: expected delta or full, got 'partial'\n");
}

TEST_CASE("compare --simulate --pipeline-stages: the pipelines simulated in their schedule too") {
  const std::string gpt = pase::test::exported_model("gpt --layers 4 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
  const std::string out = pase::test::write_temp_file("compare_simulated_pipelines.json", "");
  const pase::test::CommandResult run =
      pase::test::run_pase("compare " + gpt + " --devices 8 --machine dgx-a100 --micro-batches 4 --pipeline-stages 2 "
                           "--simulate --mcmc-iterations 2000 --json \"" + out + "\"");
  REQUIRE(run.status == 0);
  size_t pipelines = 0;
  const json doc = json::parse(pase::read_text_file(out));
  for (const json& row : doc["results"][0]["strategies"]) {
    CAPTURE(row["name"]);
    REQUIRE(row["simulated_step"].is_number());
    if (row["name"].get<std::string>().find("-pipeline") == std::string::npos) continue;
    ++pipelines;
    // The formula adds each send; the simulator runs it beside compute.
    CHECK(row["simulated_step"].get<double>() == doctest::Approx(row["cost"].get<double>()).epsilon(0.05));
  }
  CHECK(pipelines == 2);
}
