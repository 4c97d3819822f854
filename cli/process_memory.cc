#include "cli/process_memory.h"

#include <cstdint>
#include <cstdlib>  // defines __GLIBC__ where glibc is the C library

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
  // Blocks up to 32 MiB (glibc's ceiling) come from the heap, so DP tables
  // freed and allocated again reuse warm pages instead of fresh mappings.
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapStep / 2));
  mallopt(M_TOP_PAD, static_cast<int>(kHeapStep));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * kHeapStep));
  // One arena for every thread: a worker's own arena is a fresh mapping that
  // faults 4 KiB at a time (about 400 faults for a Transformer p = 16 DP on
  // the second thread), while this heap is warm and huge-page backed. The
  // DP allocates a few blocks per vertex, so the shared lock is not
  // contended; with pricing in parallel it was (measured), which is one more
  // reason pricing stays on one thread.
  mallopt(M_ARENA_MAX, 1);
  char* before = static_cast<char*>(sbrk(0));
  // More than the top chunk holds, so the heap grows by the pad. Large, so
  // that malloc's bookkeeping writes land at the ends of the new space and
  // the pages between stay untouched until after the madvise. Volatile: the
  // compiler may otherwise drop an unused malloc/free pair.
  void* volatile probe = std::malloc(kHeapStep / 2 - kHugePage);
  char* after = static_cast<char*>(sbrk(0));
  if (before != reinterpret_cast<char*>(-1) && after > before) {
    auto first = (reinterpret_cast<std::uintptr_t>(before) + kHugePage - 1) & ~(kHugePage - 1);
    auto last = reinterpret_cast<std::uintptr_t>(after) & ~(kHugePage - 1);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  std::free(probe);
#endif
}

}  // namespace pase
