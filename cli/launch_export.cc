#include "cli/launch_export.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "base/error.h"
#include "base/json_text.h"
#include "stages/pipeline_schedule.h"

namespace pase {
namespace {

// V of an interleaved:V schedule; 1 for the others.
int64_t chunks_per_stage(const LaunchSettings& s) {
  try {
    const PipelineSchedule schedule = parse_schedule(s.schedule);
    return schedule.kind == ScheduleKind::Interleaved ? schedule.chunks : 1;
  } catch (const OptionError&) {
    return 1;
  }
}

// Megatron-LM's layout of the model's chunks, one segment each in the
// schedule's order ('|' between): the embedding E in the first, t*n for its
// blocks, the loss L in the last.
std::string megatron_layout(const std::vector<int64_t>& blocks_per_chunk) {
  std::string out;
  for (size_t c = 0; c < blocks_per_chunk.size(); ++c) {
    std::vector<std::string> items;
    if (c == 0) items.push_back("E");
    if (blocks_per_chunk[c] > 0) items.push_back("t*" + std::to_string(blocks_per_chunk[c]));
    if (c + 1 == blocks_per_chunk.size()) items.push_back("L");
    out += c == 0 ? "" : "|";
    for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : ",") + items[i];
  }
  return out;
}

// Whether every entry of `counts` in [from, to) is the same.
bool all_equal(const std::vector<int64_t>& counts, size_t from, size_t to) {
  return from >= to || std::adjacent_find(counts.begin() + static_cast<std::ptrdiff_t>(from),
                                          counts.begin() + static_cast<std::ptrdiff_t>(to),
                                          std::not_equal_to<>()) == counts.begin() + static_cast<std::ptrdiff_t>(to);
}

// How Megatron-LM is told where the layers go: nothing for equal stages,
// the first and last stages' layers where only they differ, equal virtual
// stages by their size, else the layout of every chunk.
void megatron_split_flags(const LaunchSettings& s, std::string& out, std::vector<std::string>& notes) {
  const std::vector<int64_t>& per = s.blocks_per_stage;
  const std::vector<int64_t>& chunks = s.blocks_per_chunk;
  const int64_t v = chunks_per_stage(s);
  const bool chunks_known = static_cast<int64_t>(chunks.size()) == s.stages * v;
  if (v > 1 && all_equal(chunks, 0, chunks.size()) && chunks_known) {
    out += "--num-layers-per-virtual-pipeline-stage " + std::to_string(chunks.front()) + "\n";
    return;
  }
  if (v == 1 && (per.size() < 2 || all_equal(per, 0, per.size()))) return;
  if (v == 1 && all_equal(per, 1, per.size() - 1)) {  // Megatron-Core splits the middle stages evenly
    out += "--decoder-first-pipeline-num-layers " + std::to_string(per.front()) + "\n";
    out += "--decoder-last-pipeline-num-layers " + std::to_string(per.back()) + "\n";
    return;
  }
  if (!chunks_known) {
    notes.push_back("the stages' layers are split unevenly in a way the file's chunks do not say");
    return;
  }
  out += "# each pipeline rank's layers as the plan has them (Megatron-LM's experimental layout option):\n";
  out += "--pipeline-model-parallel-layout \"" + megatron_layout(chunks) + "\"\n";
}

}  // namespace

std::string megatron_flags(const LaunchSettings& s) {
  std::string out = "# Megatron-LM (pretrain_gpt.py) flags for " + s.graph + " on " + std::to_string(s.devices) +
                    " GPUs, read from a pase plan (docs/launch.md)\n";
  auto flag = [&](const std::string& name, int64_t value) { out += name + " " + std::to_string(value) + "\n"; };
  flag("--tensor-model-parallel-size", s.pattern.tensor);
  flag("--pipeline-model-parallel-size", s.stages);
  if (s.pattern.context > 1) flag("--context-parallel-size", s.pattern.context);
  if (s.blocks > 0) flag("--num-layers", s.blocks);
  std::vector<std::string> notes = s.deviations;
  megatron_split_flags(s, out, notes);
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
  if (chunks_per_stage(s) > 1)
    notes.push_back("schedule " + s.schedule + ": DeepSpeed's pipeline engine runs one contiguous range of layers a stage (1F1B)");
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

namespace {

std::string python_strings(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    out += i ? ", " : "";
    append_json_string(out, values[i]);
  }
  return out + "]";
}

// A parallel style as parallelize_module takes it: an embedding reads whole
// indices (the styles' default input for a row-wise module is split
// features), and a module outside the blocks hands its output on whole.
std::string torch_style(const TensorStyle& style) {
  std::vector<std::string> arguments;
  if (style.reads_indices && style.style == "rowwise") arguments.push_back("input_layouts=Replicate()");
  if (style.whole_output) arguments.push_back("output_layouts=Replicate()");
  std::string out = style.style == "colwise" ? "ColwiseParallel(" : "RowwiseParallel(";
  for (size_t i = 0; i < arguments.size(); ++i) out += (i ? ", " : "") + arguments[i];
  return out + ")";
}

std::string torch_settings(const LaunchSettings& s) {
  std::string out;
  out += "PIPELINE_STAGES = " + std::to_string(s.stages) + "\n";
  out += "DATA_PARALLEL = " + std::to_string(s.pattern.data) + "\n";
  out += "TENSOR_PARALLEL = " + std::to_string(s.pattern.tensor) + "\n";
  out += "MICRO_BATCHES = " + std::to_string(s.micro_batches) + "\n";
  out += "MICRO_BATCH_PER_GPU = " + std::to_string(s.per_device_micro_batch) + "\n";
  out += "SCHEDULE = " + std::string(s.schedule == "gpipe" ? "ScheduleGPipe" : "Schedule1F1B") + "\n";
  out += "# ZeRO-" + std::to_string(s.zero) +
         ": FSDP2 over the data axis; it also keeps parameters sharded between steps\n";
  out += "RESHARD_AFTER_FORWARD = " + std::string(s.zero >= 3 ? "True" : "False") + "\n";
  out += "RECOMPUTE_BLOCKS = " + std::string(s.recompute == "full" ? "True" : "False") + "\n";
  out += "STAGE_MODULES = [\n";
  for (const std::vector<std::string>& stage : s.stage_modules) out += "    " + python_strings(stage) + ",\n";
  out += "]\n";
  out += "TENSOR_PARALLEL_PLAN = {\n";
  for (const TensorStyle& style : s.tensor_plan) {
    out += "    ";
    append_json_string(out, style.module);
    out += ": " + torch_style(style) + ",\n";
  }
  out += "}\n";
  std::vector<std::string> notes = s.deviations;
  for (const std::string& tied : s.tied_across_stages)
    notes.push_back(tied + ": sum its gradient over both stages after each backward");
  if (s.recompute == "selective") notes.push_back("selective recomputation: checkpoint the layers the plan recomputes");
  if (chunks_per_stage(s) > 1)
    notes.push_back("schedule " + s.schedule + ": STAGE_MODULES joins each rank's chunks; run them as " +
                    std::to_string(chunks_per_stage(s)) + " stages a rank under ScheduleInterleaved1F1B");
  out += "NOT_SAID = [\n";
  for (const std::string& note : notes) {
    out += "    ";
    append_json_string(out, note);
    out += ",\n";
  }
  return out + "]\n";
}

// The functions of the recipe: the same for every plan.
constexpr const char* torch_functions = R"(

def make_mesh(device_type="cuda"):
    return init_device_mesh(device_type, (PIPELINE_STAGES, DATA_PARALLEL, TENSOR_PARALLEL),
                            mesh_dim_names=("pp", "dp", "tp"))


def stage_module(model, stage):
    """`model` with only what pipeline stage `stage` holds: another stage's block
    in a ModuleList or ModuleDict becomes an identity (the numbering kept), any
    other module of another stage None."""
    for other, names in enumerate(STAGE_MODULES):
        for name in names if other != stage else ():
            parent_name, _, child = name.rpartition(".")
            parent = model.get_submodule(parent_name)
            if isinstance(parent, (nn.ModuleList, nn.ModuleDict)):
                parent[int(child) if isinstance(parent, nn.ModuleList) else child] = nn.Identity()
            else:
                setattr(parent, child, None)
    return model


def recompute_blocks(model, stage):
    """Each block the stage holds recomputes its activations in backward."""
    for name in STAGE_MODULES[stage]:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name)
        if isinstance(parent, nn.ModuleList):
            parent[int(child)] = checkpoint_wrapper(parent[int(child)])
        elif isinstance(parent, nn.ModuleDict):
            parent[child] = checkpoint_wrapper(parent[child])


def parallelize(model, mesh):
    """This rank's part of `model`: its pipeline stage, tensor parallel over
    "tp", recomputation, FSDP2 over "dp"; and the PipelineStage that runs it
    (None for one stage: then accumulate MICRO_BATCHES micro-batches yourself)."""
    stage = mesh["pp"].get_local_rank()
    if PIPELINE_STAGES > 1:
        model = stage_module(model, stage)
    if TENSOR_PARALLEL > 1:
        held = [name for name, _ in model.named_modules()]
        plan = {pattern: style for pattern, style in TENSOR_PARALLEL_PLAN.items()
                if any(fnmatch.fnmatchcase(name, pattern) for name in held)}
        parallelize_module(model, mesh["tp"], plan)
    if RECOMPUTE_BLOCKS:
        recompute_blocks(model, stage)
    if DATA_PARALLEL > 1:
        fully_shard(model, mesh=mesh["dp"], reshard_after_forward=RESHARD_AFTER_FORWARD)
    if PIPELINE_STAGES == 1:
        return model, None
    device = torch.device(mesh.device_type, torch.cuda.current_device() if mesh.device_type == "cuda" else 0)
    return model, PipelineStage(model, stage, PIPELINE_STAGES, device, group=mesh["pp"].get_group())


def schedule(pipeline_stage, loss_fn):
    """The plan's schedule: call step(local_batch(inputs)) on the first stage,
    step(target=local_batch(targets), losses=[]) on the last, step() between."""
    return SCHEDULE(pipeline_stage, n_microbatches=MICRO_BATCHES, loss_fn=loss_fn)


def local_batch(batch, mesh):
    """This data-parallel rank's rows of the global batch: MICRO_BATCHES
    micro-batches of MICRO_BATCH_PER_GPU."""
    rows = batch.shape[0] // DATA_PARALLEL
    rank = mesh["dp"].get_local_rank()
    return batch[rank * rows:(rank + 1) * rows]
)";

}  // namespace

std::string torch_recipe(const LaunchSettings& s) {
  std::string out;
  out += "# PyTorch recipe for " + s.graph + " on " + std::to_string(s.devices) +
         " GPUs, read from a pase plan (docs/launch.md).\n"
         "# Under torchrun, one process per GPU: mesh = make_mesh(); module, stage = parallelize(model, mesh);\n"
         "# schedule(stage, loss_fn).step(...). `model` names its modules as the plan's weights do, and its\n"
         "# forward passes over a module that is None (another stage's; torchtitan's models do).\n"
         "import fnmatch\n\n"
         "import torch\n"
         "from torch import nn\n"
         "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper\n"
         "from torch.distributed.device_mesh import init_device_mesh\n"
         "from torch.distributed.fsdp import fully_shard\n"
         "from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe\n"
         "from torch.distributed.tensor import Replicate\n"
         "from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module\n\n";
  out += torch_settings(s);
  out += torch_functions;
  return out;
}

}  // namespace pase
