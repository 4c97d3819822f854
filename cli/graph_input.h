#pragma once
// Loading the graph a subcommand was given, whatever its format.
#include <string>
#include <vector>

#include "costmodel/training_setup.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "onnximport/import_onnx.h"
#include "strategy/strategy_document.h"

namespace pase {

/// How a command that takes the import options (`solve`) imports an ONNX model.
struct GraphInputImport {
  OnnxImportOptions options;
  std::vector<std::string>* notes = nullptr;  ///< where the importer's notes go (e.g. what --lenient replaced)
};

/// `--lenient` as written: "" (absent), "true" (the bare flag) or "force"; UsageError otherwise.
void set_lenient(OnnxImportOptions& options, const std::string& value);

/// Reads a pase-graph JSON file, or imports an ONNX model (`.onnx`): with
/// `import`'s options, worded as the command's own flags, or else with the
/// defaults of `pase import`. InputError naming the file on any problem.
[[nodiscard]] Graph load_graph_input(const std::string& path, const GraphInputImport* import = nullptr);

/// The same as a graph file, not yet built (to build at several batches).
[[nodiscard]] GraphFileV1 read_graph_input(const std::string& path, const GraphInputImport* import = nullptr);

/// The graph a training setup prices (docs/training.md): `file` at the
/// micro-batch size batch / setup.micro_batches, with the layers full
/// recomputation recomputes marked. UsageError when the count does not
/// divide the batch; InputError naming the file when the graph does not
/// build at the micro-batch size.
[[nodiscard]] Graph training_graph(const GraphFileV1& file, const std::string& path, const TrainingSetup& setup);

/// Under --recompute auto or --zero auto, a strategy file's layers say
/// which recompute and which ZeRO stage each runs: sets them on `graph`'s
/// vertices (by name) for the options left to auto. UsageError when the
/// file (`path`) records no such choice for a layer of the graph. A layer's
/// sequence-parallel role (a Megatron baseline's) is set whatever the
/// options; InputError where it is not the layer's.
void apply_layer_techniques(Graph& graph, const StrategyDocument& file, const TrainingSetup& setup,
                            const std::string& path);

/// The setup's micro-batch size: the batch of the graph it prices (0: the
/// whole batch of a graph without data inputs).
[[nodiscard]] int64_t micro_batch_size(const GraphFileV1& file, const TrainingSetup& setup);

/// Refuses a strategy of several pipeline stages (docs/pipeline.md) in a
/// command that prices one stage on every device (evaluate, explain):
/// "PATH: training.pipeline: 4 stages; COMMAND prices a strategy of one
/// stage (pase solve --pipeline-stages prices pipelines)".
void refuse_pipeline_strategy(const StrategyDocument& file, const std::string& path, const std::string& command);

/// Why the strategy file `text` has no plan: "PATH: has no plan (solve with
/// --mesh to make one)", or for a pipeline that its stages are not placed yet.
[[nodiscard]] std::string no_plan_words(const std::string& text, const std::string& path);

}  // namespace pase
