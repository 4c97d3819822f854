#pragma once
// Copy microbenchmarks: host <-> device over pinned memory, device <-> device
// with cudaMemcpyPeer, and a copy within one device (its memory bandwidth).
#include <cstddef>

namespace pase {

/// Bandwidth of a large copy and latency of a 4-byte one, each the median of repeats.
struct CopyTiming {
  double bandwidth = 0;  ///< bytes/s
  double latency = 0;    ///< seconds
};

enum class CopyKind { HostToDevice, DeviceToHost };

/// Pinned host memory to or from `device`.
[[nodiscard]] CopyTiming time_host_copy(int device, CopyKind kind, size_t bytes, int warmup, int repeats);

/// cudaMemcpyPeer from `src` to `dst` (peer access enabled where the pair allows it).
[[nodiscard]] CopyTiming time_peer_copy(int src, int dst, size_t bytes, int warmup, int repeats);

/// Device memory bandwidth of `device`: a device-to-device copy reads and writes `bytes` each.
[[nodiscard]] double time_memory_bandwidth(int device, size_t bytes, int warmup, int repeats);

}  // namespace pase
