// The heap of a short-lived, allocation-heavy process.
#pragma once
#include <cstdint>

namespace pase {

// Makes the C heap grow in large, transparent-huge-page-backed steps, serves
// blocks up to 32 MiB from it (so freed DP tables are reused warm instead of
// mapped afresh), and gives every thread that one heap. Harmless (a no-op)
// where glibc or THP is absent.
void prepare_process_heap();

// The process's peak resident memory so far, in bytes (VmHWM: this program's
// own, not what the process held before exec); 0 where /proc is not there.
[[nodiscard]] uint64_t peak_resident_bytes();

}  // namespace pase
