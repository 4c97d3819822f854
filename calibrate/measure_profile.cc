#include "calibrate/measure_profile.h"

#include <ctime>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include "calibrate/copy_bandwidth.h"
#include "calibrate/cuda_check.h"
#include "calibrate/gemm_timer.h"

namespace pase {
namespace {

// FP32 lanes per SM by compute capability (CUDA programming guide, arithmetic
// instructions table). Unknown architectures return 0: pass --peak-tflops.
int fp32_lanes_per_sm(int major, int minor) {
  switch (major) {
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return minor == 0 ? 64 : 128;
    case 9: case 10: case 12: return 128;
    default: return 0;
  }
}

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  PASE_CUBLAS(cublasGetProperty(MAJOR_VERSION, &major));
  PASE_CUBLAS(cublasGetProperty(MINOR_VERSION, &minor));
  PASE_CUBLAS(cublasGetProperty(PATCH_LEVEL, &patch));
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string gbps(double bytes_per_second) {
  return std::to_string(bytes_per_second / 1e9) + " GB/s";
}

}  // namespace

int require_gpus() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    throw GpuError(std::string("no CUDA GPU found (cudaGetDeviceCount: ") + cudaGetErrorName(status) + ": " +
                   cudaGetErrorString(status) + ")");
  if (count == 0) throw GpuError("no CUDA GPU found (cudaGetDeviceCount returned 0 devices)");
  return count;
}

MachineProfile measure_profile(const CalibrateOptions& o, const std::function<void(const std::string&)>& progress) {
  const int gpus = require_gpus();
  if (o.device < 0 || o.device >= gpus)
    throw GpuError("--device " + std::to_string(o.device) + ": this host has " + std::to_string(gpus) + " GPU(s)");
  PASE_CUDA(cudaSetDevice(o.device));
  cudaDeviceProp props{};
  PASE_CUDA(cudaGetDeviceProperties(&props, o.device));
  int clock_khz = 0, driver = 0, runtime = 0;
  PASE_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, o.device));
  PASE_CUDA(cudaDriverGetVersion(&driver));
  PASE_CUDA(cudaRuntimeGetVersion(&runtime));

  MachineProfile p;
  p.device_name = props.name;
  p.name = o.name.empty() ? p.device_name + " node" : o.name;
  p.source = "measured";
  p.memory_bytes = static_cast<double>(props.totalGlobalMem);
  p.devices_per_node = o.devices_per_node > 0 ? o.devices_per_node : gpus;
  int lanes = fp32_lanes_per_sm(props.major, props.minor);
  p.peak_flops = o.peak_tflops > 0 ? o.peak_tflops * 1e12
                                   : 2.0 * lanes * props.multiProcessorCount * static_cast<double>(clock_khz) * 1e3;

  MeasuredInfo info;
  info.date = utc_now();
  info.gpu = props.name;
  info.cuda_driver = version_string(driver);
  info.cuda_runtime = version_string(runtime);
  info.cublas = cublas_version();
  info.gpu_count = gpus;
  info.warmup = o.warmup;
  info.repeats = o.repeats;

  progress("copies: host <-> device " + std::to_string(o.device));
  CopyTiming h2d = time_host_copy(o.device, CopyKind::HostToDevice, o.copy_bytes, o.warmup, o.repeats);
  CopyTiming d2h = time_host_copy(o.device, CopyKind::DeviceToHost, o.copy_bytes, o.warmup, o.repeats);
  info.host_to_device = h2d.bandwidth;
  info.device_to_host = d2h.bandwidth;
  p.memory_bandwidth = time_memory_bandwidth(o.device, o.copy_bytes, o.warmup, o.repeats);
  progress("  host->device " + gbps(h2d.bandwidth) + ", device->host " + gbps(d2h.bandwidth) + ", device memory " +
           gbps(p.memory_bandwidth));
  std::string intra_from;
  if (gpus > 1) {
    int peer = o.device == 0 ? 1 : 0;
    progress("copies: device " + std::to_string(o.device) + " -> device " + std::to_string(peer));
    CopyTiming d2d = time_peer_copy(o.device, peer, o.copy_bytes, o.warmup, o.repeats);
    info.device_to_device = d2d.bandwidth;
    p.intra_node = {d2d.bandwidth, d2d.latency};
    intra_from = "intra_node: cudaMemcpyPeer between two GPUs of this host";
    progress("  " + gbps(d2d.bandwidth));
  } else {
    // One GPU: a peer copy between PCIe cards crosses the same bus, so the
    // slower host copy direction stands in for it.
    p.intra_node = {std::min(h2d.bandwidth, d2h.bandwidth), std::max(h2d.latency, d2h.latency)};
    intra_from = "intra_node: one GPU only, taken from the slower host<->device copy";
  }
  p.inter_node = {o.inter_node_gbps * 1e9, o.inter_node_latency_us * 1e-6};
  p.notes = intra_from + "; inter_node: given on the command line, not measured; devices_per_node: " +
            (o.devices_per_node > 0 ? "given" : "GPUs visible on this host") + "; peak_tflops: " +
            (o.peak_tflops > 0 ? "given" : "clock rate x FP32 lanes");

  GemmTable table;
  for (int64_t s : o.sizes) table.m.push_back(static_cast<double>(s));
  table.n = table.k = table.m;
  size_t largest = 0;
  for (double a : table.m)
    for (double b : table.m) largest = std::max(largest, static_cast<size_t>(a * b));
  GemmTimer timer(largest);
  for (GemmLayout layout : {GemmLayout::NN, GemmLayout::NT, GemmLayout::TN}) {
    progress(std::string("sgemm ") + layout_name(layout) + ": " + std::to_string(o.sizes.size() * o.sizes.size() * o.sizes.size()) +
             " shapes");
    std::vector<double>& flops = table.flops[static_cast<size_t>(layout)];
    for (double m : table.m)
      for (double n : table.n)
        for (double k : table.k) {
          GemmCall call{layout, m, n, k};
          flops.push_back(2.0 * m * n * k / timer.median_seconds(call, 1, o.warmup, o.repeats));
        }
  }
  p.gemm = std::move(table);
  if (lanes == 0 && o.peak_tflops <= 0) {
    // No lane count for this architecture: the best measured GEMM is the nearest thing to a peak.
    for (const std::vector<double>& f : p.gemm->flops)
      for (double v : f) p.peak_flops = std::max(p.peak_flops, v);
    p.notes += " (unknown architecture: peak is the best measured SGEMM)";
  }
  p.measured = std::move(info);
  return p;
}

}  // namespace pase
