#include "cli/process_memory.h"

#include <cstdint>
#include <cstdlib>  // defines __GLIBC__ where glibc is the C library
#include <fstream>
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
  // the probe did and runs to the end of the heap: advise huge pages from its
  // first 2 MiB boundary on. (A filler block that also moved fresh
  // allocations up to that boundary, so the first MiB of a solve was
  // huge-page backed too, was measured and removed: it saved at most 3.6% of
  // a zoo solve and cost 7% of AlexNet's at p = 8.)
#if __GLIBC_PREREQ(2, 33)  // mallinfo2
  const auto heap_end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t top = heap_end - mallinfo2().keepcost;
  const std::uintptr_t first_huge = (top + kHugePage - 1) & ~(kHugePage - 1);
  if (heap_end == static_cast<std::uintptr_t>(-1) || first_huge + kHugePage > heap_end) return;
  madvise(reinterpret_cast<void*>(first_huge), (heap_end - first_huge) & ~(kHugePage - 1), MADV_HUGEPAGE);
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

}  // namespace pase
