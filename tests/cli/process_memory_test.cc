// The heap set-up of the command-line tools and the peak-memory probe. Both
// checks hold whatever the process did before, so they pass under ctest (a
// process per test case) and in one run of the whole test binary alike.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

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

#if defined(__GLIBC__) && defined(__linux__)
#include <unistd.h>
#endif

TEST_CASE("prepare_process_heap: blocks up to 32 MiB come from the heap, not from fresh mappings") {
#if defined(__GLIBC__) && defined(__linux__) && PASE_TEST_OWN_MALLOC
  pase::prepare_process_heap();
  // glibc maps a block this large on its own by default (its threshold
  // starts at 128 KiB); from the heap, a DP table freed and allocated again
  // reuses warm pages. The heap ends at the program break.
  void* block = std::malloc(std::size_t{16} << 20);
  REQUIRE(block != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(block) < reinterpret_cast<std::uintptr_t>(sbrk(0)));
  std::free(block);
#else
  MESSAGE("glibc's heap is not in use here; nothing to check");
#endif
}

TEST_CASE("peak_resident_bytes: at least what the process has touched") {
  constexpr std::size_t kBlock = std::size_t{48} << 20;
  char* block = static_cast<char*>(std::malloc(kBlock));
  REQUIRE(block != nullptr);
  std::memset(block, 1, kBlock);
  const uint64_t peak = pase::peak_resident_bytes();
  CHECK(block[kBlock - 1] == 1);
  std::free(block);
#if defined(__linux__)
  CHECK(peak >= kBlock);
#else
  CHECK(peak == 0);
#endif
}
