// libFuzzer harness: fuzz_targets.h's graph_input (docs/fuzzing.md).
#include "fuzz/fuzz_main.h"
#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return pase::fuzz::run_input(pase::fuzz::graph_input, data, size);
}
