#pragma once
// From ONNX op type to the Lowerer member that lowers it: the union of the
// families' tables (onnximport/lowerings/), each op type in one family only.
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace pase {

class Lowerer;

/// Lowers one node whose activation inputs are at `slots`.
using Lowering = void (Lowerer::*)(const onnx::NodeProto& node, const std::vector<int>& slots);

struct LoweringEntry {
  const char* op_type;
  Lowering lower;
};

/// The lowering of an ONNX op type (domain ai.onnx), or nullptr: unsupported.
[[nodiscard]] const Lowering* find_lowering(const std::string& op_type);

/// Every op type some family lowers, sorted (docs/onnx.md lists them).
[[nodiscard]] std::vector<std::string> lowered_op_types();

}  // namespace pase
