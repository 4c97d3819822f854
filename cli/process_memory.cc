#include "cli/process_memory.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>  // defines __GLIBC__ where glibc is the C library
#include <fstream>
#include <iostream>
#include <string>

#if defined(__GLIBC__) && defined(__linux__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace pase {

void prepare_process_heap() {
#if defined(__GLIBC__) && defined(__linux__)
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  constexpr std::size_t kHeapStep = std::size_t{64} << 20;
  constexpr int kDefaultMmapMax = 65536;  // glibc's DEFAULT_MMAP_MAX
  // Blocks up to 32 MiB (glibc's ceiling) come from the heap, so DP tables
  // freed and allocated again reuse warm pages instead of fresh mappings.
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapStep / 2));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * kHeapStep));
  // One arena for every thread: a worker's own arena is a fresh mapping that
  // faults 4 KiB at a time (about 400 faults for a Transformer p = 16 DP on
  // the second thread), while this heap is warm and huge-page backed. The
  // DP allocates a few blocks per vertex, so the shared lock is not
  // contended; with pricing in parallel it was (measured), which is one more
  // reason pricing stays on one thread.
  mallopt(M_ARENA_MAX, 1);
  // Grow the heap in one step, with one block and no pad, so that malloc's
  // bookkeeping writes land at the two ends of the new space and the pages
  // between stay untouched until the madvise (a 2 MiB range that already
  // holds a 4 KiB page is never made huge). The block is larger than the
  // mmap ceiling, so mmap is off while it is taken. Volatile: the compiler
  // may otherwise drop an unused malloc/free pair.
  mallopt(M_TOP_PAD, 0);
  mallopt(M_MMAP_MAX, 0);
  void* volatile probe = std::malloc(kHeapStep + kHeapStep / 2);
  std::free(probe);
  mallopt(M_MMAP_MAX, kDefaultMmapMax);
  mallopt(M_TOP_PAD, static_cast<int>(kHeapStep));
  // The top chunk, where fresh allocations are carved from, now starts where
  // the probe did and runs to the end of the heap. Below the first 2 MiB
  // boundary above it the pages can only be 4 KiB, and the first MiB or so
  // of allocations (reading the graph, pricing) would land there, at about
  // 10 us a fault on a VM: a filler block, never touched, moves the top
  // chunk up to the boundary. It is never freed; it holds address space only.
#if __GLIBC_PREREQ(2, 33)  // mallinfo2
  constexpr std::size_t kChunkHeader = 2 * sizeof(std::size_t);
  const auto heap_end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t top = heap_end - mallinfo2().keepcost;
  std::uintptr_t first_huge = (top + kHugePage - 1) & ~(kHugePage - 1);
  if (first_huge != top && first_huge - top < 4 * kChunkHeader) first_huge += kHugePage;  // room for a filler
  if (heap_end == static_cast<std::uintptr_t>(-1) || first_huge + kHugePage > heap_end) return;
  madvise(reinterpret_cast<void*>(first_huge), (heap_end - first_huge) & ~(kHugePage - 1), MADV_HUGEPAGE);
  if (first_huge != top) {
    void* volatile filler = std::malloc(first_huge - top - kChunkHeader);  // volatile: as for the probe
    (void)filler;
  }
#endif
#endif
}

uint64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;  // "VmHWM:  1234 kB"
  return 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define PASE_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define PASE_LEAK_CHECKED 1
#endif
#endif

void end_process(int status) {
#ifdef PASE_LEAK_CHECKED
  std::exit(status);  // atexit handlers: the leak check
#else
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);  // any C stream too (the C++ streams write through C's buffers)
  std::_Exit(status);
#endif
}

}  // namespace pase
