#include "calibrate/gemm_timer.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "calibrate/cuda_check.h"

namespace pase {
namespace {

int dim(double extent) {
  double rounded = std::max(1.0, std::round(extent));
  if (rounded > INT_MAX) throw GpuError("GEMM extent " + std::to_string(extent) + " does not fit cuBLAS's int");
  return static_cast<int>(rounded);
}

}  // namespace

GemmTimer::GemmTimer(size_t max_elements) : max_elements_(max_elements) {
  PASE_CUBLAS(cublasCreate(&handle_));
  PASE_CUDA(cudaEventCreate(&start_));
  PASE_CUDA(cudaEventCreate(&stop_));
  PASE_CUDA(cudaMalloc(reinterpret_cast<void**>(&a_), max_elements * sizeof(float)));
  PASE_CUDA(cudaMalloc(reinterpret_cast<void**>(&b_), max_elements * sizeof(float)));
  PASE_CUDA(cudaMalloc(reinterpret_cast<void**>(&c_), max_elements * sizeof(float)));
  // Non-zero operands: some GPUs draw less power, and run faster, on zeros.
  std::vector<float> host(std::min<size_t>(max_elements, size_t{1} << 24));
  for (size_t i = 0; i < host.size(); ++i) host[i] = 1.0f / static_cast<float>(i % 13 + 1);
  for (float* buffer : {a_, b_, c_})
    for (size_t at = 0; at < max_elements; at += host.size())
      PASE_CUDA(cudaMemcpy(buffer + at, host.data(), std::min(host.size(), max_elements - at) * sizeof(float),
                           cudaMemcpyHostToDevice));
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
  if (batch <= 1) {
    PASE_CUBLAS(cublasSgemm(handle_, op_b, op_a, n, m, k, &alpha, b_, ldb, a_, lda, &beta, c_, n));
    return;
  }
  long long stride_a = static_cast<long long>(m) * k, stride_b = static_cast<long long>(k) * n,
            stride_c = static_cast<long long>(m) * n;
  PASE_CUBLAS(cublasSgemmStridedBatched(handle_, op_b, op_a, n, m, k, &alpha, b_, ldb, stride_b, a_, lda, stride_a, &beta,
                                        c_, n, stride_c, static_cast<int>(batch)));
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
