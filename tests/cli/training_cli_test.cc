// --micro-batches, --zero and --recompute end to end (docs/training.md): the
// strategy file's `training` object and per-layer fields, evaluate pricing
// a file at its recorded setup, folding kept with every option, and the
// exact one-line refusals.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

const std::string kTransformer = " " + test::source_path("data/graphs/transformer.json") + " --devices 8";

}  // namespace

TEST_CASE("solve --micro-batches --zero --recompute: the training object, each layer's choice, evaluate agrees") {
  const test::CommandResult solved =
      test::run_pase("solve" + kTransformer + " --json --no-plan --micro-batches 4 --zero 1 --recompute full");
  REQUIRE(solved.status == 0);
  const nlohmann::ordered_json strategy = nlohmann::ordered_json::parse(solved.output);
  const double total = strategy["total_cost"].get<double>();
  CHECK(strategy["training"].dump() ==
        R"({"micro_batches":4,"micro_batch_size":16,"recompute":"full","zero":1,"attention":"naive",)"
        R"("pipeline":{"stages":1,"schedule":"1f1b",)"
        R"("stage_devices":[8],"stage_cost":[)" + json(total).dump() + R"(],"stage_memory_bytes":[)" +
            std::to_string(strategy["memory"]["per_device_bytes"].get<uint64_t>()) + "]}}");
  size_t recomputed = 0;
  for (const auto& layer : strategy["layers"]) {
    CHECK(layer["zero"] == 1);
    recomputed += layer["recompute"].get<bool>();
  }
  CHECK(strategy["layers"][0]["inputs"][0]["shape"].dump() == "[16,256]");  // priced at the micro-batch
  CHECK(recomputed > 0);
  CHECK(recomputed < strategy["layers"].size());
  SUBCASE("evaluate prices the file at its recorded setup: the same cost and bytes") {
    const std::string file = test::write_temp_file("training_strategy.json", solved.output);
    const test::CommandResult priced = test::run_pase("evaluate" + kTransformer + " --strategy " + file + " --json");
    REQUIRE(priced.status == 0);
    const nlohmann::ordered_json evaluated = nlohmann::ordered_json::parse(priced.output);
    CHECK(evaluated["total_cost"].get<double>() == doctest::Approx(total).epsilon(1e-12));
    CHECK(evaluated["memory"] == strategy["memory"]);
    CHECK(evaluated["training"]["micro_batches"] == 4);
  }
  SUBCASE("the table's memory line names the techniques") {
    const test::CommandResult table =
        test::run_pase("solve" + kTransformer + " --no-plan --micro-batches 4 --zero 1 --recompute full");
    // ZeRO-1 shards the 63 layers that hold a weight.
    CHECK(table.output.find("; fp32; 4 micro-batches of 16, ZeRO-1 on 63 layers, recomputed " + std::to_string(recomputed) + " of " +
                            std::to_string(strategy["layers"].size()) + " layers)") != std::string::npos);
  }
}

TEST_CASE("the PaSE step writes no training object and no per-layer fields") {
  const test::CommandResult solved = test::run_pase("solve" + kTransformer + " --json --no-plan");
  REQUIRE(solved.status == 0);
  const json strategy = json::parse(solved.output);
  CHECK_FALSE(strategy.contains("training"));
  CHECK_FALSE(strategy["layers"][0].contains("zero"));
  CHECK_FALSE(strategy["layers"][0].contains("recompute"));
}

TEST_CASE("deep models still fold with every training option") {
  const std::string gpt = test::write_temp_file("training_gpt2xl.json",
                                                test::run_pase("models export gpt2-xl --batch 16").output);
  const test::CommandResult stats = test::run_pase(
      "solve " + gpt + " --devices 64 --stats --no-plan --micro-batches 4 --zero 3 --recompute full --dtype bf16");
  REQUIRE(stats.status == 0);
  CHECK(stats.output.find("folded: 48 repeated blocks of 12 vertices") != std::string::npos);
}

TEST_CASE("--micro-batches auto: every divisor of the batch, the best kept, said on stderr") {
  const test::CommandResult solved = test::run_pase("solve" + kTransformer + " --no-plan --micro-batches auto");
  CHECK(solved.status == 0);
  // The pase model is linear in the batch: every count costs the same, the fewest is kept.
  CHECK(solved.error == "note: micro-batches auto: 7 of 7 divisors of the batch solved, best 1 (64 per micro-batch)\n");
}

TEST_CASE("training options: bad values are one line and exit 2") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--micro-batches 3", "error: --micro-batches: expected a divisor of the graph's batch 64 (" +
                                test::source_path("data/graphs/transformer.json") + "), got 3\n"},
      {"--micro-batches 0", "error: --micro-batches: expected a positive count or auto, got '0'\n"},
      {"--micro-batches 2x", "error: --micro-batches: expected a positive count or auto, got '2x'\n"},
      {"--zero 4", "error: --zero: expected a ZeRO stage 0, 1, 2 or 3, or auto, got '4'\n"},
      {"--recompute partial", "error: --recompute: expected none, full or auto, got 'partial'\n"},
  };
  for (const auto& [option, words] : cases) {
    CAPTURE_BOUND(option);
    const test::CommandResult result = test::run_pase("solve" + kTransformer + " " + option);
    CHECK(result.status == 2);
    CHECK(result.error == words);
  }
}

TEST_CASE("a strategy file's training fields are checked: the file, the layer and the field named") {
  const test::CommandResult solved =
      test::run_pase("solve" + kTransformer + " --json --no-plan --micro-batches 2 --zero 2");
  REQUIRE(solved.status == 0);
  json strategy = json::parse(solved.output);
  strategy["layers"][0]["zero"] = 5;
  const std::string bad = test::write_temp_file("training_bad_zero.json", strategy.dump());
  const test::CommandResult refused = test::run_pase("evaluate" + kTransformer + " --strategy " + bad);
  CHECK(refused.status == 1);
  CHECK(refused.error == "error: " + bad + ": layer 'encoder/embedding': field 'zero': expected a ZeRO stage 0, 1, 2 or 3, got 5\n");
}

TEST_CASE("baselines practitioners run: megatron at a tensor-parallel width, fsdp at ZeRO-3") {
  SUBCASE("evaluate") {
    const test::CommandResult megatron =
        test::run_pase("evaluate" + kTransformer + " --baseline megatron --tensor-parallel 4");
    CHECK(megatron.status == 0);
    CHECK(megatron.output.find("strategy megatron (m = 2, n = 4 (as asked))") != std::string::npos);
    const test::CommandResult fsdp = test::run_pase("evaluate" + kTransformer + " --baseline fsdp --json");
    CHECK(fsdp.status == 0);
    const json strategy = json::parse(fsdp.output);
    CHECK(strategy["training"]["zero"] == 3);
    CHECK(strategy["layers"][0]["config"][0] == 8);  // data parallel: the batch split 8 ways
    CHECK(test::run_pase("evaluate" + kTransformer + " --baseline fsdp --zero 1").error ==
          "error: --baseline fsdp: shards every layer's state at ZeRO-3; --zero 1 contradicts it\n");
    CHECK(test::run_pase("evaluate" + kTransformer + " --baseline owt --tensor-parallel 2").error ==
          "error: --tensor-parallel: applies to --baseline megatron\n");
    const test::CommandResult odd = test::run_pase("evaluate" + kTransformer + " --baseline megatron --tensor-parallel 3");
    CHECK(odd.status == 1);
    CHECK(odd.error == "error: --tensor-parallel: expected a divisor of the 8 devices, got 3\n");
  }
  SUBCASE("compare: an fsdp row under a training setup, none without") {
    const test::CommandResult trained = test::run_pase("compare" + kTransformer + " --zero 1 --tensor-parallel 2");
    CHECK(trained.status == 0);
    CHECK(trained.output.find("  fsdp  ") != std::string::npos);
    CHECK(trained.output.find("m = 4, n = 2 (as asked)") != std::string::npos);
    CHECK(test::run_pase("compare" + kTransformer).output.find("  fsdp  ") == std::string::npos);
  }
}

TEST_CASE("explain weighs recomputing a layer and sharding its state, the layer alone") {
  // ff1's output [64, 256, 2048] fp32 split 8 ways: 16 MiB; its weight [512, 2048] on 8 replicas:
  // 16 MiB at stage 0, 9 at stage 1 (8 + 8/8 bytes), 5.5 at stage 2 (4 + 12/8), 2 at stage 3 (16/8).
  const test::CommandResult plain = test::run_pase("explain" + kTransformer + " --layer decoder/layer0/ff/ff1");
  REQUIRE(plain.status == 0);
  CHECK(plain.output.find("its techniques at b8, this layer alone:\n"
                          "  recomputing it (now kept): +216 us a step, -16.00 MiB\n"
                          "  ZeRO-1 (now ZeRO-0): 0 a step, -7.00 MiB\n"
                          "  ZeRO-2 (now ZeRO-0): 0 a step, -10.50 MiB\n"
                          "  ZeRO-3 (now ZeRO-0): +459 us a step, -14.00 MiB\n") != std::string::npos);
  const test::CommandResult trained = test::run_pase("explain" + kTransformer +
                                                     " --layer decoder/layer0/ff/ff1 --micro-batches 4 --zero 1 --recompute full");
  CHECK(trained.output.find("  keeping its outputs (now recomputed): -216 us a step, +4.00 MiB\n") != std::string::npos);
}

TEST_CASE("--attention fused: the scores of the 18 attentions are neither kept nor moved") {
  // Data parallel over 8: each scores tensor [64, 8, 256, 256] fp32 is 16 MiB a device, and two
  // vertices (the scores einsum and the softmax) hold one each: 36 x 16 MiB less activations.
  const std::string dp = "evaluate" + kTransformer + " --baseline data-parallel --json";
  const test::CommandResult naive = test::run_pase(dp);
  const test::CommandResult fused = test::run_pase(dp + " --attention fused");
  REQUIRE(naive.status == 0);
  REQUIRE(fused.status == 0);
  const json a = json::parse(naive.output), b = json::parse(fused.output);
  CHECK(a["memory"]["activations_bytes"].get<uint64_t>() - b["memory"]["activations_bytes"].get<uint64_t>() ==
        uint64_t{36} * 16 * 1024 * 1024);
  CHECK(a["memory"]["weights_bytes"] == b["memory"]["weights_bytes"]);
  size_t marked = 0;
  for (const json& layer : b["layers"]) marked += layer["fused_attention"].get<bool>();
  CHECK(marked == 36);
  CHECK(b["training"]["attention"] == "fused");
  // The pase model pays the scores' product once more (recomputed in backward).
  CHECK(b["total_cost"].get<double>() > a["total_cost"].get<double>());
  const test::CommandResult bad = test::run_pase("solve" + kTransformer + " --attention flash");
  CHECK(bad.status == 2);
  CHECK(bad.error == "error: --attention: expected naive or fused, got 'flash'\n");
}

TEST_CASE("batch, compare and frontier documents record the training setup, and only off the PaSE step") {
  const std::string summary = test::write_temp_file("training_batch_summary.json", "");
  REQUIRE(test::run_pase("batch " + test::source_path("data/graphs/transformer.json") +
                         " --devices 8 --micro-batches auto --zero 1 --summary \"" + summary + "\"")
              .status == 0);
  CHECK(json::parse(read_text_file(summary))["training"].dump() ==
        R"({"attention":"naive","micro_batches":"auto","recompute":"none","zero":1})");
  const std::string frontier = test::write_temp_file("training_frontier.json", "");
  REQUIRE(test::run_pase("frontier" + kTransformer + " --recompute full --json \"" + frontier + "\"").status == 0);
  CHECK(json::parse(read_text_file(frontier))["training"]["recompute"] == "full");
  const std::string plain = test::write_temp_file("training_compare_plain.json", "");
  REQUIRE(test::run_pase("compare" + kTransformer + " --json \"" + plain + "\"").status == 0);
  CHECK_FALSE(json::parse(read_text_file(plain)).contains("training"));
}

TEST_CASE("--micro-batches auto under a cap: counts bounded out by their uncapped optimum, the cap recorded") {
  // The pase model is linear in the batch: every count's uncapped optimum is
  // the same, so once one count reaches it under the cap the rest are bounded
  // out, and so is the count whose layers' least bytes exceed the cap (its
  // bound within the cap is infinite: memorycap/separable_bound.h).
  const test::CommandResult solved =
      test::run_pase("solve" + kTransformer + " --no-plan --micro-batches auto --memory-per-device 2GiB");
  REQUIRE(solved.status == 0);
  CHECK(solved.error == "note: micro-batches auto: 1 of 7 divisors of the batch solved (6 bounded out: their bounds "
                        "reached the best cost found), best 4 (16 per micro-batch)\n");
  CHECK(solved.output.find("; fp32; 4 micro-batches of 16), cap 2.00 GiB: lower bound 1421082828800 flop, gap 0 "
                           "(optimal)") != std::string::npos);
}
