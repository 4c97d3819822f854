#pragma once
// Reads an ONNX model and turns it into a pase-graph (GraphFileV1): shapes
// from ONNX shape inference plus a small constant evaluator, ops mapped onto
// the pase vocabulary (docs/onnx.md has the table).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graphs/graph_file.h"

namespace pase {

/// How to import; the CLI fills this from `pase import` options.
struct OnnxImportOptions {
  std::optional<int64_t> batch;         ///< re-size dim 0 of every data input
  std::string loss = "softmax_xent";    ///< loss appended to each output: softmax_xent or none
  bool lenient = false;                 ///< unsupported ops become zero-cost pass-through vertices
  /// With `lenient`: also when the replaced nodes hold more than
  /// kLenientFlopShare of the model's estimated FLOP (else refused).
  bool lenient_force = false;
};

/// Above this share of the model's estimated FLOP, lenient replacements are refused unless forced.
inline constexpr double kLenientFlopShare = 0.05;

/// A node `lenient` replaced by a pass-through, and its share of the model's estimated FLOP.
struct LenientReplacement {
  std::string op, name;
  double flop_share = 0;
};

/// The imported graph and what the importer wants the user to know.
struct OnnxImport {
  GraphFileV1 graph;
  std::vector<std::string> notes;  ///< one line each, e.g. what --lenient replaced
  std::vector<LenientReplacement> replaced;  ///< every node --lenient replaced, in graph order
};

/// Imports `path`; InputError ("FILE: node 'X': ...") on anything it cannot map.
[[nodiscard]] OnnxImport import_onnx(const std::string& path, const OnnxImportOptions& options);

/// The same from the bytes of an ONNX file held in memory; `source` names it
/// in errors and gives the graph its name, as the path does.
[[nodiscard]] OnnxImport import_onnx_bytes(const std::string& bytes, const std::string& source,
                                           const OnnxImportOptions& options);

}  // namespace pase
