#include "cli/graph_input.h"

#ifdef PASE_HAVE_ONNX
#include "onnximport/import_onnx.h"
#endif

namespace pase {

Graph load_graph_input(const std::string& path) {
#ifdef PASE_HAVE_ONNX
  // An ONNX model is imported with the defaults of `pase import`.
  if (is_onnx_path(path)) return build_graph(import_onnx(path, OnnxImportOptions{}).graph, path);
#endif
  return load_graph(path);
}

}  // namespace pase
