#include "strategy/launch_settings.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "base/error.h"
#include "base/json_text.h"
#include "costmodel/dtype.h"

namespace pase {
namespace {

bool is_weight_layer(const StrategyLayer& layer) {
  static const std::set<std::string> ops = {"einsum", "fc", "matmul", "embedding", "conv2d"};
  return !layer.weights.empty() && ops.count(layer.op) > 0 && layer.dims.has_value();
}

int64_t product(const std::vector<int64_t>& values, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < values.size(); ++i) p *= values[i];
  return p;
}

// The split of `layer`'s weights: tensor ways (the letters its first weight follows).
int64_t tensor_ways(const StrategyLayer& layer) {
  std::set<char> letters;
  for (const std::string& dim : layer.weights[0].dims) letters.insert(dim.empty() ? ' ' : dim[0]);
  int64_t ways = 1;
  for (size_t i = 0; i < layer.dims->size() && i < layer.config.size(); ++i)
    if (letters.count((*layer.dims)[i])) ways *= layer.config[i];
  return ways;
}

WeightPattern pattern_of(const StrategyLayer& layer) {
  WeightPattern p;
  p.tensor = tensor_ways(layer);
  p.data = layer.inputs.empty() || layer.inputs[0].split.empty() ? 1 : layer.inputs[0].split[0];
  p.context = std::max<int64_t>(1, layer.devices_used / std::max<int64_t>(1, p.tensor * p.data));
  return p;
}

// "colwise" (the output features split), "rowwise" (the input features or an
// embedding's vocabulary), or "" when both split (2-D) or nothing does.
std::string tensor_style(const StrategyLayer& layer) {
  const int64_t tensor = tensor_ways(layer);
  if (tensor == 1) return "";
  if (layer.op == "embedding") {
    const int64_t vocab = layer.weights[0].split.empty() ? 1 : layer.weights[0].split[0];
    return vocab == tensor ? "rowwise" : vocab == 1 ? "colwise" : "";
  }
  // The activation's features: its dimensions after batch and sequence (after batch for a 2-D input).
  const std::vector<int64_t>& in = layer.inputs[0].split;
  const int64_t in_ways = product(in, in.size() >= 3 ? 2 : 1);
  return in_ways == 1 ? "colwise" : in_ways == tensor ? "rowwise" : "";
}

// "transformer.h.12.attn.c_attn.weight" -> module "transformer.h.12.attn.c_attn", block "transformer.h.12".
std::string module_of(const std::string& weight) {
  const size_t dot = weight.rfind('.');
  return dot == std::string::npos ? weight : weight.substr(0, dot);
}

std::string block_of(const std::string& module) {
  size_t at = 0;
  while (at < module.size()) {
    const size_t next = std::min(module.find('.', at), module.size());
    const std::string part = module.substr(at, next - at);
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos) return module.substr(0, next);
    at = next + 1;
  }
  return "";
}

// The module name with its block number as "*": one entry for every block.
std::string any_block(const std::string& module) {
  const std::string block = block_of(module);
  if (block.empty()) return module;
  const size_t dot = block.rfind('.');
  return block.substr(0, dot + 1) + "*" + module.substr(block.size());
}

std::string words(const WeightPattern& p) {
  return "tensor " + std::to_string(p.tensor) + " x data " + std::to_string(p.data) +
         (p.context > 1 ? " x context " + std::to_string(p.context) : "");
}

void read_blocks(const StrategyDocument& document, LaunchSettings& s) {
  std::set<std::string> blocks;
  std::vector<std::set<std::string>> per_stage(static_cast<size_t>(s.stages));
  int last_stage = 0;
  for (const StrategyLayer& layer : document.layers) {
    const int stage = layer.stage.value_or(0);
    if (layer.weights.empty()) continue;
    const std::string module = module_of(layer.weights[0].name);
    const std::string block = block_of(module);
    if (!block.empty()) blocks.insert(block), per_stage[static_cast<size_t>(stage)].insert(block);
    if (stage != last_stage) s.stage_first_module.push_back(block.empty() ? module : block);
    last_stage = stage;
  }
  s.blocks = static_cast<int64_t>(blocks.size());
  for (const auto& stage : per_stage) s.blocks_per_stage.push_back(static_cast<int64_t>(stage.size()));
}

void read_tensor_plan(const StrategyDocument& document, LaunchSettings& s,
                      std::vector<std::pair<std::string, std::string>>& deviations) {
  std::map<std::string, std::set<std::string>> styles;  // module pattern -> styles its layers take
  for (const StrategyLayer& layer : document.layers) {
    if (!is_weight_layer(layer)) continue;
    const std::string style = tensor_style(layer);
    if (tensor_ways(layer) > 1 && style.empty())
      deviations.push_back({layer.name, "its weight splits " + std::to_string(tensor_ways(layer)) +
                                            " ways over both its input and output features (2-D tensor parallelism)"});
    // The layer's own module (a tied weight's second reader, GPT's lm_head, is its own module).
    std::string module = layer.name;
    std::replace(module.begin(), module.end(), '/', '.');
    if (!style.empty()) styles[any_block(module)].insert(style);
  }
  for (const auto& [module, kinds] : styles)
    if (kinds.size() == 1) s.tensor_plan.push_back({module, *kinds.begin()});
    else deviations.push_back({module, "split colwise in some blocks and rowwise in others"});
}

// "transformer/h.12/attn/c_attn" -> "transformer/h.*/attn/c_attn": a block's number (a
// whole name component, or one after a dot) as "*".
std::string any_number(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    size_t j = i;
    while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
    const bool whole = j > i && i > 0 && (name[i - 1] == '.' || name[i - 1] == '/') &&
                       (j == name.size() || name[j] == '/' || name[j] == '.');
    if (whole) {
      out += '*';
      i = j;
    } else {
      out += name[i++];
    }
  }
  return out;
}

// One line per kind of deviation: the layers that differ alike in every block as one.
std::vector<std::string> grouped(const std::vector<std::pair<std::string, std::string>>& deviations) {
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, size_t> count;
  for (const auto& [layer, what] : deviations) {
    const std::pair<std::string, std::string> key{any_number(layer), what};
    if (count[key]++ == 0) keys.push_back(key);
  }
  std::vector<std::string> lines;
  for (const auto& key : keys) {
    const size_t n = count[key];
    lines.push_back(key.first + (n > 1 ? " (" + std::to_string(n) + " layers)" : "") + ": " + key.second);
  }
  return lines;
}

}  // namespace

LaunchSettings launch_settings(const StrategyDocument& document) {
  LaunchSettings s;
  s.graph = document.graph;
  s.devices = document.devices.value_or(0);
  std::map<WeightPattern, size_t> patterns;
  std::map<int, size_t> zeros;
  size_t recomputed = 0;
  for (const StrategyLayer& layer : document.layers) {
    recomputed += layer.recompute.value_or(false);
    if (!is_weight_layer(layer)) continue;
    ++patterns[pattern_of(layer)];
    ++zeros[layer.zero.value_or(0)];
  }
  if (patterns.empty())
    throw InputError(document.source + ": no layer multiplies by a weight: nothing to launch tensor or data parallel");
  s.pattern = std::max_element(patterns.begin(), patterns.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  s.zero = std::max_element(zeros.begin(), zeros.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  if (document.training) {
    const TrainingRecord& t = *document.training;
    s.stages = t.stages;
    s.schedule = t.schedule;
    s.micro_batches = t.micro_batches;
    s.micro_batch_size = t.micro_batch_size;
    s.recompute = recomputed == 0 ? "none" : t.recompute == Recompute::Full ? "full" : "selective";
  }
  if (document.memory) s.dtype = dtype_name(document.memory->options.dtype);
  if (s.micro_batch_size == 0 && !document.layers.empty() && !document.layers[0].inputs.empty())
    s.micro_batch_size = document.layers[0].inputs[0].shape.empty() ? 0 : document.layers[0].inputs[0].shape[0];
  s.global_batch = s.micro_batch_size * s.micro_batches;
  s.per_device_micro_batch = s.micro_batch_size / std::max<int64_t>(1, s.pattern.data);
  std::vector<std::pair<std::string, std::string>> deviations;
  for (const StrategyLayer& layer : document.layers)
    if (is_weight_layer(layer) && !(pattern_of(layer) == s.pattern))
      deviations.push_back({layer.name, words(pattern_of(layer)) + ", not " + words(s.pattern)});
  read_blocks(document, s);
  read_tensor_plan(document, s, deviations);
  s.deviations = grouped(deviations);
  return s;
}

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
