#pragma once
// The training dtype: which peak rate a GEMM runs at (calibrated model) and
// how many bytes an element takes (calibrated model and memory model).
#include <cstdint>
#include <string>

namespace pase {

/// fp32: FP32 everywhere. tf32: FP32 storage, GEMMs on TF32 tensor cores.
/// bf16, fp16: mixed precision (16-bit activations, weights and gradients,
/// an FP32 master copy of the weights), GEMMs on 16-bit tensor cores.
enum class Dtype { Fp32, Tf32, Bf16, Fp16 };

inline constexpr int kDtypeCount = 4;

/// "fp32", "tf32", "bf16", "fp16": as written on the command line, in strategy and machine files.
[[nodiscard]] const char* dtype_name(Dtype dtype);
/// Parses a dtype name; OptionError (field "dtype") on anything else.
[[nodiscard]] Dtype parse_dtype(const std::string& text);
/// Bytes of one activation, weight or gradient element: 4 for fp32 and tf32, 2 for bf16 and fp16.
[[nodiscard]] uint64_t dtype_bytes(Dtype dtype);

}  // namespace pase
