#pragma once
// The `calibrated` cost model (docs/calibration.md): the same layers, edges
// and configurations as `pase`, priced in seconds the way frameworks run
// them on the machine of a profile. GEMMs run at a measured throughput or a
// documented efficiency curve below the dtype's peak; other work is bounded
// by device memory; collectives pay the latency and bandwidth of the link
// they cross; gradient all-reduces may hide behind the backward pass.
#include <array>
#include <cstdint>
#include <string>

#include "costmodel/cost_model.h"
#include "costmodel/dtype.h"
#include "costmodel/machine_profile.h"
#include "costmodel/memory_model.h"
#include "costmodel/training_setup.h"
#include "graphs/layer_work.h"

namespace pase {

/// One GEMM a device runs: row-major C[M,N] = op(A[.,K]) · op(B[K,.]).
struct GemmCall {
  GemmLayout layout = GemmLayout::NN;
  double m = 1, n = 1, k = 1;
};

/// The step's three GEMMs: forward NN (m,n,k), input gradient NT (m,k,n), weight gradient TN (k,n,m).
[[nodiscard]] std::array<GemmCall, 3> training_gemms(const GemmShape& shape);

/// How the framework being modelled runs the step (docs/calibration.md#the-calibrated-cost-model).
struct CalibratedOptions {
  /// The dtype (GEMM peak rate, bytes per element), whose update pass over
  /// each weight the step pays (none: the layers alone; the command line
  /// passes --optimizer, default adam), micro-batches and ZeRO stage.
  TrainingSetup training{Dtype::Fp32, Optimizer::None};
  bool overlap_gradients = true; ///< weight-gradient all-reduces run during the backward pass
  bool sync_batchnorm = false;   ///< batchnorm statistics all-reduced over the batch split
  /// Activations are channels-last (NHWC), the layout tensor-core convolutions
  /// run in; false (NCHW): each such convolution transposes its operands.
  bool channels_last = true;
};

// The model's documented defaults (docs/calibration.md#defaults): general
// figures for today's GPUs and frameworks, never tuned per network.
/// Fraction of the dtype's peak a large GEMM reaches without a measured table.
inline constexpr double kGemmPeakEfficiency = 0.8;
/// A GEMM dimension x fills x / (x + kGemmHalfSize) of the device (tile and wave quantization).
inline constexpr double kGemmHalfSize = 32.0;
/// Fraction of the memory bandwidth a streaming kernel reaches.
inline constexpr double kMemoryEfficiency = 0.8;
/// Fixed time of each kernel (launch and tail): the floor of any layer's work.
inline constexpr double kKernelSeconds = 5e-6;
/// Bytes of the buckets weight gradients are coalesced into before their all-reduce (PyTorch DDP's 25 MiB).
inline constexpr double kGradientBucketBytes = 25.0 * 1024 * 1024;

/// Efficiency of a GEMM of shape (m, n, k) on the default curve: kGemmPeakEfficiency · Π x / (x + kGemmHalfSize).
[[nodiscard]] double default_gemm_efficiency(double m, double n, double k);

class CalibratedCostModel final : public CostModel {
 public:
  CalibratedCostModel(MachineProfile profile, int64_t devices, CalibratedOptions options = {});
  [[nodiscard]] std::string name() const override { return "calibrated"; }
  [[nodiscard]] std::string unit() const override { return "seconds"; }
  [[nodiscard]] int64_t devices() const override { return devices_; }
  [[nodiscard]] double layer(const VertexModel& model, const int32_t* config) const override;
  [[nodiscard]] CostTerms layer_terms(const VertexModel& model, const int32_t* config) const override;
  [[nodiscard]] double redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const override;
  /// Forward and backward each move the words once, inside the group's link.
  [[nodiscard]] double fetch_cost(double words, double group) const override;
  /// The dtype's peak TFLOP/s and intra-node GB/s, for the strategy file's machine record.
  [[nodiscard]] Machine machine() const override;
  [[nodiscard]] int64_t devices_per_node() const override { return profile_.devices_per_node; }
  [[nodiscard]] std::optional<uint64_t> memory_per_device() const override {
    return static_cast<uint64_t>(profile_.memory_bytes);
  }

  [[nodiscard]] const MachineProfile& profile() const { return profile_; }
  [[nodiscard]] const CalibratedOptions& options() const { return options_; }
  /// Bytes of one element in the chosen dtype.
  [[nodiscard]] double element_bytes() const { return bytes_; }
  /// Seconds of `batch` GEMMs of one shape in one (strided-batched) kernel: the
  /// profile's table measured in the dtype, at the rate of one GEMM of batch·M rows, or
  /// kKernelSeconds + max(compute on the default curve, operand traffic), the
  /// instances filling the device like rows: η(batch·M, N, K).
  [[nodiscard]] double gemm_seconds(const GemmCall& call, double batch = 1) const;
  /// Seconds to stream `accesses` element reads or writes through device memory.
  [[nodiscard]] double memory_seconds(double accesses) const;
  /// The same for an op autocast runs in FP32 (norm, rmsnorm, softmax, softmax_xent):
  /// under bf16/fp16 its accesses are 4 bytes, and its `elements` are cast up
  /// before and down after it, forward and backward (4 kernels of 6 bytes each).
  [[nodiscard]] double fp32_op_seconds(double accesses, double elements) const;
  /// Seconds of the optimizer's update of `elements` weights: bytes of every
  /// state but the 16-bit weight read, of every state but the gradient written,
  /// and under 16-bit training the gradient's unscaling pass.
  [[nodiscard]] double update_seconds(double elements) const;
  /// Seconds a tensor-core convolution spends moving NCHW operands to NHWC and its
  /// result back: x, w and y elements per device (each kernel's two inputs and output).
  [[nodiscard]] double layout_transpose_seconds(double x, double w, double y) const;
  /// The link a group of `group` devices uses, `per_node` of them in each node
  /// (0: not known, and then a group of consecutive devices: all of it in one
  /// node when group <= devices_per_node, else whole nodes): intra-node when
  /// the whole group shares a node.
  [[nodiscard]] const LinkSpec& link(double group, double per_node = 0) const;
  /// Ring all-reduce of `elements` per device over `group` devices: 2(q-1)·(latency + (w/q)·bytes/bandwidth);
  /// a group spanning nodes with r members in each runs one ring per member,
  /// each crossing the network once, at min(intra, r · inter) bandwidth (r =
  /// devices_per_node when `per_node` is 0 and the group spans nodes).
  [[nodiscard]] double all_reduce_seconds(double elements, double group, double per_node = 0) const;
  /// One transfer of `elements` inside a group of `group` devices; 0 when nothing moves.
  [[nodiscard]] double transfer_seconds(double elements, double group, double per_node = 0) const;
  /// A weight gradient's all-reduce inside a bucket: the ring's bandwidth time, and
  /// the bucket's per-step latency in proportion to the gradient's share of it.
  [[nodiscard]] double gradient_all_reduce_seconds(double elements, double group, double per_node = 0) const;
  /// Ring reduce-scatter or all-gather of `elements` per device (each holding or
  /// receiving elements/q) over `group` devices: half an all-reduce's ring,
  /// (q-1)·(latency + (w/q)·bytes/bandwidth). `latency_share` as for gradients.
  [[nodiscard]] double half_ring_seconds(double elements, double group, double latency_share = 1.0,
                                         double per_node = 0) const;
  /// layer() with each split divided between the inside of a node and across
  /// nodes: `per_node[d]` of config[d]'s pieces in each node, so each
  /// collective pays the links its group crosses.
  [[nodiscard]] double layer_on_nodes(const VertexModel& model, const int32_t* config,
                                      const int32_t* per_node) const override;
  [[nodiscard]] CostTerms layer_terms_on_nodes(const VertexModel& model, const int32_t* config,
                                               const int32_t* per_node) const override;
  /// Words moved between nodes (`across_nodes`) or inside them.
  [[nodiscard]] double fetch_cost_on_nodes(double words, double group, bool across_nodes) const override;
  /// The latency share of a weight gradient of `elements` in a 25 MiB bucket.
  [[nodiscard]] double bucket_share(double elements) const;
  /// What a gradient all-reduce adds to the step when `backward` seconds of this layer's backward pass can hide it.
  [[nodiscard]] double exposed_gradient_seconds(double all_reduce, double backward) const;

 private:
  /// Ring all-reduce paying `latency_share` of the link latency per step.
  [[nodiscard]] double ring_seconds(double elements, double group, double latency_share, double per_node) const;

  MachineProfile profile_;
  int64_t devices_;
  CalibratedOptions options_;
  double peak_ = 0;   ///< FLOP/s of the dtype
  double bytes_ = 4;  ///< bytes per element of the dtype
};

}  // namespace pase
