#pragma once
// The ONNX op families the importer lowers, one file each in this folder
// (docs/onnx.md): each defines its Lowerer members and returns its table
// from ONNX op type to lowering. Adding a family: its file and its line in
// the list below; adding an op: its line in its family's table.
#include <vector>

#include "onnximport/lowerer.h"
#include "onnximport/lowering_table.h"

namespace pase {

#define PASE_LOWERING_FAMILIES(X) \
  X(convolution)                  \
  X(matmul)                       \
  X(einsum)                       \
  X(elementwise)                  \
  X(normalization)                \
  X(data_movement)                \
  X(reduction)                    \
  X(index)                        \
  X(recurrent)                    \
  X(control_flow)

#define PASE_DECLARE_FAMILY(family) std::vector<LoweringEntry> family##_lowerings();
PASE_LOWERING_FAMILIES(PASE_DECLARE_FAMILY)
#undef PASE_DECLARE_FAMILY

}  // namespace pase
