#pragma once
// CUDA runtime and cuBLAS failures as exceptions that name the status (not a
// bare number) and the call site.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>

#include "base/error.h"

namespace pase {

/// A CUDA or cuBLAS call failed; what() is "file:line: call: STATUS_NAME (reason)".
/// A refusal like any other (exit 3): there is no usable GPU to measure.
class GpuError : public ResourceError {
 public:
  using ResourceError::ResourceError;
};

/// "CUBLAS_STATUS_NOT_INITIALIZED", ...
[[nodiscard]] const char* cublas_status_name(cublasStatus_t status);

/// Throws GpuError unless `status` is cudaSuccess.
void check_cuda(cudaError_t status, const char* call, const char* file, int line);

/// Throws GpuError unless `status` is CUBLAS_STATUS_SUCCESS.
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace pase

// Keep the call's text and site; a function cannot see them in C++17.
#define PASE_CUDA(call) ::pase::check_cuda((call), #call, __FILE__, __LINE__)
#define PASE_CUBLAS(call) ::pase::check_cublas((call), #call, __FILE__, __LINE__)
