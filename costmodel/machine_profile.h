#pragma once
// The `pase-machine` v1 profile (docs/calibration.md): what one device computes,
// how fast devices talk inside and between nodes, and optionally the GEMM
// throughput pase-calibrate measured. In memory everything is in SI units
// (FLOP/s, bytes, bytes/s, seconds); the file uses TFLOP/s, GB, GB/s and µs.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/dtype.h"

namespace pase {

/// The three GEMMs of a training step, row-major, C[M,N] = op(A) · op(B).
enum class GemmLayout {
  NN,  ///< forward: C = A · B
  NT,  ///< input gradient: C = A · Bᵀ
  TN,  ///< weight gradient: C = Aᵀ · B
};

/// "nn", "nt", "tn": the layout's name in the file.
[[nodiscard]] const char* layout_name(GemmLayout layout);

/// Achieved FLOP/s (FLOP = 2·M·N·K) of each layout over one M × N × K grid.
struct GemmTable {
  std::vector<double> m, n, k;               ///< grid points, strictly increasing
  std::array<std::vector<double>, 3> flops;  ///< by GemmLayout; entry (i·|n| + j)·|k| + l is (m_i, n_j, k_l)
};

/// One kind of link: a transfer of b bytes takes latency + b / bandwidth.
struct LinkSpec {
  double bandwidth = 0;  ///< bytes/s
  double latency = 0;    ///< seconds
};

/// How and where a measured profile was made.
struct MeasuredInfo {
  std::string date;          ///< UTC, ISO 8601
  std::string gpu;           ///< device name the runtime reports
  std::string cuda_driver;   ///< highest CUDA version the driver supports, "13.0"
  std::string cuda_runtime;  ///< "13.0"
  std::string cublas;        ///< "13.0.0"
  int64_t gpu_count = 0;
  int64_t warmup = 0;
  int64_t repeats = 0;
  double host_to_device = 0;              ///< bytes/s, pinned memory
  double device_to_host = 0;              ///< bytes/s, pinned memory
  std::optional<double> device_to_device; ///< bytes/s, cudaMemcpyPeer; only with several GPUs
};

struct MachineProfile {
  std::string name;
  std::string source;  ///< "public specifications" or "measured"
  std::string notes;   ///< free text (assumptions, where numbers come from)
  std::string device_name;
  double peak_flops = 0;        ///< FP32 FLOP/s per device
  /// Dense FLOP/s per device by Dtype (tensor cores for tf32, bf16, fp16); 0: the file gives none.
  /// The fp32 entry always equals peak_flops.
  std::array<double, kDtypeCount> peak_by_dtype{};
  double memory_bytes = 0;      ///< per device
  double memory_bandwidth = 0;  ///< bytes/s per device; prices non-GEMM work
  int64_t devices_per_node = 0;
  LinkSpec intra_node, inter_node;
  std::optional<GemmTable> gemm;  ///< the fp32 (SGEMM) table; absent: fp32 GEMMs follow the default curve
  /// The tf32, bf16 and fp16 tables (index Dtype; the fp32 entry stays empty: its table is `gemm`).
  std::array<std::optional<GemmTable>, kDtypeCount> gemm_by_dtype;
  std::optional<MeasuredInfo> measured;  ///< present exactly when source is "measured"
};

/// Parses and checks profile text; errors are one-line InputErrors naming `source` and the field.
[[nodiscard]] MachineProfile parse_machine_profile(const std::string& text, const std::string& source);

/// Peak FLOP/s of a GEMM in `dtype`; InputError naming the profile and the field when it has no such rate.
[[nodiscard]] double peak_flops_for(const MachineProfile& profile, Dtype dtype);

/// Reads and parses a profile file.
[[nodiscard]] MachineProfile read_machine_profile(const std::string& path);

/// Serialises a profile in the file's units (parse_machine_profile reads it back).
[[nodiscard]] std::string write_machine_profile(const MachineProfile& profile);

/// The measured GEMM table of `dtype` (`gemm` for fp32), or nullptr when the profile has none.
[[nodiscard]] const GemmTable* gemm_table(const MachineProfile& profile, Dtype dtype);

/// Achieved FLOP/s of a GEMM in one layout: trilinear in log2(M), log2(N), log2(K) over the table, clamped at its edges.
[[nodiscard]] double interpolate_flops(const GemmTable& table, GemmLayout layout, double m, double n, double k);

/// Achieved FLOP/s of an fp32 GEMM: interpolated in the `gemm` table; the peak when the profile has none.
[[nodiscard]] double achieved_flops(const MachineProfile& profile, GemmLayout layout, double m, double n, double k);

}  // namespace pase
