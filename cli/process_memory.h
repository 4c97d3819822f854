// Start and end of a short-lived, allocation-heavy process.
#pragma once
#include <cstdint>

namespace pase {

// Makes the C heap grow in large, transparent-huge-page-backed steps, starts
// fresh allocations on a 2 MiB boundary (so that they are huge-page backed
// from the first one) and keeps freed memory for reuse. A solve touches a few
// MiB of fresh memory; taken as 4 KiB page faults, that costs more than the
// solve itself on virtual machines where a fault costs ~10 us. Harmless (a
// no-op) where glibc or THP is absent.
void prepare_process_heap();

// The process's peak resident memory so far, in bytes (VmHWM: this program's
// own, not what the process held before exec); 0 where /proc is not there.
[[nodiscard]] uint64_t peak_resident_bytes();

// Flushes standard output and error (C++ and C streams) and ends the process
// without running destructors: freeing every graph, table and string block by
// block, and oneTBB's shutdown, take about 1 ms that the kernel's release of
// the whole address space makes redundant. In sanitizer builds it calls
// std::exit instead, so that the leak check still runs.
[[noreturn]] void end_process(int status);

}  // namespace pase
