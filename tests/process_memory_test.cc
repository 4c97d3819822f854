// The heap set-up of the command-line tools: where fresh allocations land.
// Each test case runs in its own process (ctest), so this one sees a heap
// that only start-up has used, as `pase` does.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>

#include "cli/process_memory.h"

#if defined(__SANITIZE_ADDRESS__)
#define PASE_TEST_OWN_MALLOC 0  // the sanitizer's allocator replaces glibc's heap
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PASE_TEST_OWN_MALLOC 0
#endif
#endif
#ifndef PASE_TEST_OWN_MALLOC
#define PASE_TEST_OWN_MALLOC 1
#endif

TEST_CASE("prepare_process_heap: fresh allocations start just past a 2 MiB boundary") {
#if defined(__GLIBC__) && defined(__linux__) && PASE_TEST_OWN_MALLOC
  pase::prepare_process_heap();
  // Larger than any block freed so far, so it is carved from the top chunk;
  // its memory starts after the chunk's 16-byte header. Without the filler
  // (for instance if the compiler dropped its unused malloc) it would start
  // wherever start-up's allocations ended.
  void* block = std::malloc(std::size_t{4} << 20);
  REQUIRE(block != nullptr);
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  CHECK(at % (std::uintptr_t{2} << 20) == 2 * sizeof(std::size_t));
  std::free(block);
#else
  MESSAGE("glibc's heap is not in use here; nothing to check");
#endif
}
