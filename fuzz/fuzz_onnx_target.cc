// fuzz_targets.h's ONNX entry, apart so that builds without the importer
// compile the rest.
#include "fuzz/fuzz_targets.h"
#include "onnximport/import_onnx.h"

namespace pase::fuzz {

void onnx_input(const std::string& bytes) { (void)import_onnx_bytes(bytes, "fuzz.onnx", OnnxImportOptions{}); }

}  // namespace pase::fuzz
