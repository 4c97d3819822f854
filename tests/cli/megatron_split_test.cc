// Where Megatron-LM is told the layers go (cli/launch_export.h,
// docs/launch.md): nothing for equal stages, the first and last stages'
// layers where only they differ, equal virtual stages by their size, and
// Megatron-LM's layout of every chunk where nothing else says the plan.
#include <doctest/doctest.h>

#include <string>

#include "cli/launch_export.h"
#include "test_support.h"

using namespace pase;

namespace {

LaunchSettings settings_of(int64_t stages, const std::string& schedule, std::vector<int64_t> per_chunk) {
  LaunchSettings s;
  s.graph = "gpt";
  s.devices = 8;
  s.stages = stages;
  s.schedule = schedule;
  s.blocks_per_chunk = per_chunk;
  for (size_t c = 0; c < per_chunk.size(); ++c) {
    if (s.blocks_per_stage.size() < static_cast<size_t>(stages)) s.blocks_per_stage.push_back(0);
    s.blocks_per_stage[c % static_cast<size_t>(stages)] += per_chunk[c];
    s.blocks += per_chunk[c];
  }
  return s;
}

bool says(const std::string& flags, const std::string& words) { return flags.find(words) != std::string::npos; }

}  // namespace

TEST_CASE("megatron flags: where the layers go, in the fewest of Megatron-LM's terms that say the plan") {
  const std::string equal = megatron_flags(settings_of(4, "1f1b", {3, 3, 3, 3}));
  CHECK_FALSE(says(equal, "--decoder-first"));
  CHECK_FALSE(says(equal, "--pipeline-model-parallel-layout"));
  const std::string ends = megatron_flags(settings_of(4, "1f1b", {2, 4, 4, 2}));
  CHECK(says(ends, "--decoder-first-pipeline-num-layers 2\n--decoder-last-pipeline-num-layers 2\n"));
  CHECK_FALSE(says(ends, "--pipeline-model-parallel-layout"));
  const std::string middle = megatron_flags(settings_of(4, "1f1b", {2, 5, 3, 2}));
  CHECK(says(middle, "--pipeline-model-parallel-layout \"E,t*2|t*5|t*3|t*2,L\"\n"));
  CHECK_FALSE(says(middle, "--decoder-first"));
  CHECK_FALSE(says(middle, "not said in Megatron-LM's terms"));
  const std::string virtual_equal = megatron_flags(settings_of(2, "interleaved:2", {2, 2, 2, 2}));
  CHECK(says(virtual_equal, "--num-layers-per-virtual-pipeline-stage 2\n"));
  // Six blocks in 2 x 2 chunks: the first chunks one block more (the search's split), said chunk by chunk.
  const std::string virtual_uneven = megatron_flags(settings_of(2, "interleaved:2", {2, 2, 1, 1}));
  CHECK(says(virtual_uneven, "--pipeline-model-parallel-layout \"E,t*2|t*2|t*1|t*1,L\"\n"));
  CHECK_FALSE(says(virtual_uneven, "--num-layers-per-virtual-pipeline-stage"));
  // A first chunk of the embedding alone.
  CHECK(says(megatron_flags(settings_of(4, "1f1b", {0, 5, 3, 2})), "--pipeline-model-parallel-layout \"E|t*5|t*3|t*2,L\"\n"));
}

TEST_CASE("an interleaved plan of blocks that do not split into equal chunks exports Megatron-LM's layout") {
  const std::string gpt6 = test::exported_model("gpt --layers 6 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
  const std::string file = test::write_temp_file("interleaved_uneven.json", "");
  REQUIRE(test::run_pase("solve " + gpt6 + " --devices 8 --pipeline-stages 2 --schedule interleaved:2 --micro-batches 2 "
                         "--out \"" + file + "\"").status == 0);
  const test::CommandResult flags = test::run_pase("export \"" + file + "\" --format megatron");
  REQUIRE(flags.status == 0);
  CHECK(says(flags.output, "--num-layers 6\n"));
  CHECK(says(flags.output, "--pipeline-model-parallel-layout \"E,t*2|t*2|t*1|t*1,L\"\n"));
  CHECK_FALSE(says(flags.output, "equal chunks"));
}
