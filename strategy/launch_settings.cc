#include "strategy/launch_settings.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "base/error.h"
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

// Each layer's module: its first weight's, but for a weight an earlier layer
// reads too (a tied weight's second reader, GPT's lm_head), the layer's own name.
std::vector<std::string> layer_modules(const StrategyDocument& document) {
  std::vector<std::string> modules;
  std::set<std::string> read;
  for (const StrategyLayer& layer : document.layers) {
    if (layer.weights.empty()) {
      modules.emplace_back();
      continue;
    }
    const std::string& weight = layer.weights[0].name;
    std::string module = module_of(weight);
    if (!read.insert(weight).second) {
      module = layer.name;
      std::replace(module.begin(), module.end(), '/', '.');
    }
    modules.push_back(module);
  }
  return modules;
}

// The model's chunks in the graph's order: each run of layers of one stage
// (interleaved stages come round again), and the blocks each holds.
void read_chunks(const StrategyDocument& document, const std::vector<std::string>& modules, LaunchSettings& s) {
  std::vector<std::set<std::string>> chunks;
  int stage = -1;
  for (size_t i = 0; i < document.layers.size(); ++i) {
    const int own = document.layers[i].stage.value_or(0);
    if (chunks.empty() || own != stage) chunks.emplace_back(), stage = own;
    const std::string block = document.layers[i].weights.empty() ? "" : block_of(modules[i]);
    if (!block.empty()) chunks.back().insert(block);
  }
  for (const auto& chunk : chunks) s.blocks_per_chunk.push_back(static_cast<int64_t>(chunk.size()));
}

void read_blocks(const StrategyDocument& document, const std::vector<std::string>& modules, LaunchSettings& s) {
  std::set<std::string> blocks;
  std::vector<std::set<std::string>> blocks_in(static_cast<size_t>(s.stages));
  s.stage_modules.assign(static_cast<size_t>(s.stages), {});
  std::map<std::string, int> stage_of_weight;
  for (size_t i = 0; i < document.layers.size(); ++i) {
    const StrategyLayer& layer = document.layers[i];
    if (layer.weights.empty()) continue;
    const int stage = layer.stage.value_or(0);
    const std::string block = block_of(modules[i]);
    const std::string unit = block.empty() ? modules[i] : block;
    std::vector<std::string>& held = s.stage_modules[static_cast<size_t>(stage)];
    if (std::find(held.begin(), held.end(), unit) == held.end()) held.push_back(unit);
    if (!block.empty()) blocks.insert(block), blocks_in[static_cast<size_t>(stage)].insert(block);
    for (const StrategyTensor& weight : layer.weights) {
      const auto [at, first] = stage_of_weight.insert({weight.name, stage});
      if (!first && at->second != stage)
        s.tied_across_stages.push_back(layer.name + " reads " + weight.name + ", which stage " +
                                       std::to_string(at->second) + " holds too");
    }
  }
  s.blocks = static_cast<int64_t>(blocks.size());
  for (const auto& stage : blocks_in) s.blocks_per_stage.push_back(static_cast<int64_t>(stage.size()));
  read_chunks(document, modules, s);
}

void read_tensor_plan(const StrategyDocument& document, const std::vector<std::string>& modules, LaunchSettings& s,
                      std::vector<std::pair<std::string, std::string>>& deviations) {
  std::map<std::string, std::set<std::string>> styles;  // module pattern -> styles its layers take
  std::map<std::string, bool> embedding;
  for (size_t i = 0; i < document.layers.size(); ++i) {
    const StrategyLayer& layer = document.layers[i];
    if (!is_weight_layer(layer)) continue;
    const std::string style = tensor_style(layer);
    if (tensor_ways(layer) > 1 && style.empty())
      deviations.push_back({layer.name, "its weight splits " + std::to_string(tensor_ways(layer)) +
                                            " ways over both its input and output features (2-D tensor parallelism)"});
    if (style.empty()) continue;
    styles[any_block(modules[i])].insert(style);
    embedding[any_block(modules[i])] = layer.op == "embedding";
  }
  for (const auto& [module, kinds] : styles) {
    if (kinds.size() > 1) {
      deviations.push_back({module, "split colwise in some blocks and rowwise in others"});
      continue;
    }
    const std::string& style = *kinds.begin();
    const bool outside_blocks = module.find('*') == std::string::npos;
    s.tensor_plan.push_back({module, style, embedding[module], outside_blocks && style == "colwise"});
  }
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
  const std::vector<std::string> modules = layer_modules(document);
  read_blocks(document, modules, s);
  read_tensor_plan(document, modules, s, deviations);
  s.deviations = grouped(deviations);
  const int64_t launched = s.stages * s.pattern.tensor * s.pattern.data * s.pattern.context;
  const std::vector<int64_t> stage_devices = document.training ? document.training->stage_devices : std::vector<int64_t>{};
  if (std::adjacent_find(stage_devices.begin(), stage_devices.end(), std::not_equal_to<>()) != stage_devices.end()) {
    // Each framework gives every stage the same tensor x data x context, so
    // no count of GPUs launches stages of unequal ones.
    std::string counts;
    for (int64_t n : stage_devices) counts += (counts.empty() ? "" : ", ") + std::to_string(n);
    s.deviations.push_back("the stages run on unequal numbers of GPUs (" + counts +
                           "), and the frameworks give every stage the same: solve with equal stages to launch it");
  } else if (launched != s.devices)
    s.deviations.push_back("the plan's layers run on " + std::to_string(launched) + " of the " +
                           std::to_string(s.devices) + " GPUs (pipeline " + std::to_string(s.stages) + " x " +
                           words(s.pattern) + "): launch on " + std::to_string(launched) + ", or solve for fewer");
  return s;
}

}  // namespace pase
