// solve --uniform-blocks end to end (dp/uniform_blocks.h): every block of a
// small Llama takes one configuration per layer, the file says what was made
// uniform and the free optimum beside it, evaluate prices the strategy back,
// a memory cap holds, and per-layer techniques are made uniform with the
// configurations.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

// A Llama of four blocks: its runs of identical blocks start inside a layer
// (after the attention), so the uniform plan also needs the block cut in two.
std::string four_block_llama() {
  const std::string path = test::write_temp_file("uniform_llama.json", "");
  const test::CommandResult made = test::run_pase(
      "models export llama --layers 4 --d-model 64 --heads 4 --kv-heads 2 --ff 96 --seq 16 --vocab 100 --batch 8 -o " +
      path);
  REQUIRE(made.status == 0);
  return path;
}

}  // namespace

TEST_CASE("solve --uniform-blocks: one configuration per layer of every block, the free optimum beside it") {
  const std::string graph = four_block_llama();
  for (const char* model : {"", " --cost-model calibrated --machine dgx-a100 --dtype bf16"})
    for (int devices : {8, 16}) {
      CAPTURE(model);
      CAPTURE(devices);
      const std::string options = " --devices " + std::to_string(devices) + model + " --no-plan --json";
      const test::CommandResult uniform = test::run_pase("solve " + graph + options + " --uniform-blocks");
      const test::CommandResult free = test::run_pase("solve " + graph + options);
      REQUIRE(uniform.status == 0);
      REQUIRE(free.status == 0);
      const json strategy = json::parse(uniform.output);
      const double free_cost = json::parse(free.output)["total_cost"].get<double>();
      const json& report = strategy["solver"]["uniform_blocks"];
      CHECK(report["free_optimum_cost"].get<double>() == doctest::Approx(free_cost).epsilon(1e-12));
      CHECK(strategy["total_cost"].get<double>() >= free_cost * (1 - 1e-12));
      REQUIRE(report["runs"].size() == 1);
      CHECK(report["runs"][0]["blocks"] == 3);
      CHECK(report["runs"][0]["layers_around"] == report["runs"][0]["layers_per_block"]);
      // Every layer of model/layers.i/ has the configuration of its namesake in every other block.
      std::map<std::string, std::set<std::vector<int>>> configs;
      const std::string prefix = "model/layers.";
      size_t in_blocks = 0;
      for (const json& layer : strategy["layers"]) {
        const std::string name = layer["name"].get<std::string>();
        if (name.rfind(prefix, 0) != 0) continue;
        ++in_blocks;  // "model/layers.I/X": X's configurations
        configs[name.substr(name.find('/', prefix.size()) + 1)].insert(layer["config"].get<std::vector<int>>());
      }
      CHECK(in_blocks == 4 * configs.size());
      for (const auto& [name, seen] : configs) {
        CAPTURE_BOUND(name);
        CHECK(seen.size() == 1);
      }
      // The strategy prices back at its cost.
      const std::string file = test::write_temp_file("uniform_strategy.json", uniform.output);
      const test::CommandResult priced =
          test::run_pase("evaluate " + graph + " --devices " + std::to_string(devices) + model + " --strategy " + file + " --json");
      REQUIRE(priced.status == 0);
      CHECK(json::parse(priced.output)["total_cost"].get<double>() ==
            doctest::Approx(strategy["total_cost"].get<double>()).epsilon(1e-12));
    }
}

TEST_CASE("solve --uniform-blocks: the table's line, and under a cap") {
  const std::string graph = four_block_llama();
  const test::CommandResult table = test::run_pase("solve " + graph + " --devices 8 --no-plan --uniform-blocks");
  REQUIRE(table.status == 0);
  CHECK(table.output.find("uniform blocks: 3 blocks of 17 layers (from 'model/layers.0/post_attention_layernorm', and "
                          "one more cut in two by its ends), one configuration each: ") != std::string::npos);
  // Under a cap: the capped search over uniform strategies, within the cap,
  // never below the free capped search's bound.
  const test::CommandResult capped = test::run_pase("solve " + graph +
                                                    " --devices 8 --no-plan --uniform-blocks --memory-per-device 700KiB --json");
  REQUIRE(capped.status == 0);
  const json strategy = json::parse(capped.output);
  CHECK(strategy["memory"]["per_device_bytes"].get<uint64_t>() <= 700 * 1024);
  const test::CommandResult free =
      test::run_pase("solve " + graph + " --devices 8 --no-plan --memory-per-device 700KiB --json");
  REQUIRE(free.status == 0);
  CHECK(strategy["total_cost"].get<double>() >=
        json::parse(free.output)["memory"]["lower_bound_cost"].get<double>() * (1 - 1e-12));
  CHECK(strategy["solver"]["uniform_blocks"]["free_optimum_cost"].get<double>() ==
        doctest::Approx(json::parse(free.output)["total_cost"].get<double>()).epsilon(1e-12));
}

TEST_CASE("solve --uniform-blocks with --zero auto --recompute auto: one configuration and one technique per layer of every block") {
  const std::string graph = four_block_llama();
  const std::string options = " --devices 8 --no-plan --zero auto --recompute auto --memory-per-device 600KiB --json";
  const test::CommandResult uniform = test::run_pase("solve " + graph + options + " --uniform-blocks");
  const test::CommandResult free = test::run_pase("solve " + graph + options);
  REQUIRE(uniform.status == 0);
  REQUIRE(free.status == 0);
  const json strategy = json::parse(uniform.output);
  const json free_strategy = json::parse(free.output);
  CHECK(strategy["memory"]["per_device_bytes"].get<uint64_t>() <= 600 * 1024);
  CHECK(strategy["solver"]["uniform_blocks"]["free_optimum_cost"].get<double>() ==
        doctest::Approx(free_strategy["total_cost"].get<double>()).epsilon(1e-12));
  CHECK(strategy["total_cost"].get<double>() >=
        free_strategy["memory"]["lower_bound_cost"].get<double>() * (1 - 1e-12));
  // Every block (the one the run cuts in two included) holds each layer's configuration and techniques alike.
  std::map<std::string, std::set<std::string>> seen;
  const std::string prefix = "model/layers.";
  for (const json& layer : strategy["layers"]) {
    const std::string name = layer["name"].get<std::string>();
    if (name.rfind(prefix, 0) != 0) continue;
    seen[name.substr(name.find('/', prefix.size()) + 1)].insert(
        layer["config"].dump() + " " + layer["recompute"].dump() + " " + layer["zero"].dump());
  }
  for (const auto& [name, kinds] : seen) {
    CAPTURE_BOUND(name);
    CHECK(kinds.size() == 1);
  }
  const std::string file = test::write_temp_file("uniform_techniques.json", uniform.output);
  const test::CommandResult priced = test::run_pase("evaluate " + graph + " --devices 8 --strategy " + file + " --json");
  REQUIRE(priced.status == 0);
  CHECK(json::parse(priced.output)["total_cost"].get<double>() ==
        doctest::Approx(strategy["total_cost"].get<double>()).epsilon(1e-12));
}

TEST_CASE("--uniform-blocks in frontier, compare and batch: the optimum solve --uniform-blocks finds") {
  const std::string graph = four_block_llama();
  const test::CommandResult solved = test::run_pase("solve " + graph + " --devices 8 --no-plan --uniform-blocks --json");
  REQUIRE(solved.status == 0);
  const double uniform_cost = json::parse(solved.output)["total_cost"].get<double>();
  // Frontier: its cheapest point is that optimum; no point beats the free
  // frontier's bound at its memory (the bound of the free point of the least
  // memory at or above it holds for every strategy within that memory).
  const std::string uniform_file = test::write_temp_file("uniform_frontier.json", "");
  const std::string free_file = test::write_temp_file("free_frontier.json", "");
  REQUIRE(test::run_pase("frontier " + graph + " --devices 8 --uniform-blocks --json " + uniform_file).status == 0);
  REQUIRE(test::run_pase("frontier " + graph + " --devices 8 --json " + free_file).status == 0);
  const json uniform = json::parse(read_text_file(uniform_file));
  const json free = json::parse(read_text_file(free_file));
  CHECK(uniform["uniform_blocks"] == true);
  CHECK(uniform["points"].back()["cost"].get<double>() == doctest::Approx(uniform_cost).epsilon(1e-12));
  for (const json& point : uniform["points"]) {
    double free_bound = 0;
    for (const json& other : free["points"])  // least memory first
      if (other["per_device_bytes"].get<uint64_t>() >= point["per_device_bytes"].get<uint64_t>()) {
        free_bound = other["lower_bound_cost"].get<double>();
        break;
      }
    CHECK(point["cost"].get<double>() >= free_bound * (1 - 1e-12));
  }
  CHECK(uniform["points"].size() < free["points"].size());  // fewer strategies, fewer trade-offs
  // Compare: the optimum's row, its note naming the free optimum.
  const std::string compared_file = test::write_temp_file("uniform_compare.json", "");
  REQUIRE(test::run_pase("compare " + graph + " --devices 8 --uniform-blocks --json " + compared_file).status == 0);
  const json compared = json::parse(read_text_file(compared_file));  // kept: the loop reads into it
  for (const json& row : compared["results"][0]["strategies"])
    if (row["name"] == "pase") {
      CHECK(row["cost"].get<double>() == doctest::Approx(uniform_cost).epsilon(1e-12));
      CHECK(row["note"].get<std::string>().rfind("uniform blocks (the free optimum ", 0) == 0);
    }
  // Batch: the same optimum, recorded as uniform, and checked only against a uniform run.
  const std::string summary = test::write_temp_file("uniform_batch.json", "");
  REQUIRE(test::run_pase("batch " + graph + " --devices 8 --uniform-blocks --summary " + summary).status == 0);
  const json recorded = json::parse(read_text_file(summary));
  CHECK(recorded["uniform_blocks"] == true);
  CHECK(recorded["results"][0]["cost"].get<double>() == doctest::Approx(uniform_cost).epsilon(1e-12));
  CHECK(test::run_pase("batch " + graph + " --devices 8 --uniform-blocks --expect " + summary).status == 0);
  const test::CommandResult free_run = test::run_pase("batch " + graph + " --devices 8 --expect " + summary);
  CHECK(free_run.status == 1);
  CHECK(free_run.error == "error: " + summary + ": field 'uniform_blocks': recorded with --uniform-blocks, this run has none\n");
}
