// `pase solve --pipeline-stages` end to end (docs/pipeline.md): the strategy
// file's pipeline and each layer's stage, read back byte for byte; the table
// of stages; the schedules' memory; and the exact one-line refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "stages/device_splits.h"
#include "strategy/strategy_document.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::ordered_json;

namespace {

// A GPT of four blocks, small enough to solve in a blink.
const std::string& small_gpt() {
  static const std::string path = [] {
    const test::CommandResult made = test::run_pase(
        "models export gpt --layers 4 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
    REQUIRE(made.status == 0);
    return test::write_temp_file("pipeline_gpt.json", made.output);
  }();
  return path;
}

}  // namespace

TEST_CASE("solve --pipeline-stages 2: the pipeline object, every layer's stage, read back byte for byte") {
  const test::CommandResult solved =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json");
  REQUIRE(solved.status == 0);
  const json strategy = json::parse(solved.output);
  const json& pipeline = strategy["training"]["pipeline"];
  CHECK(pipeline["stages"] == 2);
  CHECK(pipeline["schedule"] == "1f1b");
  CHECK(pipeline["stage_devices"].dump() == "[4,4]");
  REQUIRE(pipeline["stage_cost"].size() == 2);
  REQUIRE(pipeline["stage_memory_bytes"].size() == 2);
  const double t0 = pipeline["stage_cost"][0], t1 = pipeline["stage_cost"][1];
  // The step: sum t + (M - 1) max t + the largest step work (at least nothing).
  const double total = strategy["total_cost"];
  CHECK(total >= t0 + t1 + 3 * std::max(t0, t1) - 1e-6 * total);
  CHECK(strategy["memory"]["lower_bound_cost"].get<double>() <= total);
  CHECK(strategy["memory"]["per_device_bytes"] ==
        std::max(pipeline["stage_memory_bytes"][0].get<uint64_t>(), pipeline["stage_memory_bytes"][1].get<uint64_t>()));
  // Stages are contiguous in layer order, each on at most its own devices.
  int stage = 0;
  for (const json& layer : strategy["layers"]) {
    CHECK(layer["stage"] >= stage);
    stage = layer["stage"];
    CHECK(layer["devices_used"] <= 4);
  }
  CHECK(stage == 1);
  CHECK(strategy["layers"][0]["stage"] == 0);
  // Read back with its plan and written again: the same bytes.
  CHECK(write_strategy(parse_strategy_file(solved.output, "pipeline.json", /*with_plan=*/true)) == solved.output);
}

TEST_CASE("solve --pipeline-stages: the table of stages, and what the search tried") {
  const test::CommandResult solved =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages auto --micro-batches 4");
  REQUIRE(solved.status == 0);
  CHECK(solved.output.rfind("gpt on 8 devices in ", 0) == 0);
  CHECK(solved.output.find("stage  layers") != std::string::npos);
  CHECK(solved.output.find("step time ") != std::string::npos);
  // auto: the divisors of 8 (1, 2, 4, 8), least bound first.
  CHECK(solved.output.find("pipelines of 4 stage counts x 1 micro-batch counts") != std::string::npos);
}

TEST_CASE("stages and micro-batches on auto under a cap: the least step of every count solved alone") {
  // Best first over bounds with and without a DP, stage ranges ruled out by
  // their Lagrangian bounds: none of it may lose the best (M, S).
  const std::string cap = " --devices 8 --memory-per-device 4MiB --json";
  auto step = [&](const std::string& options) -> std::optional<double> {
    const test::CommandResult solved = test::run_pase("solve " + small_gpt() + cap + options);
    if (solved.status != 0) return std::nullopt;
    return json::parse(solved.output)["total_cost"].get<double>();
  };
  // Under the sanitizers (ten times slower, after memory errors, not numbers) the corners only.
  const std::vector<int> micro_batches = test::sanitized_build() ? std::vector<int>{1, 16} : std::vector<int>{1, 2, 4, 8, 16};
  const std::vector<int> stages = test::sanitized_build() ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8};
  double least = INFINITY;
  int fits = 0;
  for (int m : micro_batches)
    for (int s : stages)
      if (const std::optional<double> alone =
              step(" --micro-batches " + std::to_string(m) + " --pipeline-stages " + std::to_string(s))) {
        least = std::min(least, *alone);
        ++fits;
      }
  CHECK(fits >= (test::sanitized_build() ? 1 : 4));
  const std::optional<double> searched = step(" --micro-batches auto --pipeline-stages auto");
  REQUIRE(searched);
  if (test::sanitized_build()) CHECK(*searched <= least);
  else CHECK(*searched == least);
}

TEST_CASE("explain --boundary: the file's boundary against one block either way, each stage its optimum") {
  const std::string file = test::write_temp_file("explain_boundary.json", "");
  REQUIRE(test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --out \"" + file +
                         "\"").status == 0);
  const json strategy = json::parse(read_text_file(file));
  const test::CommandResult explained =
      test::run_pase("explain " + small_gpt() + " --strategy \"" + file + "\" --boundary 1 --json");
  REQUIRE(explained.status == 0);
  const json answer = json::parse(explained.output);
  CHECK(answer["boundary"] == 1);
  CHECK(answer["file_step"].get<double>() == strategy["total_cost"].get<double>());
  REQUIRE(answer["moves"].size() == 3);  // here, one earlier, one later
  const json& here = answer["moves"][0];
  CHECK(here["moved"] == 0);
  CHECK(here["step"].get<double>() == doctest::Approx(strategy["total_cost"].get<double>()).epsilon(1e-12));
  int stage1 = -1;  // where the file's stage 1 begins
  for (size_t v = 0; v < strategy["layers"].size() && stage1 < 0; ++v)
    if (strategy["layers"][v]["stage"] == 1) stage1 = static_cast<int>(v);
  CHECK(here["begins_at"] == strategy["layers"][static_cast<size_t>(stage1)]["name"]);
  for (size_t m = 1; m < 3; ++m) {  // the search chose the least step over every partition
    CAPTURE(m);
    CHECK(answer["moves"][m]["moved"] == (m == 1 ? -1 : 1));
    CHECK(answer["moves"][m]["step"].get<double>() >= here["step"].get<double>() * (1 - 1e-12));
    CHECK(answer["moves"][m]["stages"].size() == 2);
  }
  const test::CommandResult table = test::run_pase("explain " + small_gpt() + " --strategy \"" + file + "\" --boundary 1");
  REQUIRE(table.status == 0);
  CHECK(table.output.find("boundary 1, where stage 1 begins") != std::string::npos);
  CHECK(table.output.find("1 earlier: the slowest stage is ") != std::string::npos);
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {" --boundary 2 --strategy \"" + file + "\"",
       "error: --boundary 2: a pipeline of 2 stages has boundaries 1 to 1 (boundary k: where stage k begins)\n"},
      {" --boundary 1", "error: --boundary: explains a pipeline strategy file's boundary (add --strategy FILE)\n"},
      {" --boundary 1 --all --strategy \"" + file + "\"",
       "error: explain: give exactly one of --layer NAME, --all or --boundary K\n"},
  };
  for (const auto& refusal : refusals) {
    CAPTURE(refusal.first);
    const test::CommandResult refused = test::run_pase("explain " + small_gpt() + refusal.first);
    CHECK(refused.status == 2);
    CHECK(refused.error == refusal.second);
  }
}

TEST_CASE("compare --pipeline-stages: pase's pipeline and Megatron's equal stages, as solve and evaluate price them") {
  const std::string compared = test::write_temp_file("compare_pipeline.json", "");
  const test::CommandResult table = test::run_pase("compare " + small_gpt() +
                                                   " --devices 8 --pipeline-stages 2 --micro-batches 4 --json \"" +
                                                   compared + "\"");
  REQUIRE(table.status == 0);
  CHECK(table.output.find("     8  megatron-pipeline  ") != std::string::npos);  // the column as wide as the name
  const json results = json::parse(read_text_file(compared))["results"];
  REQUIRE(results.size() == 1);
  std::map<std::string, json> rows;
  for (const json& row : results[0]["strategies"]) rows[row["name"].get<std::string>()] = row;
  REQUIRE(rows.count("pase-pipeline") == 1);
  REQUIRE(rows.count("megatron-pipeline") == 1);
  auto step_of = [](const std::string& command) {
    const test::CommandResult priced = test::run_pase(command);
    REQUIRE(priced.status == 0);
    return json::parse(priced.output)["total_cost"].get<double>();
  };
  CHECK(rows["pase-pipeline"]["cost"].get<double>() ==
        step_of("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --no-plan --json"));
  CHECK(rows["megatron-pipeline"]["cost"].get<double>() ==
        step_of("evaluate " + small_gpt() + " --devices 8 --baseline megatron --pipeline-stages 2 --micro-batches 4 --json"));
  CHECK(rows["megatron-pipeline"]["note"] == "2 stages of 4 devices, 4 micro-batches");
  CHECK(rows["pase-pipeline"]["note"].get<std::string>().rfind("2 stages of 4 devices, 4 micro-batches, ", 0) == 0);
  for (const char* name : {"pase-pipeline", "megatron-pipeline"})
    CHECK(rows[name]["speedup"].get<double>() ==
          doctest::Approx(rows["data-parallel"]["cost"].get<double>() / rows[name]["cost"].get<double>()).epsilon(1e-12));
  // --mesh auto: each stage on its default mesh's layouts, as solve and evaluate price it with --mesh auto.
  const test::CommandResult placed = test::run_pase("compare " + small_gpt() +
                                                    " --devices 8 --pipeline-stages 2 --micro-batches 4 --mesh auto "
                                                    "--json \"" + compared + "\"");
  REQUIRE(placed.status == 0);
  rows.clear();
  const json placed_results = json::parse(read_text_file(compared))["results"];
  for (const json& row : placed_results[0]["strategies"]) rows[row["name"].get<std::string>()] = row;
  CHECK(rows["pase-pipeline"]["cost"].get<double>() ==
        step_of("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --mesh auto --json"));
  CHECK(rows["megatron-pipeline"]["cost"].get<double>() ==
        step_of("evaluate " + small_gpt() +
                " --devices 8 --baseline megatron --pipeline-stages 2 --micro-batches 4 --mesh auto --json"));
  CHECK(rows["pase-pipeline"]["mesh"] == "each stage's default mesh");
  const test::CommandResult refused =
      test::run_pase("compare " + small_gpt() + " --devices 8 --pipeline-stages 2 --mesh search");
  CHECK(refused.status == 2);
  CHECK(refused.error ==
        "error: --pipeline-stages: with --mesh auto only in compare (each stage on its default mesh's layouts)\n");
}

namespace {

// A GPT whose head (a vocabulary of 16384) outweighs a block: 3 stages on 8
// devices step fastest as 2, 2, 4.
const std::string& heavy_head_gpt() {
  return test::exported_model("gpt --layers 4 --d-model 128 --heads 4 --seq 32 --vocab 16384 --batch 16");
}

// The step of `solve` with `options` (nullopt: nothing fits, exit 3).
std::optional<double> step_with(const std::string& graph, const std::string& options) {
  const test::CommandResult solved = test::run_pase("solve " + graph + " " + options + " --no-plan --json");
  if (solved.status == 3) return std::nullopt;
  REQUIRE(solved.status == 0);
  return json::parse(solved.output)["total_cost"].get<double>();
}

}  // namespace

TEST_CASE("--stage-devices auto: the least step over every split, each given with --stage-devices") {
  // 3 stages without a cap; 2 under a cap that binds (the search's bounds with unequal devices).
  for (const auto& [stages, cap] : {std::pair{3, std::string()}, std::pair{2, std::string(" --memory-per-device 17000000")}}) {
    const std::string options = "--devices 8 --pipeline-stages " + std::to_string(stages) + " --micro-batches 8" + cap;
    const test::CommandResult searched =
        test::run_pase("solve " + heavy_head_gpt() + " " + options + " --stage-devices auto --no-plan --json");
    REQUIRE(searched.status == 0);
    const json strategy = json::parse(searched.output);
    std::vector<std::string> splits;  // every split of 8 devices into `stages`, as --stage-devices spells it
    const std::function<void(int, int, const std::string&)> split = [&](int left, int parts, const std::string& so_far) {
      if (parts == 1) return splits.push_back(so_far + std::to_string(left));
      for (int d = 1; d + parts - 1 <= left; ++d) split(left - d, parts - 1, so_far + std::to_string(d) + ",");
    };
    split(8, stages, "");
    REQUIRE(splits.size() == (stages == 3 ? 21u : 7u));
    if (test::sanitized_build()) {  // ten times slower there: the search's own split and the two ends of the list
      std::string chosen;
      for (const json& n : strategy["training"]["pipeline"]["stage_devices"]) chosen += (chosen.empty() ? "" : ",") + n.dump();
      splits = {splits.front(), chosen, splits.back()};
    }
    double least = INFINITY;
    std::string least_split;
    for (const std::string& each : splits) {
      const std::optional<double> step = step_with(heavy_head_gpt(), options + " --stage-devices " + each);
      if (step && *step < least) least = *step, least_split = each;
    }
    CHECK(strategy["total_cost"].get<double>() == least);
    if (stages == 3) {
      CHECK(least_split == "2,2,4");
      CHECK(strategy["training"]["pipeline"]["stage_devices"].dump() == "[2,2,4]");
    } else {
      CHECK(strategy["memory"]["per_device_bytes"].get<uint64_t>() <= 17000000);
    }
  }
}

TEST_CASE("--stage-devices auto with --pipeline-stages auto: every stage count and split of 4 devices") {
  const std::string options = "--devices 4 --micro-batches 4";
  const std::optional<double> searched =
      step_with(heavy_head_gpt(), options + " --pipeline-stages auto --stage-devices auto");
  REQUIRE(searched.has_value());
  double least = *step_with(heavy_head_gpt(), options);  // one stage
  for (const char* split : {"1,3", "2,2", "3,1", "1,1,2", "1,2,1", "2,1,1", "1,1,1,1"})
    least = std::min(least, step_with(heavy_head_gpt(), options + " --stage-devices " + split).value());
  CHECK(*searched == least);
  const test::CommandResult table =
      test::run_pase("solve " + heavy_head_gpt() + " " + options + " --pipeline-stages auto --stage-devices auto --no-plan");
  CHECK(table.output.find(" of 4 stage counts x 8 device splits in all (4 ruled out by their layers' least costs) x 1 "
                          "micro-batch counts") != std::string::npos);
}

TEST_CASE("--stage-devices auto: refused for a baseline, more stages than units and more chunks than blocks, in one line") {
  const test::CommandResult baseline = test::run_pase("evaluate " + small_gpt() +
                                                      " --devices 8 --baseline megatron --pipeline-stages 2 "
                                                      "--stage-devices auto");
  CHECK(baseline.status == 2);
  CHECK(baseline.error == "error: --stage-devices auto: a baseline's or a file's stages are given, not searched\n");
  // Interleaved: more chunks than the graph repeats blocks, said as for a given split.
  const test::CommandResult chunks = test::run_pase("solve " + small_gpt() +
                                                    " --devices 64 --pipeline-stages 4 --stage-devices auto "
                                                    "--schedule interleaved:2 --micro-batches 16");
  CHECK(chunks.status == 2);
  CHECK(chunks.error == "error: --pipeline-stages: 4 interleaved stages of 2 chunks need 8 blocks, but the graph "
                        "repeats 4\n");
  const test::CommandResult groups = test::run_pase("solve " + small_gpt() +
                                                    " --devices 8 --pipeline-stages 3 --stage-devices auto "
                                                    "--schedule interleaved:2 --micro-batches 16");
  CHECK(groups.status == 2);
  CHECK(groups.error == "error: --micro-batches: 16 is not a multiple of the 3 stages (Megatron-LM's interleaved "
                        "schedule runs the micro-batches in groups of the stage count)\n");
  const test::CommandResult too_few =
      test::run_pase("solve " + small_gpt() +
                     " --devices 32 --machine dgx-a100 --cost-model calibrated --pipeline-stages 5 --stage-devices auto");
  CHECK(too_few.status == 2);
  CHECK(too_few.error == "error: --stage-devices auto: 5 stages need at least as many units of 8 devices (a node's), "
                         "and 32 devices are 4\n");
}

TEST_CASE("--stage-devices auto: splits whose layers' least costs reach the best step are not searched, and the answer "
          "is every split's least") {
  // Each layer's ZeRO stage and recomputation the solver's too, under a cap: least costs over every technique.
  for (const std::string techniques : {"", " --zero auto --recompute auto --memory-per-device 30MB"}) {
    if (!techniques.empty() && test::sanitized_build()) continue;  // 35 more solves: long there
    const std::string options =
        "--devices 8 --pipeline-stages 4 --micro-batches 8 --machine dgx-a100 --dtype bf16" + techniques;
    const test::CommandResult searched =
        test::run_pase("solve " + heavy_head_gpt() + " " + options + " --stage-devices auto --no-plan --json");
    REQUIRE(searched.status == 0);
    CHECK(searched.error.find(" x 35 device splits in all (15 ruled out by their layers' least costs) x ") !=
          std::string::npos);
    double least = INFINITY;
    for (const std::vector<int64_t>& split : device_splits(8, 4, 1, 100)) {
      std::string spelled;
      for (int64_t n : split) spelled += (spelled.empty() ? "" : ",") + std::to_string(n);
      const std::optional<double> step = step_with(heavy_head_gpt(), options + " --stage-devices " + spelled);
      if (step) least = std::min(least, *step);
    }
    CHECK(json::parse(searched.output)["total_cost"].get<double>() == least);
  }
}

TEST_CASE("--stage-devices auto, interleaved: the least step over every split, each given with --stage-devices; "
          "splits whose layers' least costs reach the best step not searched") {
  const std::string options =
      "--devices 8 --pipeline-stages 2 --schedule interleaved:2 --micro-batches 8 --machine dgx-a100 --dtype bf16";
  const test::CommandResult searched =
      test::run_pase("solve " + heavy_head_gpt() + " " + options + " --stage-devices auto --no-plan --json");
  REQUIRE(searched.status == 0);
  CHECK(searched.error.find(" x 7 device splits in all (1 ruled out by their layers' least costs) x ") != std::string::npos);
  double least = INFINITY;
  for (const char* split : {"1,7", "2,6", "3,5", "4,4", "5,3", "6,2", "7,1"})
    least = std::min(least, step_with(heavy_head_gpt(), options + " --stage-devices " + split).value());
  const json strategy = json::parse(searched.output);
  CHECK(strategy["total_cost"].get<double>() == least);
  CHECK(strategy["training"]["pipeline"]["schedule"] == "interleaved:2");
}

TEST_CASE("--chunks auto: each interleaved stage's share of the blocks searched, faster than the equal split here; "
          "the file read back prices alike; refused where nothing is searched, in one line") {
  const std::string& graph = test::exported_model("gpt --layers 12 --d-model 128 --heads 4 --seq 32 --vocab 16384 --batch 24");
  const std::string options = "--devices 6 --pipeline-stages 3 --schedule interleaved:2 --micro-batches 12";
  const double equal = step_with(graph, options).value();
  CHECK(step_with(graph, options + " --chunks equal").value() == equal);
  const test::CommandResult searched = test::run_pase("solve " + graph + " " + options + " --chunks auto --no-plan");
  REQUIRE(searched.status == 0);
  // The embedding's and the head's stages 2 blocks each (1 per chunk), the middle one 8: 6.5% faster.
  CHECK(searched.output.find("transformer/wte .. transformer/h.0/mlp/residual and 1 more chunk") != std::string::npos);
  CHECK(searched.output.find("transformer/h.1/ln_1 .. transformer/h.4/mlp/residual and 1 more chunk") != std::string::npos);
  const test::CommandResult written = test::run_pase("solve " + graph + " " + options + " --chunks auto --json");
  REQUIRE(written.status == 0);
  const std::string out = test::write_temp_file("pipeline_chunks.json", written.output);
  const json file = json::parse(written.output);
  const double step = file["total_cost"].get<double>();
  CHECK(step < 0.94 * equal);
  CHECK(file["memory"]["lower_bound_cost"].get<double>() <= step);
  const test::CommandResult priced =
      test::run_pase("evaluate " + graph + " --devices 6 --json --strategy " + out);
  REQUIRE(priced.status == 0);
  CHECK(json::parse(priced.output)["total_cost"].get<double>() == step);
  for (const auto& [more, error] : std::vector<std::pair<std::string, std::string>>{
           {" --chunks some --schedule interleaved:2", "--chunks: expected equal or auto, got 'some'"},
           {" --chunks auto --schedule 1f1b",
            "--chunks auto: only with --schedule interleaved:V (1f1b and gpipe stages are ranges whose boundaries are "
            "searched already)"},
       }) {
    const test::CommandResult refused = test::run_pase("solve " + graph + " --devices 6 --pipeline-stages 3 --micro-batches 12" + more);
    CHECK(refused.status == 2);
    CHECK(refused.error == "error: " + error + "\n");
  }
  const test::CommandResult baseline =
      test::run_pase("evaluate " + graph + " " + options + " --baseline megatron --chunks auto");
  CHECK(baseline.status == 2);
  CHECK(baseline.error == "error: --chunks auto: a baseline's or a file's chunks are given, not searched\n");
}

TEST_CASE("--chunks auto with --stage-devices auto: the least step over every split, each given with --stage-devices "
          "and its shares of the blocks searched") {
  const std::string& graph = test::exported_model("gpt --layers 12 --d-model 128 --heads 4 --seq 32 --vocab 16384 --batch 24");
  const std::string options = "--devices 6 --pipeline-stages 3 --schedule interleaved:2 --micro-batches 12 --chunks auto";
  const test::CommandResult searched =
      test::run_pase("solve " + graph + " " + options + " --stage-devices auto --no-plan --json");
  REQUIRE(searched.status == 0);
  CHECK(searched.error.find(" x 10 device splits in all") != std::string::npos);
  double least = INFINITY;
  for (const std::vector<int64_t>& split : device_splits(6, 3, 1, 100)) {
    std::string spelled;
    for (int64_t n : split) spelled += (spelled.empty() ? "" : ",") + std::to_string(n);
    least = std::min(least, step_with(graph, options + " --stage-devices " + spelled).value());
  }
  const json strategy = json::parse(searched.output);
  CHECK(strategy["total_cost"].get<double>() == least);
  CHECK(strategy["total_cost"].get<double>() <= step_with(graph, options).value());  // the equal devices among them
}

TEST_CASE("--stage-devices auto past 4096 splits below the best step: the least bounds searched, the rest's kept in "
          "the lower bound") {
  if (test::sanitized_build()) return;  // 4096 pipelines searched: a minute there
  const std::string options = "--devices 24 --pipeline-stages 5 --micro-batches 8";
  const test::CommandResult searched =
      test::run_pase("solve " + heavy_head_gpt() + " " + options + " --stage-devices auto --no-plan --json");
  REQUIRE(searched.status == 0);
  CHECK(searched.error.find(" x 8855 device splits in all (4759 ruled out by their layers' least costs, or left out "
                            "past 4096 of a stage count, their least bound kept in the lower bound) x ") !=
        std::string::npos);
  const json strategy = json::parse(searched.output);
  const double step = strategy["total_cost"].get<double>();
  const double bound = strategy["memory"]["lower_bound_cost"].get<double>();
  CHECK(bound <= step);
  for (const char* split : {"4,5,5,5,5", "5,5,5,5,4", "1,1,1,1,20", "8,4,4,4,4", "2,2,4,8,8"})
    CHECK(bound <= step_with(heavy_head_gpt(), options + " --stage-devices " + split).value());
}

TEST_CASE("a stage count whose DP goes past the table limit is skipped, its bound kept; the others are searched") {
  const std::string options = "--devices 8 --micro-batches 4 --max-table-bytes 700";
  const test::CommandResult searched =
      test::run_pase("solve " + small_gpt() + " " + options + " --pipeline-stages auto --no-plan --json");
  REQUIRE(searched.status == 0);
  CHECK(searched.error.find(" past the DP's limits, their bounds kept): ") != std::string::npos);
  const json strategy = json::parse(searched.output);
  // The least step of the counts that run at that limit; the one that does not is refused alone.
  double least = INFINITY;
  int refused = 0;
  for (int s : {1, 2, 4, 8}) {
    const test::CommandResult alone = test::run_pase("solve " + small_gpt() + " " + options +
                                                     " --pipeline-stages " + std::to_string(s) + " --no-plan --json");
    if (alone.status == 3) {
      ++refused;
      CHECK(alone.error.rfind("error: refused: the DP tables would need ", 0) == 0);
      continue;
    }
    REQUIRE(alone.status == 0);
    least = std::min(least, json::parse(alone.output)["total_cost"].get<double>());
  }
  CHECK(refused == 2);  // one refused in the search, the other bounded out before it
  CHECK(strategy["total_cost"].get<double>() == least);
  CHECK(strategy["memory"]["lower_bound_cost"].get<double>() <= least);
  // Where every count goes past the limit, the first refusal.
  const test::CommandResult none = test::run_pase("solve " + small_gpt() +
                                                  " --devices 8 --micro-batches 4 --max-table-bytes 300 "
                                                  "--pipeline-stages auto --no-plan");
  CHECK(none.status == 3);
  CHECK(none.error.rfind("error: refused: the DP tables would need ", 0) == 0);
}

TEST_CASE("gpipe holds every micro-batch on every stage, 1f1b S - k on stage k") {
  auto stage_bytes = [](const std::string& schedule) {
    const test::CommandResult solved = test::run_pase("solve " + small_gpt() +
                                                      " --devices 8 --pipeline-stages 2 --micro-batches 8 --json --schedule " + schedule);
    REQUIRE(solved.status == 0);
    return json::parse(solved.output)["training"]["pipeline"]["stage_memory_bytes"];
  };
  const json onef = stage_bytes("1f1b"), gpipe = stage_bytes("gpipe");
  CHECK(gpipe[0].get<uint64_t>() > onef[0].get<uint64_t>());
  CHECK(gpipe[1].get<uint64_t>() > onef[1].get<uint64_t>());
}

TEST_CASE("pipeline options a run cannot take are refused in one line") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--pipeline-stages 3", "error: --pipeline-stages: 3 stages do not divide 8 devices evenly (give each stage's devices)\n"},
      {"--pipeline-stages two", "error: --pipeline-stages: expected a number of stages or auto, got 'two'\n"},
      {"--stage-devices 6,1", "error: --stage-devices add up to 7, not the 8 devices\n"},
      {"--stage-devices 6,x", "error: --stage-devices: expected positive device counts separated by commas (12,4), got '6,x'\n"},
      {"--stage-devices 4,4 --pipeline-stages 3", "error: --stage-devices: gives 2 stages, but --pipeline-stages is 3\n"},
      {"--schedule zb", "error: --schedule: expected 1f1b, gpipe or interleaved:V (V from 2 to 9999 chunks per stage), got 'zb'\n"},
      {"--schedule interleaved:3 --pipeline-stages 2 --micro-batches 2",
       "error: --pipeline-stages: 2 interleaved stages of 3 chunks need 6 blocks, but the graph repeats 4\n"},
      {"--schedule interleaved:2 --pipeline-stages 2 --micro-batches 1",
       "error: --micro-batches: 1 is not a multiple of the 2 stages (Megatron-LM's interleaved schedule runs the "
       "micro-batches in groups of the stage count)\n"},
      {"--pipeline-stages 2 --mesh 2x4",
       "error: --mesh: not with pipeline stages yet (each stage is solved without a mesh, or with --mesh auto on the "
       "default mesh of its devices; docs/pipeline.md)\n"},
  };
  for (const auto& [options, message] : cases) {
    CAPTURE_BOUND(options);
    const test::CommandResult run = test::run_pase("solve " + small_gpt() + " --devices 8 " + options);
    CHECK(run.status == 2);
    CHECK(run.error == message);
  }
  const test::CommandResult many = test::run_pase("solve " + small_gpt() + " --devices 10 --pipeline-stages 10");
  CHECK(many.status == 2);
  CHECK(many.error == "error: --pipeline-stages: 10 stages, but the graph has 9 places a stage may begin (at each block)\n");
  const test::CommandResult tight =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --memory-per-device 1MiB");
  CHECK(tight.status == 3);
  CHECK(tight.error ==
        "error: refused: no pipeline of the stages tried fits the memory cap: some stage of every partition needs more "
        "than 1048576 bytes (0.00 GiB) per device\n");
}

TEST_CASE("evaluate prices a pipeline file's stages as it gives them, to the bit; a file that breaks them is named") {
  const test::CommandResult solved =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json");
  REQUIRE(solved.status == 0);
  const std::string file = test::write_temp_file("pipeline_strategy.json", solved.output);
  const test::CommandResult evaluated = test::run_pase("evaluate " + small_gpt() + " --strategy " + file + " --json");
  REQUIRE(evaluated.status == 0);
  const json given = json::parse(solved.output), priced = json::parse(evaluated.output);
  CHECK(priced["total_cost"].get<double>() == given["total_cost"].get<double>());
  CHECK(priced["training"] == given["training"]);
  CHECK(evaluated.error.rfind("priced the file's 2 stages in ", 0) == 0);
  const test::CommandResult table = test::run_pase("evaluate " + small_gpt() + " --strategy " + file);
  CHECK(table.output.find("stages and strategy as " + file + " gives them (not searched)\n") != std::string::npos);
  CHECK(table.output.find("note: the file records") == std::string::npos);

  // Stage 1 begins at the third block's layer norm; each change below breaks the stages.
  const json& layers = given["layers"];
  size_t first = 0;
  while (layers[first]["stage"] == 0) ++first;
  REQUIRE(layers[first]["name"] == "transformer/h.2/ln_1");
  const std::vector<std::tuple<std::string, size_t, int, std::string>> cases = {
      {"order", first + 1, 0, "layer 'transformer/h.2/attn/c_attn': field 'stage': 0 after a layer of stage 1 (each "
                              "stage's layers are contiguous in the graph's order)"},
      {"mid", first, 0, "layer 'transformer/h.2/attn/c_attn': field 'stage': stage 1 begins here, where more than one "
                        "tensor crosses from the layers before (a stage begins after a block boundary)"},
      {"above", 3, 2, "layer '" + layers[3]["name"].get<std::string>() + "': field 'stage': expected a stage below 2, got 2"},
      {"missing", 3, -1, "layer '" + layers[3]["name"].get<std::string>() +
                             "': field 'stage': missing (the file has 2 pipeline stages)"},
      {"first", 0, 1, "layer 'transformer/wte': field 'stage': 1, but stage 0 has no layers"},
  };
  for (const auto& [name, layer, stage, words] : cases) {
    CAPTURE_BOUND(name);
    json changed = given;
    if (stage < 0) changed["layers"][layer].erase("stage");
    else changed["layers"][layer]["stage"] = stage;
    const std::string broken = test::write_temp_file("pipeline_stages_" + name + ".json", changed.dump());
    const test::CommandResult run = test::run_pase("evaluate " + small_gpt() + " --strategy " + broken);
    CHECK(run.status == 1);
    CHECK(run.error == "error: " + broken + ": " + words + "\n");
  }
  const test::CommandResult unplaced =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json --no-plan");
  REQUIRE(unplaced.status == 0);
  const std::string bare = test::write_temp_file("pipeline_no_plan.json", unplaced.output);
  const test::CommandResult exported = test::run_pase("export " + bare + " --format jax");
  CHECK(exported.status == 1);
  CHECK(exported.error == "error: " + bare + ": has no plan (solve without --no-plan to place each of its 2 pipeline stages on a mesh)\n");
}

TEST_CASE("a pipeline's plan: a mesh per stage on its own devices, plan-check of every stage and send, exports per stage") {
  const test::CommandResult solved =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json");
  REQUIRE(solved.status == 0);
  const json strategy = json::parse(solved.output);
  REQUIRE(strategy["stage_meshes"].size() == 2);
  CHECK_FALSE(strategy.contains("mesh"));
  CHECK(strategy["stage_meshes"][0]["first_device"] == 0);
  CHECK(strategy["stage_meshes"][1]["first_device"] == 4);
  CHECK(strategy["stage_meshes"][1]["mesh"]["shape"].dump() == "[2,2]");
  // The `pase` model prices any layout of a split alike: placed, the step is the priced one.
  CHECK(strategy["realized_total_cost"].get<double>() == doctest::Approx(strategy["total_cost"].get<double>()));
  size_t sends = 0;
  for (const json& layer : strategy["layers"])
    for (const json& input : layer["inputs"])
      if (input.contains("send")) {
        ++sends;
        CHECK(layer["stage"] == 1);
        CHECK(input["send"]["from_stage"] == 0);
      }
  CHECK(sends == 2);  // the residual stream, read by the next block's layer norm and its residual add
  const std::string file = test::write_temp_file("pipeline_plan.json", solved.output);
  const test::CommandResult checked = test::run_pase("plan-check " + file);
  CHECK(checked.status == 0);
  CHECK(checked.output.find("edges and 2 sends between 2 stages checked, all consistent\n") != std::string::npos);

  for (const std::string framework : {"jax", "dtensor", "hlo"}) {
    CAPTURE(framework);
    const test::CommandResult exported = test::run_pase("export " + file + " --format " + framework);
    REQUIRE(exported.status == 0);
    const json document = json::parse(exported.output);
    CHECK(document["framework"] == framework);
    REQUIRE(document["stages"].size() == 2);
    for (int k = 0; k < 2; ++k) {
      const json& stage = document["stages"][k];
      CHECK(stage["stage"] == k);
      CHECK(stage["first_device"] == 4 * k);
      const int first = 4 * k;
      CHECK(stage["mesh"]["device_ids"].dump() ==
            json::array({json::array({first, first + 1}), json::array({first + 2, first + 3})}).dump());
      CHECK(stage["sends"].size() == (k == 0 ? 0u : 2u));
    }
    // The tied embedding: each end of the pipeline holds its copy.
    CHECK(document["stages"][0]["weights"].contains("transformer.wte.weight"));
    CHECK(document["stages"][1]["weights"].contains("transformer.wte.weight"));
    CHECK(document["stages"][1]["sends"][0]["tensor"] == "transformer/h.1/mlp/residual");
  }
}

TEST_CASE("--mesh auto with stages: each stage's layouts searched, the plan is the step as priced, evaluate gives it back") {
  const std::string calibrated = " --devices 16 --pipeline-stages 2 --micro-batches 4 --cost-model calibrated --machine dgx-a100";
  const test::CommandResult solved = test::run_pase("solve " + small_gpt() + calibrated + " --mesh auto --json");
  REQUIRE(solved.status == 0);
  const json strategy = json::parse(solved.output);
  CHECK(strategy["axis_assignment"]["proof"] == "searched");
  CHECK(strategy["stage_meshes"][1]["assignment_proof"] == "searched");
  CHECK(strategy["realized_total_cost"].get<double>() == doctest::Approx(strategy["total_cost"].get<double>()).epsilon(1e-12));
  const std::string file = test::write_temp_file("pipeline_layouts.json", solved.output);
  const test::CommandResult checked = test::run_pase("plan-check " + file);
  CHECK(checked.status == 0);
  CHECK(checked.output.find("all consistent\n") != std::string::npos);
  const test::CommandResult evaluated =
      test::run_pase("evaluate " + small_gpt() + " --strategy " + file + " --cost-model calibrated --machine dgx-a100 --json");
  REQUIRE(evaluated.status == 0);
  CHECK(json::parse(evaluated.output)["total_cost"].get<double>() == strategy["total_cost"].get<double>());
  // Megatron-LM's stages on the same layouts: no better than the search's bound.
  const test::CommandResult megatron = test::run_pase("evaluate " + small_gpt() + calibrated +
                                                      " --baseline megatron --tensor-parallel 2 --mesh auto --json");
  REQUIRE(megatron.status == 0);
  CHECK(json::parse(megatron.output)["total_cost"].get<double>() >= strategy["memory"]["lower_bound_cost"].get<double>());
  const test::CommandResult shaped = test::run_pase("evaluate " + small_gpt() + calibrated +
                                                    " --baseline megatron --tensor-parallel 2 --mesh 2x8");
  CHECK(shaped.status == 2);
  CHECK(shaped.error ==
        "error: --mesh: with pipeline stages only auto (each stage on the default mesh of its devices; docs/pipeline.md)\n");
  // Without --mesh a model of the links prices the stages on their default
  // meshes' layouts too, as a solve without stages does: the same answer.
  const test::CommandResult placed = test::run_pase("solve " + small_gpt() + calibrated + " --json");
  REQUIRE(placed.status == 0);
  CHECK(json::parse(placed.output)["stage_meshes"][0]["assignment_proof"] == "searched");
  CHECK(json::parse(placed.output)["total_cost"] == strategy["total_cost"]);
  // One stage is the solve without stages (the placed plan is the priced plan).
  const std::string one = " --devices 16 --micro-batches 4 --cost-model calibrated --machine dgx-a100 --json";
  const test::CommandResult staged = test::run_pase("solve " + small_gpt() + one + " --pipeline-stages 1");
  const test::CommandResult plain = test::run_pase("solve " + small_gpt() + one);
  REQUIRE(staged.status == 0);
  REQUIRE(plain.status == 0);
  CHECK(json::parse(staged.output)["total_cost"].get<double>() ==
        doctest::Approx(json::parse(plain.output)["total_cost"].get<double>()).epsilon(1e-12));
}

TEST_CASE("a pipeline plan that says something false is named in one line") {
  const test::CommandResult solved =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json");
  REQUIRE(solved.status == 0);
  auto first_send = [](json& strategy) -> json& {
    for (json& layer : strategy["layers"])
      for (json& input : layer["inputs"])
        if (input.contains("send")) return input;
    FAIL("no send");
    return strategy;
  };
  struct Case {
    std::string name;
    std::function<void(json&)> change;
    int status;
    std::string words;  // the line on standard error (status 1 from the reader) or the check's first line
  };
  const std::string send = "send 'transformer/h.1/mlp/residual' -> 'transformer/h.2/ln_1' (input 0): ";
  const std::vector<Case> cases = {
      {"realized", [&](json& s) { first_send(s)["send"]["realized_words"] = 16385; }, 1,
       send + "realized_words is 16385, but a device of stage 1 needs at most 16384 elements of it"},
      {"record", [&](json& s) { first_send(s).erase("send"); }, 1,
       send + "layer 'transformer/h.1/mlp/residual' runs in stage 0, but the input has no send record"},
      {"from", [&](json& s) { first_send(s)["send"]["from_stage"] = 1; }, 1,
       "error: FILE: layer 'transformer/h.2/ln_1': field 'inputs[0].send.from_stage': expected another stage "
       "than the layer's own (1), got 1"},
      {"first", [](json& s) { s["stage_meshes"][1]["first_device"] = 3; }, 1,
       "error: FILE: field 'stage_meshes[1].first_device': expected 4, the device after the stage before's"},
      {"both", [](json& s) { s["mesh"] = s["stage_meshes"][0]["mesh"]; }, 1,
       "error: FILE: field 'stage_meshes': a plan has one mesh or a mesh per pipeline stage, not both"},
      {"stage", [](json& s) { s["layers"][0]["stage"] = 2; }, 1,
       "error: FILE: layer 'transformer/wte': field 'stage': expected a stage below 2 (the stage_meshes), got 2"},
      {"devices", [](json& s) { s["stage_meshes"][1]["mesh"]["shape"] = json::array({2, 4}); }, 1,
       "error: FILE: field 'stage_meshes': the stages' meshes make 12 devices, but 'devices' is 8"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    json changed = json::parse(solved.output);
    c.change(changed);
    const std::string file = test::write_temp_file("pipeline_plan_" + c.name + ".json", changed.dump());
    const test::CommandResult checked = test::run_pase("plan-check " + file);
    CHECK(checked.status == c.status);
    std::string words = c.words;
    if (words.rfind("error: FILE", 0) == 0) {
      words.replace(7, 4, file);
      CHECK(checked.error == words + "\n");
    } else {
      CHECK(checked.output.rfind(words + "\n", 0) == 0);
    }
  }
}

TEST_CASE("evaluate --baseline megatron --pipeline-stages: Megatron-LM's equal stages, above the search's bound") {
  const test::CommandResult baseline = test::run_pase("evaluate " + small_gpt() +
                                                      " --devices 8 --pipeline-stages 2 --micro-batches 4 --baseline "
                                                      "megatron --tensor-parallel 2 --json");
  REQUIRE(baseline.status == 0);
  const json strategy = json::parse(baseline.output);
  // Two blocks each; the embeddings with the first, the head with the last.
  for (const json& layer : strategy["layers"]) {
    const std::string name = layer["name"];
    const int expected = name.rfind("transformer/h.2/", 0) == 0 || name.rfind("transformer/h.3/", 0) == 0 ||
                                 name == "transformer/ln_f" || name == "lm_head" || name == "loss"
                             ? 1
                             : 0;
    CAPTURE(name);
    CHECK(layer["stage"] == expected);
  }
  CHECK(strategy["memory"]["lower_bound_cost"].is_null());  // nothing searched
  const test::CommandResult searched =
      test::run_pase("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4 --json");
  REQUIRE(searched.status == 0);
  const json optimum = json::parse(searched.output);
  CHECK(optimum["memory"]["lower_bound_cost"].get<double>() <= strategy["total_cost"].get<double>());
  CHECK(optimum["total_cost"].get<double>() <= strategy["total_cost"].get<double>());
  const test::CommandResult given = test::run_pase("evaluate " + small_gpt() + " --devices 8 --pipeline-stages 2 --strategy " +
                                                   test::write_temp_file("pipeline_given.json", searched.output));
  CHECK(given.status == 2);  // a strategy file records its own stages
  CHECK(given.error == "error: --pipeline-stages: applies to --baseline (a strategy file records its own stages)\n");
}

TEST_CASE("--schedule interleaved:2: Megatron-LM's chunks, the step as evaluate prices the file, its launch flags") {
  const std::string file = test::write_temp_file("interleaved.json", "");
  const test::CommandResult solved = test::run_pase("solve " + small_gpt() +
                                                    " --devices 8 --pipeline-stages 2 --schedule interleaved:2 "
                                                    "--micro-batches 4 --out \"" + file + "\"");
  REQUIRE(solved.status == 0);
  // Each stage's two chunks of one block: stage 0 blocks 0 and 2, stage 1 blocks 1 and 3.
  CHECK(solved.output.find("in 2 pipeline stages (interleaved:2), 4 micro-batches of 4") != std::string::npos);
  CHECK(solved.output.find("    0  transformer/wte .. transformer/h.0/mlp/residual and 1 more chunk (") != std::string::npos);
  CHECK(solved.output.find("    1  transformer/h.1/ln_1 .. transformer/h.1/mlp/residual and 1 more chunk (") !=
        std::string::npos);
  CHECK(solved.output.find("(micro-batches x the largest t + (sum of t - the largest t) / 2 + the largest step work)") !=
        std::string::npos);
  const json strategy = json::parse(read_text_file(file));
  CHECK(strategy["training"]["pipeline"]["schedule"] == "interleaved:2");
  std::vector<int> stage_of_block;
  for (const json& layer : strategy["layers"])
    if (layer["name"].get<std::string>().find("/ln_1") != std::string::npos) stage_of_block.push_back(layer["stage"]);
  CHECK(stage_of_block == std::vector<int>{0, 1, 0, 1});
  // evaluate prices the file's chunks and strategies: the same step, to the digit printed.
  const test::CommandResult evaluated = test::run_pase("evaluate " + small_gpt() + " --strategy \"" + file + "\"");
  REQUIRE(evaluated.status == 0);
  const auto step_line = [](const std::string& text) { return text.substr(text.find("step time "), text.find(" (", text.find("step time ")) - text.find("step time ")); };
  CHECK(step_line(evaluated.output) == step_line(solved.output));
  // The plan's sends, the last stage's chunk to the first's included, check out.
  const test::CommandResult checked = test::run_pase("plan-check \"" + file + "\"");
  CHECK(checked.status == 0);
  CHECK(checked.output.find("6 sends between 2 stages checked, all consistent") != std::string::npos);
  const test::CommandResult flags = test::run_pase("export \"" + file + "\" --format megatron");
  REQUIRE(flags.status == 0);
  CHECK(flags.output.find("--pipeline-model-parallel-size 2\n--num-layers 4\n--num-layers-per-virtual-pipeline-stage 1\n") !=
        std::string::npos);
  const test::CommandResult moved = test::run_pase("explain " + small_gpt() + " --strategy \"" + file + "\" --boundary 1");
  CHECK(moved.status == 2);
  CHECK(moved.error == "error: --boundary: " + file + " is an interleaved pipeline (interleaved:2), whose chunks are "
                       "Megatron-LM's equal split, not moved one by one\n");
}
