#pragma once
// The plugin's one entry point, looked up by name after dlopen.
namespace pase {
struct OnnxImportOptions;
struct OnnxImport;
}  // namespace pase

/// File name of the plugin module, placed next to the `pase` executable.
#define PASE_ONNX_PLUGIN_FILE "libpase_onnx.so"
/// Symbol of the entry point; bump the suffix if its signature changes.
#define PASE_ONNX_PLUGIN_ENTRY "pase_onnx_import_v1"

/// Imports `path` into `result`; throws pase::InputError like import_onnx.
using PaseOnnxImportFunction = void (*)(const char* path, const pase::OnnxImportOptions* options,
                                        pase::OnnxImport* result);
