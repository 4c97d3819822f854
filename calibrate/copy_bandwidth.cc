#include "calibrate/copy_bandwidth.h"

#include <algorithm>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "calibrate/cuda_check.h"

namespace pase {
namespace {

// Median seconds of `copy` on the current device, timed with events on the default stream.
double median_seconds(const std::function<void()>& copy, int warmup, int repeats) {
  cudaEvent_t start, stop;
  PASE_CUDA(cudaEventCreate(&start));
  PASE_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) copy();
  PASE_CUDA(cudaDeviceSynchronize());
  std::vector<float> ms(static_cast<size_t>(std::max(repeats, 1)));
  for (float& t : ms) {
    PASE_CUDA(cudaEventRecord(start));
    copy();
    PASE_CUDA(cudaEventRecord(stop));
    PASE_CUDA(cudaEventSynchronize(stop));
    PASE_CUDA(cudaEventElapsedTime(&t, start, stop));
  }
  cudaEventDestroy(start), cudaEventDestroy(stop);
  std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
  return static_cast<double>(ms[ms.size() / 2]) * 1e-3;
}

constexpr size_t kSmall = 4;  // bytes: a copy this small costs only latency

}  // namespace

CopyTiming time_host_copy(int device, CopyKind kind, size_t bytes, int warmup, int repeats) {
  PASE_CUDA(cudaSetDevice(device));
  void *host = nullptr, *dev = nullptr;
  PASE_CUDA(cudaMallocHost(&host, bytes));
  PASE_CUDA(cudaMalloc(&dev, bytes));
  auto copy = [&](size_t size) {
    return [&, size] {
      if (kind == CopyKind::HostToDevice)
        PASE_CUDA(cudaMemcpyAsync(dev, host, size, cudaMemcpyHostToDevice));
      else
        PASE_CUDA(cudaMemcpyAsync(host, dev, size, cudaMemcpyDeviceToHost));
    };
  };
  CopyTiming t;
  t.bandwidth = static_cast<double>(bytes) / median_seconds(copy(bytes), warmup, repeats);
  t.latency = median_seconds(copy(kSmall), warmup, repeats);
  cudaFree(dev), cudaFreeHost(host);
  return t;
}

CopyTiming time_peer_copy(int src, int dst, size_t bytes, int warmup, int repeats) {
  int can_access = 0;
  PASE_CUDA(cudaDeviceCanAccessPeer(&can_access, src, dst));
  void *from = nullptr, *to = nullptr;
  PASE_CUDA(cudaSetDevice(dst));
  PASE_CUDA(cudaMalloc(&to, bytes));
  PASE_CUDA(cudaSetDevice(src));
  PASE_CUDA(cudaMalloc(&from, bytes));
  if (can_access) {
    cudaError_t status = cudaDeviceEnablePeerAccess(dst, 0);
    // Enabled earlier in this process is fine; clear the sticky error it leaves.
    if (status == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
    else PASE_CUDA(status);
  }
  auto copy = [&](size_t size) { return [&, size] { PASE_CUDA(cudaMemcpyPeerAsync(to, dst, from, src, size)); }; };
  CopyTiming t;
  t.bandwidth = static_cast<double>(bytes) / median_seconds(copy(bytes), warmup, repeats);
  t.latency = median_seconds(copy(kSmall), warmup, repeats);
  cudaFree(from);
  PASE_CUDA(cudaSetDevice(dst));
  cudaFree(to);
  PASE_CUDA(cudaSetDevice(src));
  return t;
}

double time_memory_bandwidth(int device, size_t bytes, int warmup, int repeats) {
  PASE_CUDA(cudaSetDevice(device));
  void *from = nullptr, *to = nullptr;
  PASE_CUDA(cudaMalloc(&from, bytes));
  PASE_CUDA(cudaMalloc(&to, bytes));
  double seconds =
      median_seconds([&] { PASE_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice)); }, warmup, repeats);
  cudaFree(from), cudaFree(to);
  return 2.0 * static_cast<double>(bytes) / seconds;
}

}  // namespace pase
