// The ONNX importer as a plugin: `pase` loads this module (dlopen) only when
// it is given an .onnx file, so the large ONNX and protobuf libraries are not
// loaded, relocated and initialised on every run.
#include "onnximport/import_onnx.h"
#include "onnximport/onnx_plugin.h"

extern "C" __attribute__((visibility("default"))) void pase_onnx_import_v1(const char* path,
                                                                         const pase::OnnxImportOptions* options,
                                                                         pase::OnnxImport* result) {
  *result = pase::import_onnx(path, *options);  // InputError propagates to the caller
}
