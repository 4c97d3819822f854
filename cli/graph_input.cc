#include "cli/graph_input.h"

#include <unordered_map>

#include "cli/exit_status.h"
#include "cli/onnx_loader.h"

#include "graphs/rebatch.h"
#include "graphs/attention.h"
#include "graphs/recompute.h"
#include "graphs/sequence_parallel.h"

namespace pase {

void set_lenient(OnnxImportOptions& options, const std::string& value) {
  if (value.empty()) return;
  if (value != "true" && value != "force")
    throw UsageError("--lenient: expected no value or 'force', got '" + value + "'");
  options.lenient = true;
  options.lenient_force = value == "force";
}

Graph load_graph_input(const std::string& path, const GraphInputImport* import) {
  if (!is_onnx_file(path)) return load_graph(path);
  return build_graph(read_graph_input(path, import), path);
}

GraphFileV1 read_graph_input(const std::string& path, const GraphInputImport* import) {
  if (!is_onnx_file(path)) return read_graph_file(path);
  // Without the command's own import options, an ONNX model is imported with
  // the defaults of `pase import`: an import option that would help is one of
  // that command's.
  const OptionSpellings spellings =
      import ? OptionSpellings{{"batch", "--batch"}, {"lenient", "--lenient"}, {"lenient_force", "--lenient=force"}, {"loss", "--loss"}}
             : OptionSpellings{{"batch", "`pase import --batch`"},
                               {"lenient", "`pase import --lenient`"},
                               {"lenient_force", "`pase import --lenient=force`"},
                               {"loss", "`pase import --loss`"}};
  GraphFileV1 file;
  with_option_spellings(spellings, [&] {
    OnnxImport imported = import_onnx_model(path, import ? import->options : OnnxImportOptions{});
    if (import && import->notes) *import->notes = imported.notes;
    file = std::move(imported.graph);
    return 0;
  });
  return file;
}

Graph training_graph(const GraphFileV1& file, const std::string& path, const TrainingSetup& setup) {
  Graph graph;
  if (setup.micro_batches == 1) {
    graph = build_graph(file, path);
  } else {
    GraphFileV1 micro;
    try {
      micro = micro_batch_graph(file, setup.micro_batches, path);
    } catch (const OptionError& error) {
      throw UsageError(error.words().with("--micro-batches"));
    }
    try {
      graph = build_graph(micro, path);
    } catch (const InputError& error) {
      throw InputError(std::string(error.what()) + " (the graph at a micro-batch of " +
                       std::to_string(graph_batch(micro, path)) + ", --micro-batches " +
                       std::to_string(setup.micro_batches) + ")");
    }
  }
  set_full_recompute(graph, setup.recompute == Recompute::Full);
  set_fused_attention(graph, setup.attention == Attention::Fused);
  return graph;
}

namespace {

// A strategy file's sequence-parallel roles (a Megatron baseline's), each
// checked against what the layer is: a role that does not apply would price
// a collective the layer cannot run.
void apply_sequence_parallel(Graph& graph, const StrategyDocument& file, const std::string& path) {
  std::unordered_map<std::string, const StrategyLayer*> by_name;
  for (const StrategyLayer& layer : file.layers)
    if (!layer.sequence_parallel.empty()) by_name.emplace(layer.name, &layer);
  if (by_name.empty()) return;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    Vertex& vertex = graph.vertices[v];
    const auto it = by_name.find(vertex.name);
    if (it == by_name.end()) continue;
    const SequenceParallel applies = sequence_parallel_role(graph, static_cast<int>(v), build_vertex_model(vertex));
    const std::string role = sequence_parallel_name(applies);
    if (role != it->second->sequence_parallel)
      throw InputError(path + ": layer '" + vertex.name + "': field 'sequence_parallel': '" +
                       it->second->sequence_parallel + "' does not apply to this layer (" +
                       (role.empty() ? "it has no sequence-parallel role" : "its role is '" + role + "'") + ")");
    vertex.sequence_parallel = applies;
  }
}

}  // namespace

void apply_layer_techniques(Graph& graph, const StrategyDocument& file, const TrainingSetup& setup,
                            const std::string& path) {
  apply_sequence_parallel(graph, file, path);
  const bool recompute = setup.recompute == Recompute::Auto, zero = setup.zero == kZeroAuto;
  if (!recompute && !zero) return;
  std::unordered_map<std::string, const StrategyLayer*> by_name;
  for (const StrategyLayer& layer : file.layers) by_name.emplace(layer.name, &layer);
  for (Vertex& vertex : graph.vertices) {
    const auto it = by_name.find(vertex.name);
    const StrategyLayer* layer = it == by_name.end() ? nullptr : it->second;
    const char* option = recompute ? "--recompute" : "--zero";
    if (!layer || (recompute && !layer->recompute) || (zero && !layer->zero))
      throw UsageError(std::string(option) + " auto: prices the per-layer choices of a strategy file, and " + path +
                       " records none for layer '" + vertex.name + "' (give " + option + " a mode)");
    if (recompute) vertex.recompute = *layer->recompute;
    if (zero) vertex.zero = *layer->zero;
  }
}

int64_t micro_batch_size(const GraphFileV1& file, const TrainingSetup& setup) {
  const std::optional<int64_t> batch = find_graph_batch(file);
  return batch ? *batch / setup.micro_batches : 0;
}

void refuse_pipeline_strategy(const StrategyDocument& file, const std::string& path, const std::string& command) {
  if (!file.training || file.training->stages <= 1) return;
  throw InputError(path + ": training.pipeline: " + std::to_string(file.training->stages) + " stages; " + command +
                   " prices a strategy of one stage (pase solve --pipeline-stages prices pipelines)");
}

std::string no_plan_words(const std::string& text, const std::string& path) {
  const StrategyDocument file = parse_strategy_file(text, path);
  if (!file.plan_unavailable.empty()) return path + ": has no plan: " + file.plan_unavailable;
  if (file.training && file.training->stages > 1)
    return path + ": has no plan (solve without --no-plan to place each of its " +
           std::to_string(file.training->stages) + " pipeline stages on a mesh)";
  return path + ": has no plan (solve with --mesh to make one)";
}

}  // namespace pase
