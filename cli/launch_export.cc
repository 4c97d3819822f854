#include "cli/launch_export.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "base/json_text.h"

namespace pase {

std::string megatron_flags(const LaunchSettings& s) {
  std::string out = "# Megatron-LM (pretrain_gpt.py) flags for " + s.graph + " on " + std::to_string(s.devices) +
                    " GPUs, read from a pase plan (docs/launch.md)\n";
  auto flag = [&](const std::string& name, int64_t value) { out += name + " " + std::to_string(value) + "\n"; };
  flag("--tensor-model-parallel-size", s.pattern.tensor);
  flag("--pipeline-model-parallel-size", s.stages);
  if (s.pattern.context > 1) flag("--context-parallel-size", s.pattern.context);
  if (s.blocks > 0) flag("--num-layers", s.blocks);
  std::vector<std::string> notes = s.deviations;
  const std::vector<int64_t>& per = s.blocks_per_stage;
  if (per.size() > 1 && std::adjacent_find(per.begin(), per.end(), std::not_equal_to<>()) != per.end()) {
    // Megatron-Core takes the first and last stages' layers; the middle ones are split evenly.
    flag("--decoder-first-pipeline-num-layers", per.front());
    flag("--decoder-last-pipeline-num-layers", per.back());
    if (per.size() > 2 && std::adjacent_find(per.begin() + 1, per.end() - 1, std::not_equal_to<>()) != per.end() - 1)
      notes.push_back("the middle stages hold different numbers of layers; Megatron-LM splits them evenly");
  }
  flag("--micro-batch-size", s.per_device_micro_batch);
  flag("--global-batch-size", s.global_batch);
  if (s.recompute == "full") out += "--recompute-granularity full\n--recompute-method uniform\n--recompute-num-layers 1\n";
  if (s.recompute == "selective") out += "--recompute-granularity selective\n";
  if (s.zero >= 1) out += "--use-distributed-optimizer\n";
  if (s.zero >= 2)
    notes.push_back("ZeRO-" + std::to_string(s.zero) + ": Megatron-LM's distributed optimizer shards the optimizer state only (ZeRO-1)");
  if (s.dtype == "bf16") out += "--bf16\n";
  if (s.dtype == "fp16") out += "--fp16\n";
  if (s.schedule == "gpipe") notes.push_back("schedule gpipe: Megatron-LM runs 1F1B");
  out += "# data parallel: " + std::to_string(s.pattern.data) + " (the GPUs / (tensor x pipeline x context))\n";
  for (const std::string& note : notes) out += "# not said in Megatron-LM's terms: " + note + "\n";
  return out;
}

std::string deepspeed_config(const LaunchSettings& s) {
  std::string out = "{\n";
  auto number = [&](const char* key, int64_t value, bool comma = true) {
    out += std::string("  \"") + key + "\": " + std::to_string(value) + (comma ? ",\n" : "\n");
  };
  number("train_batch_size", s.global_batch);
  number("train_micro_batch_size_per_gpu", s.per_device_micro_batch);
  number("gradient_accumulation_steps", s.micro_batches);
  if (s.dtype == "bf16") out += "  \"bf16\": {\"enabled\": true},\n";
  if (s.dtype == "fp16") out += "  \"fp16\": {\"enabled\": true},\n";
  out += "  \"zero_optimization\": {\"stage\": " + std::to_string(s.zero) + "},\n";
  if (s.recompute != "none")
    out += "  \"activation_checkpointing\": {\"partition_activations\": false, \"contiguous_memory_optimization\": false},\n";
  std::vector<std::string> notes = s.deviations;
  if (s.stages > 1 && s.zero >= 2)
    notes.push_back("ZeRO-" + std::to_string(s.zero) + " with pipeline stages: DeepSpeed's pipeline engine runs ZeRO-1 at most");
  out += "  \"pase\": {\"pipeline_stages\": " + std::to_string(s.stages) + ", \"blocks_per_stage\": [";
  for (size_t k = 0; k < s.blocks_per_stage.size(); ++k) out += (k ? ", " : "") + std::to_string(s.blocks_per_stage[k]);
  out += "], \"tensor_parallel\": " + std::to_string(s.pattern.tensor) + ", \"data_parallel\": " +
         std::to_string(s.pattern.data) + ", \"notes\": [";
  for (size_t i = 0; i < notes.size(); ++i) {
    out += i ? ", " : "";
    append_json_string(out, notes[i]);
  }
  out += "]}\n}\n";
  return out;
}

std::string torch_recipe(const LaunchSettings& s) {
  std::string out;
  out += "# PyTorch recipe for " + s.graph + " on " + std::to_string(s.devices) +
         " GPUs, read from a pase plan (docs/launch.md).\n"
         "# Run under torchrun with one process per GPU; `model` names its modules as the plan's weights do.\n"
         "from torch.distributed.device_mesh import init_device_mesh\n"
         "from torch.distributed.fsdp import fully_shard\n"
         "from torch.distributed.pipelining import SplitPoint, pipeline\n"
         "from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module\n\n";
  out += "PIPELINE_STAGES = " + std::to_string(s.stages) + "\n";
  out += "DATA_PARALLEL = " + std::to_string(s.pattern.data) + "\n";
  out += "TENSOR_PARALLEL = " + std::to_string(s.pattern.tensor) + "\n";
  out += "MICRO_BATCHES = " + std::to_string(s.micro_batches) + "\n";
  out += "MICRO_BATCH_PER_GPU = " + std::to_string(s.per_device_micro_batch) + "\n";
  out += "SCHEDULE = \"" + std::string(s.schedule == "gpipe" ? "ScheduleGPipe" : "Schedule1F1B") + "\"\n";
  out += "SHARD_OPTIMIZER = " + std::string(s.zero >= 1 ? "True" : "False") + "  # FSDP2 over the data axis (ZeRO-" +
         std::to_string(s.zero) + ")\n";
  out += "SPLIT_POINTS = {";
  for (size_t k = 0; k < s.stage_first_module.size(); ++k) {
    out += k ? ", " : "";
    append_json_string(out, s.stage_first_module[k]);
    out += ": SplitPoint.BEGINNING";
  }
  out += "}\n";
  out += "TENSOR_PARALLEL_PLAN = {\n";
  for (const auto& [module, style] : s.tensor_plan) {
    out += "    ";
    append_json_string(out, module);
    out += ": " + std::string(style == "colwise" ? "ColwiseParallel()" : "RowwiseParallel()") + ",\n";
  }
  out += "}\n";
  out += "NOT_SAID = [\n";
  for (const std::string& note : s.deviations) {
    out += "    ";
    append_json_string(out, note);
    out += ",\n";
  }
  out += "]\n\n";
  out += "\n"
         "def parallelize(model, example_micro_batch):\n"
         "    \"\"\"This rank's pipeline stage of `model`: tensor parallel, then FSDP2 over the data axis.\"\"\"\n"
         "    mesh = init_device_mesh(\"cuda\", (PIPELINE_STAGES, DATA_PARALLEL, TENSOR_PARALLEL),\n"
         "                            mesh_dim_names=(\"pp\", \"dp\", \"tp\"))\n"
         "    if TENSOR_PARALLEL > 1:\n"
         "        parallelize_module(model, mesh[\"tp\"], TENSOR_PARALLEL_PLAN)\n"
         "    stage = model\n"
         "    if PIPELINE_STAGES > 1:\n"
         "        pipe = pipeline(model, mb_args=(example_micro_batch,), split_spec=SPLIT_POINTS)\n"
         "        stage = pipe.build_stage(mesh[\"pp\"].get_local_rank(), device=\"cuda\", group=mesh[\"pp\"].get_group())\n"
         "    if SHARD_OPTIMIZER and DATA_PARALLEL > 1:\n"
         "        fully_shard(stage.submod if PIPELINE_STAGES > 1 else stage, mesh=mesh[\"dp\"])\n"
         "    return mesh, stage\n";
  return out;
}

}  // namespace pase
