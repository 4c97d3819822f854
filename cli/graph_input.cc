#include "cli/graph_input.h"

#include "cli/exit_status.h"
#include "cli/onnx_loader.h"

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
  // Without the command's own import options, an ONNX model is imported with
  // the defaults of `pase import`: an import option that would help is one of
  // that command's.
  const OptionSpellings spellings =
      import ? OptionSpellings{{"batch", "--batch"}, {"lenient", "--lenient"}, {"lenient_force", "--lenient=force"}, {"loss", "--loss"}}
             : OptionSpellings{{"batch", "`pase import --batch`"},
                               {"lenient", "`pase import --lenient`"},
                               {"lenient_force", "`pase import --lenient=force`"},
                               {"loss", "`pase import --loss`"}};
  Graph graph;
  with_option_spellings(spellings, [&] {
    OnnxImport imported = import_onnx_model(path, import ? import->options : OnnxImportOptions{});
    if (import && import->notes) *import->notes = imported.notes;
    graph = build_graph(imported.graph, path);
    return 0;
  });
  return graph;
}

}  // namespace pase
