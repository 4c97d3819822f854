#include "costmodel/dtype.h"

#include "base/error.h"

namespace pase {

const char* dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::Tf32: return "tf32";
    case Dtype::Bf16: return "bf16";
    case Dtype::Fp16: return "fp16";
    case Dtype::Fp32: break;
  }
  return "fp32";
}

Dtype parse_dtype(const std::string& text) {
  for (Dtype d : {Dtype::Fp32, Dtype::Tf32, Dtype::Bf16, Dtype::Fp16})
    if (text == dtype_name(d)) return d;
  throw OptionError({"dtype", "dtype", "", ": expected fp32, tf32, bf16 or fp16, got '" + text + "'"});
}

uint64_t dtype_bytes(Dtype dtype) { return dtype == Dtype::Bf16 || dtype == Dtype::Fp16 ? 2 : 4; }

}  // namespace pase
