#include "calibrate/measure_profile.h"

#include <algorithm>
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

// The data-centre parts' dense 16-bit tensor-core FLOP per SM and cycle, from
// their datasheets' peaks over SMs and boost clock: A100 312 TFLOP/s over 108
// SMs at 1.41 GHz (2048), H100 SXM 989 over 132 at 1.83 GHz (4096), B200 2250
// over 148 at 1.965 GHz (about 7700; 8192 per the architecture). TF32 runs at
// half that. Consumer parts (8.6, 8.9, 12.x) halve it again with FP32
// accumulation, and vary by model: not known here.
double tensor_flop_per_sm_clock(int major, int minor) {
  if (major == 8 && minor == 0) return 2048;
  if (major == 9 && minor == 0) return 4096;
  if (major == 10 && minor == 0) return 8192;
  return 0;
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

// The GEMM table of one dtype over sizes³, in the three layouts.
GemmTable measure_gemm_table(const CalibrateOptions& o, Dtype dtype,
                             const std::function<void(const std::string&)>& progress) {
  GemmTable table;
  for (int64_t s : o.sizes) table.n.push_back(static_cast<double>(s));
  table.k = table.n;
  for (int64_t s : o.m_sizes.empty() ? o.sizes : o.m_sizes) table.m.push_back(static_cast<double>(s));
  // The largest operand: A (m × k), B (k × n) or C (m × n).
  const size_t largest = static_cast<size_t>(std::max(table.m.back(), table.n.back()) * table.n.back());
  GemmTimer timer(largest, dtype);
  for (GemmLayout layout : {GemmLayout::NN, GemmLayout::NT, GemmLayout::TN}) {
    progress(std::string("gemm ") + dtype_name(dtype) + " " + layout_name(layout) + ": " +
             std::to_string(table.m.size() * table.n.size() * table.k.size()) + " shapes");
    std::vector<double>& flops = table.flops[static_cast<size_t>(layout)];
    for (double m : table.m)
      for (double n : table.n)
        for (double k : table.k) {
          GemmCall call{layout, m, n, k};
          flops.push_back(2.0 * m * n * k / timer.median_seconds(call, 1, o.warmup, o.repeats));
        }
  }
  return table;
}

double best_flops(const GemmTable& table) {
  double best = 0;
  for (const std::vector<double>& f : table.flops)
    for (double v : f) best = std::max(best, v);
  return best;
}

// Copies to and from the host, within the device and to a peer: the memory
// bandwidth, the host copies and the intra-node link. Returns how intra_node was found.
std::string measure_copies(const CalibrateOptions& o, int gpus, MachineProfile& p, MeasuredInfo& info,
                           const std::function<void(const std::string&)>& progress) {
  progress("copies: host <-> device " + std::to_string(o.device));
  CopyTiming h2d = time_host_copy(o.device, CopyKind::HostToDevice, o.copy_bytes, o.warmup, o.repeats);
  CopyTiming d2h = time_host_copy(o.device, CopyKind::DeviceToHost, o.copy_bytes, o.warmup, o.repeats);
  info.host_to_device = h2d.bandwidth;
  info.device_to_host = d2h.bandwidth;
  p.memory_bandwidth = time_memory_bandwidth(o.device, o.copy_bytes, o.warmup, o.repeats);
  progress("  host->device " + gbps(h2d.bandwidth) + ", device->host " + gbps(d2h.bandwidth) + ", device memory " +
           gbps(p.memory_bandwidth));
  if (gpus > 1) {
    int peer = o.device == 0 ? 1 : 0;
    progress("copies: device " + std::to_string(o.device) + " -> device " + std::to_string(peer));
    CopyTiming d2d = time_peer_copy(o.device, peer, o.copy_bytes, o.warmup, o.repeats);
    info.device_to_device = d2d.bandwidth;
    p.intra_node = {d2d.bandwidth, d2d.latency};
    progress("  " + gbps(d2d.bandwidth));
    return "intra_node: cudaMemcpyPeer between two GPUs of this host";
  }
  // One GPU: a peer copy between PCIe cards crosses the same bus, so the
  // slower host copy direction stands in for it.
  p.intra_node = {std::min(h2d.bandwidth, d2h.bandwidth), std::max(h2d.latency, d2h.latency)};
  return "intra_node: one GPU only, taken from the slower host<->device copy";
}

// The GEMM tables of the chosen dtypes, and the tensor-core dtypes' peaks:
// clock rate × SMs × the architecture's FLOP per SM and cycle. A peak still
// unknown (an architecture not known here, fp32's included) is the best GEMM
// measured in that dtype.
void measure_gemm_tables(const CalibrateOptions& o, const cudaDeviceProp& props, double sm_clocks, MachineProfile& p,
                         const std::function<void(const std::string&)>& progress) {
  std::vector<Dtype> dtypes = o.dtypes;
  if (dtypes.empty()) {
    dtypes = {Dtype::Fp32};
    if (props.major >= 8) dtypes.insert(dtypes.end(), {Dtype::Tf32, Dtype::Bf16});
  }
  for (Dtype dtype : dtypes) {
    GemmTable table = measure_gemm_table(o, dtype, progress);
    double& peak = dtype == Dtype::Fp32 ? p.peak_flops : p.peak_by_dtype[static_cast<size_t>(dtype)];
    if (dtype != Dtype::Fp32) peak = flop_per_sm_clock(props.major, props.minor, dtype) * sm_clocks;
    if (!(peak > 0)) {
      peak = best_flops(table);
      p.notes += std::string("; ") + dtype_name(dtype) + " peak: the best measured GEMM (architecture not known here)";
    }
    if (dtype == Dtype::Fp32)
      p.gemm = std::move(table);
    else
      p.gemm_by_dtype[static_cast<size_t>(dtype)] = std::move(table);
  }
}

}  // namespace

double flop_per_sm_clock(int major, int minor, Dtype dtype) {
  if (dtype == Dtype::Fp32) return 2.0 * fp32_lanes_per_sm(major, minor);
  const double tensor = tensor_flop_per_sm_clock(major, minor);
  return dtype == Dtype::Tf32 ? tensor / 2 : tensor;
}

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
  const double sm_clocks = props.multiProcessorCount * static_cast<double>(clock_khz) * 1e3;
  // 0 for an architecture whose FP32 lanes are not known here: then the best fp32 GEMM.
  p.peak_flops = o.peak_tflops > 0 ? o.peak_tflops * 1e12 : flop_per_sm_clock(props.major, props.minor, Dtype::Fp32) * sm_clocks;

  MeasuredInfo info;
  info.date = utc_now();
  info.gpu = props.name;
  info.cuda_driver = version_string(driver);
  info.cuda_runtime = version_string(runtime);
  info.cublas = cublas_version();
  info.gpu_count = gpus;
  info.warmup = o.warmup;
  info.repeats = o.repeats;

  const std::string intra_from = measure_copies(o, gpus, p, info, progress);
  p.inter_node = {o.inter_node_gbps * 1e9, o.inter_node_latency_us * 1e-6};
  p.notes = intra_from + "; inter_node: given on the command line, not measured; devices_per_node: " +
            (o.devices_per_node > 0 ? "given" : "GPUs visible on this host") + "; peak_tflops: " +
            (o.peak_tflops > 0 ? "given" : "clock rate x SMs x FP32 lanes x 2") +
            "; peak_tflops_by_dtype: clock rate x SMs x the datasheet's dense tensor-core FLOP per SM and cycle";
  measure_gemm_tables(o, props, sm_clocks, p, progress);
  if (!(p.peak_flops > 0))  // fp32 not measured, on an architecture whose lanes are not known here
    throw InputError("--peak-tflops: this GPU's FP32 lanes per SM are not known here and fp32 was not measured");
  p.peak_by_dtype[static_cast<size_t>(Dtype::Fp32)] = p.peak_flops;
  p.measured = std::move(info);
  return p;
}

}  // namespace pase
