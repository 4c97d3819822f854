#pragma once
// Times cuBLAS GEMMs of one dtype on one device with cudaEvents: warm-up
// calls, then the median of timed repeats. Buffers are allocated once, at the
// largest size.
#include <cstddef>
#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/dtype.h"

namespace pase {

class GemmTimer {
 public:
  /// Allocates A, B and C buffers of `max_elements` elements of `dtype` each on the current device.
  /// fp32: FP32 SIMT GEMMs (cuBLAS's default math); tf32: FP32 storage on TF32 tensor cores;
  /// bf16, fp16: 16-bit operands and result, FP32 accumulation (what PyTorch's autocast runs).
  GemmTimer(size_t max_elements, Dtype dtype);
  ~GemmTimer();
  GemmTimer(const GemmTimer&) = delete;
  GemmTimer& operator=(const GemmTimer&) = delete;

  /// Median seconds of `batch` instances of `call` (one strided-batched call when batch > 1).
  [[nodiscard]] double median_seconds(const GemmCall& call, int64_t batch, int warmup, int repeats);

  /// Elements one operand of `batch` instances of `call` needs at most.
  [[nodiscard]] static size_t elements_needed(const GemmCall& call, int64_t batch);

 private:
  void run(const GemmCall& call, int64_t batch);
  void fill_operands();

  cublasHandle_t handle_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  size_t max_elements_ = 0;
  Dtype dtype_;
};

}  // namespace pase
