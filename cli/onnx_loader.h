#pragma once
// Importing ONNX models through the plugin module, loaded on first use.
#include <string>

#include "onnximport/import_onnx.h"

namespace pase {

/// True when `path` names an ONNX file (by its .onnx extension, any case).
[[nodiscard]] bool is_onnx_file(const std::string& path);

/// import_onnx through the plugin next to the executable; InputError if the
/// plugin is missing (built without ONNX) or the model cannot be imported.
[[nodiscard]] OnnxImport import_onnx_model(const std::string& path, const OnnxImportOptions& options);

}  // namespace pase
