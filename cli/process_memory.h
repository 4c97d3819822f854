// Heap set-up for a short-lived, allocation-heavy process.
#pragma once

namespace pase {

// Makes the C heap grow in large, transparent-huge-page-backed steps, starts
// fresh allocations on a 2 MiB boundary (so that they are huge-page backed
// from the first one) and keeps freed memory for reuse. A solve touches a few MiB of fresh memory; taken as
// 4 KiB page faults, that costs more than the solve itself on virtual machines
// where a fault costs ~10 us. Harmless (a no-op) where glibc or THP is absent.
void prepare_process_heap();

}  // namespace pase
