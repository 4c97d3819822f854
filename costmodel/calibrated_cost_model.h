#pragma once
// The `calibrated` cost model (docs/calibration.md): the same layer and edge
// structure as `pase`, priced in seconds from a machine profile. GEMMs run at
// the profile's interpolated throughput, other work is memory-bound, and each
// collective pays the latency and bandwidth of the link it crosses.
#include <array>
#include <cstdint>
#include <string>

#include "costmodel/cost_model.h"
#include "costmodel/machine_profile.h"
#include "graphs/layer_work.h"

namespace pase {

/// One GEMM a device runs: row-major C[M,N] = op(A[.,K]) · op(B[K,.]).
struct GemmCall {
  GemmLayout layout = GemmLayout::NN;
  double m = 1, n = 1, k = 1;
};

/// The step's three GEMMs: forward NN (m,n,k), input gradient NT (m,k,n), weight gradient TN (k,n,m).
[[nodiscard]] std::array<GemmCall, 3> training_gemms(const GemmShape& shape);

/// Bytes per tensor element: the model prices FP32 training.
inline constexpr double kBytesPerElement = 4.0;
/// Bytes each counted pointwise operation moves through device memory (one FP32 read, one write).
inline constexpr double kBytesPerPointwiseOp = 8.0;

class CalibratedCostModel final : public CostModel {
 public:
  CalibratedCostModel(MachineProfile profile, int64_t devices);
  [[nodiscard]] std::string name() const override { return "calibrated"; }
  [[nodiscard]] std::string unit() const override { return "seconds"; }
  [[nodiscard]] int64_t devices() const override { return devices_; }
  [[nodiscard]] double layer(const VertexModel& model, const int32_t* config) const override;
  [[nodiscard]] CostTerms layer_terms(const VertexModel& model, const int32_t* config) const override;
  [[nodiscard]] double redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const override;
  /// Forward and backward each move the words once, inside the group's link.
  [[nodiscard]] double fetch_cost(double words, double group) const override;
  /// Peak TFLOP/s and intra-node GB/s, for the strategy file's machine record.
  [[nodiscard]] Machine machine() const override;

  [[nodiscard]] const MachineProfile& profile() const { return profile_; }
  /// Seconds of one GEMM: 2·M·N·K / achieved_flops.
  [[nodiscard]] double gemm_seconds(const GemmCall& call) const;
  /// Seconds of `ops` pointwise operations, memory-bound.
  [[nodiscard]] double pointwise_seconds(double ops) const;
  /// The link a group of `group` devices uses: intra-node when group <= devices_per_node.
  [[nodiscard]] const LinkSpec& link(double group) const;
  /// Ring all-reduce of `elements` per device over `group` devices: 2(q-1)·(latency + (w/q)·bytes/bandwidth).
  [[nodiscard]] double all_reduce_seconds(double elements, double group) const;
  /// One transfer of `elements` inside a group of `group` devices; 0 when nothing moves.
  [[nodiscard]] double transfer_seconds(double elements, double group) const;

 private:
  /// A layer's work in seconds: the same items as the `pase` model's work_cost.
  [[nodiscard]] double work_seconds(const LayerWork& work) const;
  [[nodiscard]] double gemm_seconds(const GemmShape& gemm) const;

  MachineProfile profile_;
  int64_t devices_;
};

}  // namespace pase
