#pragma once
// The importer's tests: a tiny ONNX model built with the protobuf API and
// saved to a temporary file, the committed fixtures, and a node by name.
#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include "graphs/graph_file.h"
#include "test_support.h"

namespace pase::test {

class TinyModel {
 public:
  TinyModel() {
    model_.set_ir_version(7);
    model_.add_opset_import()->set_version(14);
    model_.mutable_graph()->set_name("tiny");
  }
  /// The default domain's opset (14 unless set).
  void opset(int64_t version) { model_.mutable_opset_import(0)->set_version(version); }
  void input(const std::string& name, const std::vector<int64_t>& dims, int32_t type = onnx::TensorProto::FLOAT) {
    describe(model_.mutable_graph()->add_input(), name, dims, type);
  }
  void output(const std::string& name) {
    onnx::ValueInfoProto* info = model_.mutable_graph()->add_output();
    info->set_name(name);
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  onnx::NodeProto& node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
    onnx::NodeProto& n = *model_.mutable_graph()->add_node();
    n.set_name(name);
    n.set_op_type(op);
    for (const std::string& in : inputs) n.add_input(in);
    for (const std::string& out : outputs) n.add_output(out);
    return n;
  }
  static void attribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
    onnx::AttributeProto& a = *node.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(value);
  }
  static void attribute(onnx::NodeProto& node, const std::string& name, const std::string& value) {
    onnx::AttributeProto& a = *node.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(value);
  }
  static void attribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
    onnx::AttributeProto& a = *node.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a.add_ints(v);
  }
  /// A float initializer of zeros (a weight or buffer stored in the model).
  void initializer(const std::string& name, const std::vector<int64_t>& dims) {
    onnx::TensorProto& tensor = *model_.mutable_graph()->add_initializer();
    tensor.set_name(name);
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (int64_t d : dims) {
      tensor.add_dims(d);
      count *= d;
    }
    for (int64_t i = 0; i < count; ++i) tensor.add_float_data(0.0f);
  }
  /// A float initializer holding `values` (a constant ratio or scale).
  void float_initializer(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    onnx::TensorProto& tensor = *model_.mutable_graph()->add_initializer();
    tensor.set_name(name);
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tensor.add_dims(d);
    for (float v : values) tensor.add_float_data(v);
  }
  /// An int64 initializer holding `values` (a constant depth, axis or index).
  void int_initializer(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    onnx::TensorProto& tensor = *model_.mutable_graph()->add_initializer();
    tensor.set_name(name);
    tensor.set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) tensor.add_dims(d);
    for (int64_t v : values) tensor.add_int64_data(v);
  }
  /// A 1-D int64 initializer (a Reshape target, Slice bounds).
  void initializer_ints(const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto& tensor = *model_.mutable_graph()->add_initializer();
    tensor.set_name(name);
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) tensor.add_int64_data(v);
  }
  std::string save(const std::string& file_name) const {
    return test::write_temp_file(file_name, model_.SerializeAsString());
  }

 private:
  static void describe(onnx::ValueInfoProto* info, const std::string& name, const std::vector<int64_t>& dims, int32_t type) {
    info->set_name(name);
    onnx::TypeProto::Tensor& tensor = *info->mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(type);
    for (int64_t d : dims) tensor.mutable_shape()->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto model_;
};

/// A committed ONNX fixture, data/onnx/NAME.onnx.
inline std::string onnx_fixture(const std::string& name) { return source_path("data/onnx/" + name + ".onnx"); }

/// The graph file's node named `name` (the test fails when there is none).
inline const NodeV1& node_named(const GraphFileV1& file, const std::string& name) {
  for (const NodeV1& node : file.nodes)
    if (node.name == name) return node;
  FAIL("no node " << name);
  return file.nodes.front();
}

}  // namespace pase::test
