#pragma once
// Models written at opsets newer than the linked ONNX library knows (today's
// PyTorch exporter writes opset 18 to 23; Debian's ONNX 1.12 knows 17):
// where a newer opset only moved an attribute into an input, the node is
// rewritten to the older form, whose schema and shape inference the library
// has. The reductions' axes are often computed (a Reshape of constants), so
// such a node is held out of ONNX's inference (put in a domain of pase's
// own, which no schema has) until the constant evaluator knows its axes;
// one whose axes never become known is put back as it was, its output shape
// unknown, and the import refuses it by name.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace pase {

/// The newest opset of the default domain whose schemas the linked library holds.
[[nodiscard]] int known_opset();

/// A constant's integer values by tensor name, or nullopt where not (yet) known.
using ConstantInts = std::function<std::optional<std::vector<int64_t>>(const std::string&)>;

/// Rewrites, in place, the nodes whose newer form the library would misread,
/// where `constant` knows what the older form needs, and holds out the rest:
/// ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
/// ReduceLogSum, ReduceLogSumExp and ReduceSumSquare with `axes` as input 1
/// (opset 18) take them as the attribute again; a Split with `num_outputs`
/// (opset 18) drops it (the older form splits evenly into its outputs).
/// Returns whether it rewrote a node.
bool rewrite_newer_forms(onnx::ModelProto& model, const ConstantInts& constant);

/// Puts back the nodes still held out, as they were written, and drops the
/// opset import the held-out domain needed (ONNX's inference refuses a node
/// of a domain the model does not import).
void restore_held_out(onnx::ModelProto& model);

}  // namespace pase
