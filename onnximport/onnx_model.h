#pragma once
// Reading an ONNX file and the small accessors the importer needs on its
// protobuf messages (attributes, static shapes, names usable in pase).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "base/shape.h"

namespace pase {

/// Parses `path` as an ONNX ModelProto; InputError naming the file when it is not one.
[[nodiscard]] onnx::ModelProto read_onnx_model(const std::string& path);

/// Parses the bytes of an ONNX file; `source` names it in the InputError when they are not a model.
[[nodiscard]] onnx::ModelProto parse_onnx_model(const std::string& bytes, const std::string& source);

/// Gives every node a name pase accepts: empty or ':'-containing names become OPTYPE_N, duplicates get _N.
void sanitize_node_names(onnx::GraphProto& graph);

/// `name` with ':' replaced (pase reads "node:k" as output k), or `fallback` when empty.
[[nodiscard]] std::string pase_name(const std::string& name, const std::string& fallback);

/// The attribute called `name`, or nullptr.
/// Whether `op` is one of `ops` (ONNX op types).
[[nodiscard]] bool is_one_of(const std::string& op, std::initializer_list<const char*> ops);

[[nodiscard]] const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name);

/// Integer attribute with a default.
[[nodiscard]] int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);

/// Integer-list attribute, or nullopt when absent.
[[nodiscard]] std::optional<std::vector<int64_t>> ints_attribute(const onnx::NodeProto& node, const std::string& name);

/// String attribute with a default.
[[nodiscard]] std::string string_attribute(const onnx::NodeProto& node, const std::string& name, const std::string& fallback);

/// The shape of a tensor type when every dimension is a known number.
[[nodiscard]] std::optional<Shape> static_shape(const onnx::TypeProto& type);

/// The opset version of the default ("" or "ai.onnx") domain, 0 if none.
[[nodiscard]] int64_t default_opset(const onnx::ModelProto& model);

}  // namespace pase
