// libFuzzer harness: bytes as an ONNX model, imported with the default
// options (which builds the pase graph). InputError is the answer to bad
// input; anything else escaping, a sanitizer report or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphs/error.h"
#include "onnximport/import_onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)pase::import_onnx_bytes(bytes, "fuzz.onnx", pase::OnnxImportOptions{});
  } catch (const pase::InputError&) {
  }
  return 0;
}
