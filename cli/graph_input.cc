#include "cli/graph_input.h"

#include "cli/exit_status.h"
#include "cli/onnx_loader.h"

namespace pase {

Graph load_graph_input(const std::string& path) {
  if (!is_onnx_file(path)) return load_graph(path);
  // An ONNX model is imported with the defaults of `pase import`: an import
  // option that would help is one of that command's.
  const OptionSpellings spellings = {{"batch", "`pase import --batch`"},
                                     {"lenient", "`pase import --lenient`"},
                                     {"loss", "`pase import --loss`"}};
  Graph graph;
  with_option_spellings(spellings, [&] {
    graph = build_graph(import_onnx_model(path, OnnxImportOptions{}).graph, path);
    return 0;
  });
  return graph;
}

}  // namespace pase
