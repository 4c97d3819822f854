#include "cli/graph_input.h"

#include "cli/onnx_loader.h"

namespace pase {

Graph load_graph_input(const std::string& path) {
  // An ONNX model is imported with the defaults of `pase import`.
  if (is_onnx_file(path)) return build_graph(import_onnx_model(path, OnnxImportOptions{}).graph, path);
  return load_graph(path);
}

}  // namespace pase
