#pragma once
// The body every harness shares: run one input through a fuzz_targets.h
// entry. InputError and ResourceError (bad or oversized input) are the
// answers the contract allows and end the run quietly; anything else
// escapes, and libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"

namespace pase::fuzz {

inline int run_input(void (*target)(const std::string&), const uint8_t* data, size_t size) {
  try {
    target(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const InputError&) {
  } catch (const ResourceError&) {
  }
  return 0;
}

}  // namespace pase::fuzz
