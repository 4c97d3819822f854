// Launch settings read from strategy files (strategy/launch_settings.h,
// docs/launch.md): Megatron-LM's flags for its own layout, a pipeline's
// stages' modules, the DeepSpeed config as JSON, the PyTorch recipe's plan, and
// the layers a framework's terms cannot say, one line per kind.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/text_file.h"
#include "strategy/launch_settings.h"
#include "test_support.h"

using namespace pase;

namespace {

const std::string& small_gpt() {
  return test::exported_model("gpt --layers 4 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
}

std::string strategy_of(const std::string& command, const std::string& name) {
  const test::CommandResult run = test::run_pase(command + " --json");
  REQUIRE(run.status == 0);
  return test::write_temp_file(name, run.output);
}

}  // namespace

TEST_CASE("the Megatron baseline reads back as Megatron-LM's flags, the embeddings named") {
  const std::string file = strategy_of("evaluate " + small_gpt() +
                                           " --devices 8 --micro-batches 4 --zero 1 --recompute full --dtype bf16"
                                           " --baseline megatron --tensor-parallel 2",
                                       "launch_megatron.json");
  const test::CommandResult flags = test::run_pase("export " + file + " --format megatron");
  REQUIRE(flags.status == 0);
  CHECK(flags.output ==
        "# Megatron-LM (pretrain_gpt.py) flags for gpt on 8 GPUs, read from a pase plan (docs/launch.md)\n"
        "--tensor-model-parallel-size 2\n--pipeline-model-parallel-size 1\n--num-layers 4\n--micro-batch-size 1\n"
        "--global-batch-size 16\n--recompute-granularity full\n--recompute-method uniform\n--recompute-num-layers 1\n"
        "--use-distributed-optimizer\n--bf16\n# data parallel: 4 (the GPUs / (tensor x pipeline x context))\n");
  const test::CommandResult recipe = test::run_pase("export " + file + " --format torch");
  REQUIRE(recipe.status == 0);
  // Megatron's column- and row-parallel pairs, one entry for every block.
  for (const char* entry : {"\"transformer.h.*.attn.c_attn\": ColwiseParallel(),", "\"transformer.h.*.attn.c_proj\": RowwiseParallel(),",
                            "\"transformer.h.*.mlp.c_fc\": ColwiseParallel(),", "\"transformer.h.*.mlp.c_proj\": RowwiseParallel(),"})
    CHECK(recipe.output.find(entry) != std::string::npos);
  // The embeddings read whole token ids; ZeRO-1 keeps parameters whole from forward to backward.
  for (const char* line : {"\"transformer.wte\": RowwiseParallel(input_layouts=Replicate()),\n",
                           "RESHARD_AFTER_FORWARD = False\n", "RECOMPUTE_BLOCKS = True\n",
                           "STAGE_MODULES = [\n    [\"transformer.wte\", \"transformer.wpe\", \"transformer.h.0\", "
                           "\"transformer.h.1\", \"transformer.h.2\", \"transformer.h.3\", \"transformer.ln_f\", "
                           "\"lm_head\"],\n]\n"})
    CHECK(recipe.output.find(line) != std::string::npos);
}

TEST_CASE("a pipeline's launch settings: stages, their modules, the DeepSpeed config") {
  const std::string file =
      strategy_of("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 4", "launch_pipeline.json");
  const LaunchSettings settings = launch_settings(read_strategy_file(file));
  CHECK(settings.stages == 2);
  CHECK(settings.blocks == 4);
  REQUIRE(settings.blocks_per_stage.size() == 2);
  CHECK(settings.blocks_per_stage[0] + settings.blocks_per_stage[1] == 4);
  // Each stage's modules in order: whole blocks, and the embeddings, the last
  // norm and the head where they run; the tied token table in both end stages.
  REQUIRE(settings.stage_modules.size() == 2);
  const size_t first_blocks = static_cast<size_t>(settings.blocks_per_stage[0]);
  std::vector<std::string> first = {"transformer.wte", "transformer.wpe"}, last;
  for (size_t b = 0; b < 4; ++b) (b < first_blocks ? first : last).push_back("transformer.h." + std::to_string(b));
  last.insert(last.end(), {"transformer.ln_f", "lm_head"});
  CHECK(settings.stage_modules[0] == first);
  CHECK(settings.stage_modules[1] == last);
  CHECK(settings.tied_across_stages ==
        std::vector<std::string>{"lm_head reads transformer.wte.weight, which stage 0 holds too"});
  CHECK(settings.global_batch == 16);
  CHECK(settings.micro_batches == 4);
  const test::CommandResult config = test::run_pase("export " + file + " --format deepspeed");
  REQUIRE(config.status == 0);
  const nlohmann::json ds = nlohmann::json::parse(config.output);
  CHECK(ds["train_batch_size"] == 16);
  CHECK(ds["gradient_accumulation_steps"] == 4);
  CHECK(ds["train_micro_batch_size_per_gpu"].get<int64_t>() * settings.pattern.data * 4 == 16);
  CHECK(ds["pase"]["pipeline_stages"] == 2);
  const test::CommandResult flags = test::run_pase("export " + file + " --format megatron");
  CHECK(flags.output.find("--pipeline-model-parallel-size 2\n") != std::string::npos);
}

TEST_CASE("a plan whose layers leave GPUs idle says how many it runs on") {
  // At the default machine a small GPT's stages each run on one of their 4 GPUs.
  const std::string file =
      strategy_of("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 2", "launch_idle.json");
  const LaunchSettings settings = launch_settings(read_strategy_file(file));
  REQUIRE(settings.pattern == WeightPattern{1, 1, 1});
  CHECK(settings.deviations.back() ==
        "the plan's layers run on 2 of the 8 GPUs (pipeline 2 x tensor 1 x data 1): launch on 2, or solve for fewer");
}

TEST_CASE("a plan whose stages hold unequal numbers of GPUs says so, not a GPU count to launch on") {
  const std::string file = strategy_of("solve " + small_gpt() + " --devices 8 --pipeline-stages 2 --micro-batches 2 --stage-devices 6,2",
                                       "launch_unequal.json");
  const LaunchSettings settings = launch_settings(read_strategy_file(file));
  CHECK(settings.deviations.back() ==
        "the stages run on unequal numbers of GPUs (6, 2), and the frameworks give every stage the same: solve with "
        "equal stages to launch it");
  for (const std::string& line : settings.deviations) CHECK(line.find("launch on") == std::string::npos);
}

TEST_CASE("layers a framework cannot say are named once per kind, blocks as one") {
  StrategyDocument document;
  document.source = "hand.json";
  document.graph = "hand";
  document.devices = 4;
  auto gemm = [](const std::string& name, const std::vector<int64_t>& config, const std::vector<int64_t>& in_split) {
    StrategyLayer layer;
    layer.name = name;
    layer.op = "einsum";
    layer.dims = "blfe";  // output features f, input features e
    layer.config = config;
    layer.devices_used = config[0] * config[1] * config[2] * config[3];
    layer.inputs = {{"x", {4, 8, 16}, in_split, {}}};
    layer.weights = {{"m." + name.substr(2, 1) + "." + name.substr(4) + ".weight", {16, 32}, {config[3], config[2]}, {"e", "f"}}};
    return layer;
  };
  // Blocks 0 and 1: the weight split over its output features (column-parallel), then over both (2-D).
  document.layers = {gemm("m/0/a", {2, 1, 2, 1}, {2, 1, 1}), gemm("m/0/b", {1, 1, 2, 2}, {1, 1, 2}),
                     gemm("m/1/a", {2, 1, 2, 1}, {2, 1, 1}), gemm("m/1/b", {1, 1, 2, 2}, {1, 1, 2})};
  const LaunchSettings settings = launch_settings(document);
  CHECK(settings.pattern.tensor == 2);
  CHECK(settings.pattern.data == 2);
  REQUIRE(settings.tensor_plan.size() == 1);
  CHECK(settings.tensor_plan[0] == TensorStyle{"m.*.a", "colwise", false, false});
  CHECK(settings.deviations == std::vector<std::string>{
                                   "m/*/b (2 layers): tensor 4 x data 1, not tensor 2 x data 2",
                                   "m/*/b (2 layers): its weight splits 4 ways over both its input and output features "
                                   "(2-D tensor parallelism)"});
  document.layers.clear();
  CHECK_THROWS_WITH_AS((void)launch_settings(document),
                       "hand.json: no layer multiplies by a weight: nothing to launch tensor or data parallel", InputError);
}
