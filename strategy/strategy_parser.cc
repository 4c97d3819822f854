// The strategy file's reader (strategy_document.h): every field the writer
// writes, each checked for its type when present, so a document read back
// writes the same bytes.
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_document.h"
#include "base/json_reader.h"
#include "base/text_file.h"
#include "plans/plan_reader.h"
#include "strategy/strategy_document.h"

namespace pase {
namespace {

constexpr int64_t kMaxSplit = int64_t{1} << 30;

// A count the writer writes as an unsigned integer (bytes, table entries).
uint64_t as_count(const JsonReader& field) {
  if (!field.value().is_number_unsigned())
    field.fail("expected a non-negative integer, got " + json_excerpt(field.value()));
  return field.value().get<uint64_t>();
}

std::optional<double> optional_number(const JsonReader& parent, const std::string& key) {
  std::optional<JsonReader> field = parent.optional(key);
  if (!field || field->value().is_null()) return std::nullopt;
  return field->as_number();
}

std::vector<std::string> as_strings(const JsonReader& list, const std::string& what) {
  std::vector<std::string> out;
  for (const JsonReader& item : list.items(what)) out.push_back(item.as_string());
  return out;
}

std::vector<int64_t> as_splits(const JsonReader& list) {
  std::vector<int64_t> out;
  for (const JsonReader& split : list.items("split counts")) {
    const int64_t count = split.as_int();
    if (count < 1 || count > kMaxSplit) split.fail("expected a split count in 1..2^30, got " + std::to_string(count));
    out.push_back(count);
  }
  return out;
}

// "inputs", "outputs" or "weights" of a layer, each tensor's own fields.
std::vector<StrategyTensor> read_tensors(const JsonReader& layer, const char* key) {
  std::vector<StrategyTensor> tensors;
  std::optional<JsonReader> list = layer.optional(key);
  if (!list) return tensors;
  const bool is_weight = key[0] == 'w', is_input = key[0] == 'i';
  for (const JsonReader& entry : list->items()) {
    entry.expect_object();
    StrategyTensor tensor;
    if (is_input) tensor.name = entry.required("tensor").as_string();
    if (is_weight) tensor.name = entry.required("name").as_string();
    if (auto f = entry.optional("shape")) tensor.shape = f->as_shape();
    if (auto f = entry.optional("split")) tensor.split = as_splits(*f);
    if (is_weight)
      if (auto f = entry.optional("dims")) tensor.dims = as_strings(*f, "strings of layer letters");
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

// A ZeRO stage, 0..3.
int zero_stage(const JsonReader& field) {
  const int64_t stage = field.as_int();
  if (stage < 0 || stage > kMaxZeroStage)
    field.fail("expected a ZeRO stage 0, 1, 2 or 3, got " + std::to_string(stage));
  return static_cast<int>(stage);
}

StrategyLayer read_layer(const JsonReader& layer) {
  StrategyLayer out;
  out.name = layer.required("name").as_string();
  out.config = as_splits(layer.required("config"));
  if (auto f = layer.optional("dims")) out.dims = f->as_string();
  if (auto f = layer.optional("op")) out.op = f->as_string();
  if (auto f = layer.optional("domain")) out.domain = f->as_shape();
  if (auto f = layer.optional("devices_used")) out.devices_used = f->as_positive("number of devices");
  if (auto f = layer.optional("cost")) out.cost = f->as_number();
  if (auto f = layer.optional("recompute")) out.recompute = f->as_bool();
  if (auto f = layer.optional("zero")) out.zero = zero_stage(*f);
  if (auto f = layer.optional("stage")) {
    const int64_t stage = f->as_non_negative();
    if (stage >= (int64_t{1} << 30)) f->fail("expected a stage below 2^30, got " + std::to_string(stage));
    out.stage = static_cast<int>(stage);
  }
  if (auto f = layer.optional("fused_attention")) out.fused_attention = f->as_bool();
  if (auto f = layer.optional("sequence_parallel")) {
    out.sequence_parallel = f->as_string();
    if (out.sequence_parallel != "scatter_output" && out.sequence_parallel != "gather_input")
      f->fail("expected 'scatter_output' or 'gather_input', got '" + out.sequence_parallel + "'");
  }
  out.inputs = read_tensors(layer, "inputs");
  out.outputs = read_tensors(layer, "outputs");
  out.weights = read_tensors(layer, "weights");
  return out;
}

std::vector<StrategyLayer> read_layers(const JsonReader& root) {
  std::vector<JsonReader> layers = root.required("layers", "one entry per vertex").items();
  std::vector<StrategyLayer> out;
  std::unordered_map<std::string, size_t> seen;  // layer name -> index in file
  for (size_t i = 0; i < layers.size(); ++i) {
    JsonReader layer = layers[i].as_subject("layers[" + std::to_string(i) + "]");
    layer.expect_object();
    const std::string name = layer.required("name").as_string();
    layer = layer.as_subject("layer '" + name + "'");
    auto [it, inserted] = seen.emplace(name, i);
    if (!inserted)
      layer.fail("listed twice (layers[" + std::to_string(it->second) + "] and layers[" + std::to_string(i) + "])");
    out.push_back(read_layer(layer));
  }
  return out;
}

template <typename Parse>
auto parse_name(const JsonReader& field, Parse parse) {
  try {
    return parse(field.as_string());
  } catch (const OptionError& error) {
    field.fail(error.words().with(error.words().option));
  }
}

MemoryReport read_memory(const JsonReader& memory) {
  memory.expect_object();
  MemoryReport out;
  out.bytes.weights = as_count(memory.required("weights_bytes"));
  out.bytes.activations = as_count(memory.required("activations_bytes"));
  if (auto total = memory.optional("per_device_bytes"); total && as_count(*total) != out.bytes.total())
    total->fail("expected weights_bytes + activations_bytes, " + std::to_string(out.bytes.total()) + ", got " +
                json_excerpt(total->value()));
  if (auto cap = memory.optional("cap_bytes"); cap && !cap->value().is_null()) out.cap = as_count(*cap);
  out.options.dtype = parse_name(memory.required("dtype"), parse_dtype);
  out.options.optimizer = parse_name(memory.required("optimizer"), parse_optimizer);
  out.lower_bound = optional_number(memory, "lower_bound_cost");
  out.gap = optional_number(memory, "gap");
  return out;
}

// The `training` object with its `pipeline`.
TrainingRecord read_training(const JsonReader& training) {
  training.expect_object();
  TrainingRecord out;
  out.micro_batches = training.required("micro_batches").as_positive("number of micro-batches");
  if (auto f = training.optional("micro_batch_size")) out.micro_batch_size = f->as_positive("micro-batch size");
  if (auto f = training.optional("recompute")) out.recompute = parse_name(*f, parse_recompute);
  if (auto f = training.optional("zero")) out.zero = f->is_string() && f->as_string() == "auto" ? kZeroAuto : zero_stage(*f);
  if (auto f = training.optional("attention")) out.attention = parse_name(*f, parse_attention);
  if (auto pipeline = training.optional("pipeline")) {
    pipeline->expect_object();
    out.stages = pipeline->required("stages").as_positive("number of stages");
    if (auto f = pipeline->optional("schedule")) out.schedule = f->as_string();
    // Each list has one entry per stage.
    auto per_stage = [&](const char* key) {
      std::vector<JsonReader> items = pipeline->required(key).items();
      if (items.size() != static_cast<size_t>(out.stages))
        pipeline->required(key).fail("expected one entry per stage (" + std::to_string(out.stages) + ")");
      return items;
    };
    for (const JsonReader& item : per_stage("stage_devices")) out.stage_devices.push_back(item.as_positive("number of devices"));
    for (const JsonReader& item : per_stage("stage_cost")) out.stage_cost.push_back(item.as_number());
    for (const JsonReader& item : per_stage("stage_memory_bytes")) out.stage_memory_bytes.push_back(as_count(item));
  }
  return out;
}

// `exact` and `lower_bound_cost` at the top, and the `solver` record.
std::optional<SolverReport> read_solver(const JsonReader& root) {
  std::optional<JsonReader> record = root.optional("solver");
  std::optional<JsonReader> exact = root.optional("exact");
  if (!record && !exact) return std::nullopt;
  SolverReport out;
  if (exact) out.exact = exact->as_bool();
  if (std::optional<double> bound = optional_number(root, "lower_bound_cost")) out.lower_bound_cost = *bound;
  if (!record) return out;
  record->expect_object();
  if (auto f = record->optional("order_kind")) out.order_kind = f->as_string();
  if (auto f = record->optional("order")) out.order = as_strings(*f, "vertex names");
  if (auto f = record->optional("max_dependent_set")) out.max_dependent_set = as_count(*f);
  if (auto f = record->optional("table_entries")) out.table_entries = as_count(*f);
  if (auto f = record->optional("largest_table_entries")) out.largest_table_entries = as_count(*f);
  if (auto f = record->optional("relaxed_edges")) out.relaxed_edges = as_count(*f);
  if (auto f = record->optional("peak_table_bytes")) out.peak_table_bytes = as_count(*f), out.timings = true;
  if (auto f = record->optional("seconds")) out.seconds = f->as_number(), out.timings = true;
  return out;
}

std::vector<ReplacedNodeV1> read_replaced(const JsonReader& list) {
  std::vector<ReplacedNodeV1> out;
  for (const JsonReader& entry : list.items()) {
    entry.expect_object();
    out.push_back({entry.required("op").as_string(), entry.required("name").as_string(),
                   entry.required("flop_share").as_number()});
  }
  return out;
}

// The fields above the layers but the plan's.
void read_head(const JsonReader& root, StrategyDocument& d) {
  if (auto f = root.optional("graph")) d.graph = f->as_string();
  if (auto f = root.optional("devices")) d.devices = f->as_positive("number of devices");
  if (auto machine = root.optional("machine")) {
    machine->expect_object();
    d.flops_tflops = optional_number(*machine, "flops_tflops");
    d.bandwidth_gbps = optional_number(*machine, "bandwidth_gbps");
    if (auto profile = machine->optional("profile")) d.machine_profile = profile->as_string();
  }
  if (auto f = root.optional("cost_model")) d.cost_model = f->as_string();
  if (auto f = root.optional("cost_unit")) d.cost_unit = f->as_string();
  // Non-finite totals are written as null: read as unknown.
  if (auto f = root.optional("total_cost"); f && f->value().is_number()) d.total_cost = f->value().get<double>();
  if (auto f = root.optional("replaced")) d.replaced = read_replaced(*f);
  d.solver = read_solver(root);
  d.layer_cost = optional_number(root, "layer_cost");
  d.redistribution_cost = optional_number(root, "redistribution_cost");
  if (auto f = root.optional("plan_unavailable")) d.plan_unavailable = f->as_string();
  if (auto f = root.optional("summary")) d.summary = f->as_string();
  if (auto f = root.optional("memory")) d.memory = read_memory(*f);
  if (auto f = root.optional("training")) d.training = read_training(*f);
}

}  // namespace

StrategyDocument parse_strategy_file(const std::string& text, const std::string& source, bool with_plan) {
  nlohmann::json document = parse_json_document(text, source);
  JsonReader root(document, source);
  root.expect_object("a JSON object at the top level");
  root.check_header("pase-strategy", 1);
  StrategyDocument d;
  d.source = source;
  read_head(root, d);
  d.layers = read_layers(root);
  if (with_plan)
    if (std::optional<PlanFile> plan = read_plan(text, source)) d.plan = std::move(plan->plan);
  return d;
}

StrategyDocument read_strategy_file(const std::string& path, bool with_plan) {
  return parse_strategy_file(read_text_file(path), path, with_plan);
}

}  // namespace pase
