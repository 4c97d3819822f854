#pragma once
// Models written at opsets newer than the linked ONNX library knows (today's
// PyTorch exporter writes opset 18 to 23; Debian's ONNX 1.12 knows 17):
// where a newer opset only moved an attribute into an input, the node is
// rewritten to the older form, whose schema and shape inference the library
// has. A node the rewrite cannot read (its axes computed, not constant) is
// left as it is, and the arity check refuses it by name.
#include <string>

#include <onnx/onnx_pb.h>

namespace pase {

/// The newest opset of the default domain whose schemas the linked library holds.
[[nodiscard]] int known_opset();

/// Rewrites, in place, the nodes whose newer form the library would misread:
/// ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
/// ReduceLogSum, ReduceLogSumExp and ReduceSumSquare with constant `axes`
/// as input 1 (opset 18) take them as the attribute again; a Split with
/// `num_outputs` (opset 18) takes its part sizes as input 1.
void rewrite_newer_forms(onnx::GraphProto& graph, const std::string& source);

}  // namespace pase
