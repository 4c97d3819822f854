#pragma once
// Loading the graph a subcommand was given, whatever its format.
#include <string>
#include <vector>

#include "graphs/graph.h"
#include "onnximport/import_onnx.h"

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

}  // namespace pase
