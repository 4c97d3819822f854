// The strategy file's writer (strategy_document.h). Written straight to
// text: building the document as nlohmann::json first took longer than
// solving the smaller graphs. The layout is a layer per line, which reads
// well and diffs well.
#include "base/json_text.h"
#include "plans/plan_text.h"
#include "strategy/strategy_document.h"

namespace pase {
namespace {

// Writes the members of one JSON object, comma-separated.
class Members {
 public:
  explicit Members(std::string& out) : out_(out) {}
  std::string& operator()(const char* key) {
    if (!first_) out_ += ',';
    first_ = false;
    append_json_string(out_, key);
    out_ += ':';
    return out_;
  }

 private:
  std::string& out_;
  bool first_ = true;
};

void append_optional_number(std::string& out, const std::optional<double>& value) {
  if (value) append_json_number(out, *value);
  else out += "null";
}

void append_replaced(std::string& out, const std::vector<ReplacedNodeV1>& replaced) {
  out += '[';
  for (size_t i = 0; i < replaced.size(); ++i) {
    out += i ? ",{" : "{";
    Members member(out);
    append_json_string(member("op"), replaced[i].op);
    append_json_string(member("name"), replaced[i].name);
    append_json_number(member("flop_share"), replaced[i].flop_share);
    out += '}';
  }
  out += ']';
}

// "exact", and for a bounded solve its bound and gap.
void append_exactness(std::string& out, const SolverReport& solver, double total_cost) {
  append_json_top_level_key(out, "exact");
  out += solver.exact ? "true" : "false";
  if (solver.lower_bound_cost <= 0) return;
  append_json_top_level_key(out, "lower_bound_cost");
  append_json_number(out, solver.lower_bound_cost);
  append_json_top_level_key(out, "gap");
  append_json_number(out, solver.exact ? 0.0 : (total_cost - solver.lower_bound_cost) / solver.lower_bound_cost);
}

void append_plan_summary(std::string& out, const Plan& plan) {
  if (plan.stages.empty()) {
    append_json_top_level_key(out, "mesh");
    append_mesh(out, plan.mesh);
  } else {
    append_json_top_level_key(out, "stage_meshes");
    append_stage_meshes(out, plan.stages);
  }
  append_json_top_level_key(out, "realized_total_cost");
  append_json_number(out, plan.realized_total_cost);
  append_json_top_level_key(out, "axis_assignment");
  out += "{\"method\":\"dp\",\"exact\":";
  out += plan.assignment_exact ? "true" : "false";
  out += ",\"proof\":";
  append_json_string(out, plan.assignment_proof);
  out += ",\"candidates_per_layer\":" + std::to_string(plan.candidates_per_layer);
  out += ",\"realized_total_lower_bound\":";
  append_json_number(out, plan.realized_total_lower_bound);
  out += '}';
}

void append_memory(std::string& out, const MemoryReport& memory) {
  append_json_top_level_key(out, "memory");
  out += '{';
  Members member(out);
  append_json_number(member("per_device_bytes"), memory.bytes.total());
  std::string& cap = member("cap_bytes");
  if (memory.cap) append_json_number(cap, *memory.cap);
  else cap += "null";
  append_json_number(member("weights_bytes"), memory.bytes.weights);
  append_json_number(member("activations_bytes"), memory.bytes.activations);
  append_json_string(member("dtype"), dtype_name(memory.options.dtype));
  append_json_string(member("optimizer"), optimizer_name(memory.options.optimizer));
  append_optional_number(member("lower_bound_cost"), memory.lower_bound);
  append_optional_number(member("gap"), memory.gap);
  out += '}';
}

// The `training` object (docs/training.md), with its `pipeline` (docs/pipeline.md).
void append_training(std::string& out, const TrainingRecord& t) {
  append_json_top_level_key(out, "training");
  out += '{';
  Members member(out);
  append_json_number(member("micro_batches"), t.micro_batches);
  append_json_number(member("micro_batch_size"), t.micro_batch_size);
  append_json_string(member("recompute"), recompute_name(t.recompute));
  if (t.zero == kZeroAuto) append_json_string(member("zero"), "auto");
  else append_json_number(member("zero"), int64_t{t.zero});
  append_json_string(member("attention"), attention_name(t.attention));
  member("pipeline") += "{\"stages\":";
  append_json_number(out, t.stages);
  out += ",\"schedule\":";
  append_json_string(out, t.schedule);
  auto list = [&](const char* key, const auto& values) {
    out += std::string(",\"") + key + "\":[";
    for (size_t k = 0; k < values.size(); ++k) {
      if (k) out += ',';
      append_json_number(out, values[k]);
    }
    out += ']';
  };
  list("stage_devices", t.stage_devices);
  list("stage_cost", t.stage_cost);
  list("stage_memory_bytes", t.stage_memory_bytes);
  out += "}}";
}

// A layer's inputs, outputs or weights; with a plan, each tensor's layout too.
void append_tensors(std::string& out, const char* key, const std::vector<StrategyTensor>& tensors,
                    const std::vector<PlannedTensor>* planned, const Mesh* mesh, Members& member) {
  const bool is_weight = key[0] == 'w', is_input = key[0] == 'i';
  member(key) += '[';
  for (size_t k = 0; k < tensors.size(); ++k) {
    const StrategyTensor& tensor = tensors[k];
    out += k ? ",{" : "{";
    Members field(out);
    if (is_input) append_json_string(field("tensor"), tensor.name);
    if (is_weight) append_json_string(field("name"), tensor.name);
    append_json_array(field("shape"), tensor.shape);
    if (is_weight) append_json_array(field("dims"), tensor.dims);
    append_json_array(field("split"), tensor.split);
    if (planned) append_tensor_plan(out, (*planned)[k], *mesh, is_weight, /*with_dims=*/!is_weight);
    out += '}';
  }
  out += ']';
}

void append_layer(std::string& out, const StrategyLayer& layer, const Plan* plan, size_t v) {
  const PlannedLayer* planned = plan ? &plan->layers[v] : nullptr;
  const Mesh* mesh = plan ? &plan->mesh_of(*planned) : nullptr;
  out += v ? ",\n    {" : "\n    {";
  Members member(out);
  append_json_string(member("name"), layer.name);
  append_json_string(member("op"), layer.op);
  append_json_string(member("dims"), layer.dims.value_or(""));
  append_json_array(member("domain"), layer.domain);
  append_json_array(member("config"), layer.config);
  if (planned) append_mesh_axes(member("mesh_axes"), *planned, *mesh);
  append_json_number(member("devices_used"), layer.devices_used);
  append_json_number(member("cost"), layer.cost);
  if (layer.recompute) member("recompute") += *layer.recompute ? "true" : "false";
  if (layer.zero) append_json_number(member("zero"), int64_t{*layer.zero});
  if (layer.stage) append_json_number(member("stage"), int64_t{*layer.stage});
  if (layer.fused_attention) member("fused_attention") += *layer.fused_attention ? "true" : "false";
  if (!layer.sequence_parallel.empty()) append_json_string(member("sequence_parallel"), layer.sequence_parallel);
  append_tensors(out, "inputs", layer.inputs, planned ? &planned->inputs : nullptr, mesh, member);
  append_tensors(out, "outputs", layer.outputs, planned ? &planned->outputs : nullptr, mesh, member);
  append_tensors(out, "weights", layer.weights, planned ? &planned->weights : nullptr, mesh, member);
  out += '}';
}

void append_solver(std::string& out, const SolverReport& solver) {
  append_json_top_level_key(out, "solver");
  out += '{';
  Members member(out);
  append_json_string(member("order_kind"), solver.order_kind);
  append_json_array(member("order"), solver.order);
  append_json_number(member("max_dependent_set"), static_cast<uint64_t>(solver.max_dependent_set));
  append_json_number(member("table_entries"), solver.table_entries);
  append_json_number(member("largest_table_entries"), solver.largest_table_entries);
  if (solver.timings) append_json_number(member("peak_table_bytes"), solver.peak_table_bytes);
  if (solver.relaxed_edges > 0) append_json_number(member("relaxed_edges"), static_cast<uint64_t>(solver.relaxed_edges));
  if (solver.timings) append_json_number(member("seconds"), solver.seconds);
  if (solver.uniform) {
    std::string& uniform = member("uniform_blocks");
    uniform += "{\"runs\":[";
    for (size_t i = 0; i < solver.uniform_runs.size(); ++i) {
      const SolverReport::UniformRunReport& run = solver.uniform_runs[i];
      uniform += i ? ",{\"first_layer\":" : "{\"first_layer\":";
      append_json_string(uniform, run.first_layer);
      uniform += ",\"blocks\":";
      append_json_number(uniform, static_cast<uint64_t>(run.blocks));
      uniform += ",\"layers_per_block\":";
      append_json_number(uniform, static_cast<uint64_t>(run.layers_per_block));
      uniform += ",\"layers_around\":";
      append_json_number(uniform, static_cast<uint64_t>(run.layers_around));
      uniform += '}';
    }
    uniform += "],\"free_optimum_cost\":";
    append_json_number(uniform, solver.free_optimum_cost);
    uniform += '}';
  }
  out += '}';
}

// Everything above the layers: the header, the machine and cost, exactness,
// the plan's summary or why none, the memory.
void append_head(std::string& out, const StrategyDocument& d) {
  append_json_top_level_key(out, "format");
  append_json_string(out, "pase-strategy");
  append_json_top_level_key(out, "version");
  append_json_number(out, int64_t{1});
  append_json_top_level_key(out, "graph");
  append_json_string(out, d.graph);
  append_json_top_level_key(out, "devices");
  append_json_number(out, d.devices.value_or(0));
  append_json_top_level_key(out, "machine");
  out += '{';
  Members machine(out);
  append_json_number(machine("flops_tflops"), d.flops_tflops.value_or(0));
  append_json_number(machine("bandwidth_gbps"), d.bandwidth_gbps.value_or(0));
  if (!d.machine_profile.empty()) append_json_string(machine("profile"), d.machine_profile);
  out += '}';
  append_json_top_level_key(out, "cost_model");
  append_json_string(out, d.cost_model);
  append_json_top_level_key(out, "cost_unit");
  append_json_string(out, d.cost_unit);
  append_json_top_level_key(out, "total_cost");
  append_json_number(out, d.total_cost.value_or(0));
  if (!d.replaced.empty()) {  // what a lenient import left out: the cost above does not include it
    append_json_top_level_key(out, "replaced");
    append_replaced(out, d.replaced);
  }
  if (d.solver) append_exactness(out, *d.solver, d.total_cost.value_or(0));
  if (!d.summary.empty()) {
    append_json_top_level_key(out, "summary");
    append_json_string(out, d.summary);
  }
  append_json_top_level_key(out, "layer_cost");
  append_json_number(out, d.layer_cost.value_or(0));
  append_json_top_level_key(out, "redistribution_cost");
  append_json_number(out, d.redistribution_cost.value_or(0));
  if (d.plan) {
    append_plan_summary(out, *d.plan);
  } else if (!d.plan_unavailable.empty()) {
    append_json_top_level_key(out, "plan_unavailable");
    append_json_string(out, d.plan_unavailable);
  }
  if (d.memory) append_memory(out, *d.memory);
  if (d.training) append_training(out, *d.training);
}

}  // namespace

std::string write_strategy(const StrategyDocument& document) {
  std::string out;
  out.reserve(512 + 400 * document.layers.size());
  append_head(out, document);
  append_json_top_level_key(out, "layers");
  out += '[';
  const Plan* plan = document.plan ? &*document.plan : nullptr;
  for (size_t v = 0; v < document.layers.size(); ++v) append_layer(out, document.layers[v], plan, v);
  out += document.layers.empty() ? "]" : "\n  ]";
  if (document.solver) append_solver(out, *document.solver);
  out += "\n}\n";
  return out;
}

}  // namespace pase
