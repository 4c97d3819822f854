#include "calibrate/gemm_timer.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <library_types.h>

#include "calibrate/cuda_check.h"

namespace pase {
namespace {

int dim(double extent) {
  double rounded = std::max(1.0, std::round(extent));
  if (rounded > INT_MAX) throw GpuError("GEMM extent " + std::to_string(extent) + " does not fit cuBLAS's int");
  return static_cast<int>(rounded);
}

// Element type of A, B and C, and the precision cuBLAS computes in.
cudaDataType_t storage_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::Bf16: return CUDA_R_16BF;
    case Dtype::Fp16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

cublasComputeType_t compute_type(Dtype dtype) {
  return dtype == Dtype::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

uint16_t float_bits_high(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

// IEEE half of a normal value in [2^-14, 65504], rounded toward zero: enough
// for the operand values below, which are all normal halves.
uint16_t half_bits(float value) {
  int exponent = 0;
  const float mantissa = std::frexp(value, &exponent);  // value = mantissa · 2^exponent, mantissa in [0.5, 1)
  const auto fraction = static_cast<uint16_t>((mantissa * 2 - 1) * 1024);
  return static_cast<uint16_t>(((exponent - 1 + 15) << 10) | fraction);
}

// The operand values: non-zero, since some GPUs draw less power, and run
// faster, on zeros; all normal in every dtype.
std::vector<unsigned char> operand_pattern(Dtype dtype, size_t elements) {
  const size_t bytes = dtype_bytes(dtype);
  std::vector<unsigned char> pattern(elements * bytes);
  for (size_t i = 0; i < elements; ++i) {
    const float value = 1.0f / static_cast<float>(i % 13 + 1);
    if (bytes == 4) {
      std::memcpy(&pattern[i * 4], &value, 4);
      continue;
    }
    const uint16_t bits = dtype == Dtype::Bf16 ? float_bits_high(value) : half_bits(value);
    std::memcpy(&pattern[i * 2], &bits, 2);
  }
  return pattern;
}

}  // namespace

GemmTimer::GemmTimer(size_t max_elements, Dtype dtype) : max_elements_(max_elements), dtype_(dtype) {
  PASE_CUBLAS(cublasCreate(&handle_));
  PASE_CUDA(cudaEventCreate(&start_));
  PASE_CUDA(cudaEventCreate(&stop_));
  const size_t bytes = max_elements * dtype_bytes(dtype);
  PASE_CUDA(cudaMalloc(&a_, bytes));
  PASE_CUDA(cudaMalloc(&b_, bytes));
  PASE_CUDA(cudaMalloc(&c_, bytes));
  fill_operands();
}

void GemmTimer::fill_operands() {
  const size_t bytes = dtype_bytes(dtype_);
  const std::vector<unsigned char> pattern = operand_pattern(dtype_, std::min<size_t>(max_elements_, size_t{1} << 24));
  const size_t chunk = pattern.size() / bytes;
  for (void* buffer : {a_, b_, c_})
    for (size_t at = 0; at < max_elements_; at += chunk)
      PASE_CUDA(cudaMemcpy(static_cast<unsigned char*>(buffer) + at * bytes, pattern.data(),
                           std::min(chunk, max_elements_ - at) * bytes, cudaMemcpyHostToDevice));
}

GemmTimer::~GemmTimer() {
  // Destructors must not throw; a failure here cannot change any result.
  cudaFree(a_), cudaFree(b_), cudaFree(c_);
  cudaEventDestroy(start_), cudaEventDestroy(stop_);
  if (handle_) cublasDestroy(handle_);
}

size_t GemmTimer::elements_needed(const GemmCall& call, int64_t batch) {
  size_t m = static_cast<size_t>(dim(call.m)), n = static_cast<size_t>(dim(call.n)), k = static_cast<size_t>(dim(call.k));
  return static_cast<size_t>(std::max<int64_t>(batch, 1)) * std::max({m * k, k * n, m * n});
}

void GemmTimer::run(const GemmCall& call, int64_t batch) {
  // cuBLAS is column-major: row-major C[M,N] = op(A)·op(B) is column-major
  // Cᵀ[N,M] = op(B)ᵀ·op(A)ᵀ, so B goes first and M, N swap.
  const int m = dim(call.m), n = dim(call.n), k = dim(call.k);
  const float alpha = 1.0f, beta = 0.0f;
  cublasOperation_t op_b = CUBLAS_OP_N, op_a = CUBLAS_OP_N;
  int ldb = n, lda = k;  // NN: A is M×K, B is K×N, both row-major
  if (call.layout == GemmLayout::NT) op_b = CUBLAS_OP_T, ldb = k;  // B is stored N×K
  if (call.layout == GemmLayout::TN) op_a = CUBLAS_OP_T, lda = m;  // A is stored K×M
  const cudaDataType_t type = storage_type(dtype_);
  const cublasComputeType_t compute = compute_type(dtype_);
  if (batch <= 1) {
    PASE_CUBLAS(cublasGemmEx(handle_, op_b, op_a, n, m, k, &alpha, b_, type, ldb, a_, type, lda, &beta, c_, type, n,
                             compute, CUBLAS_GEMM_DEFAULT));
    return;
  }
  long long stride_a = static_cast<long long>(m) * k, stride_b = static_cast<long long>(k) * n,
            stride_c = static_cast<long long>(m) * n;
  PASE_CUBLAS(cublasGemmStridedBatchedEx(handle_, op_b, op_a, n, m, k, &alpha, b_, type, ldb, stride_b, a_, type, lda,
                                         stride_a, &beta, c_, type, n, stride_c, static_cast<int>(batch), compute,
                                         CUBLAS_GEMM_DEFAULT));
}

double GemmTimer::median_seconds(const GemmCall& call, int64_t batch, int warmup, int repeats) {
  if (elements_needed(call, batch) > max_elements_)
    throw GpuError("GEMM " + std::to_string(dim(call.m)) + "x" + std::to_string(dim(call.n)) + "x" +
                   std::to_string(dim(call.k)) + " (batch " + std::to_string(batch) + ") exceeds the timer's buffers");
  for (int i = 0; i < warmup; ++i) run(call, batch);
  PASE_CUDA(cudaDeviceSynchronize());
  std::vector<float> ms(static_cast<size_t>(std::max(repeats, 1)));
  for (float& t : ms) {
    PASE_CUDA(cudaEventRecord(start_));
    run(call, batch);
    PASE_CUDA(cudaEventRecord(stop_));
    PASE_CUDA(cudaEventSynchronize(stop_));
    PASE_CUDA(cudaEventElapsedTime(&t, start_, stop_));
  }
  std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
  return static_cast<double>(ms[ms.size() / 2]) * 1e-3;
}

}  // namespace pase
