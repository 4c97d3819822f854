#pragma once
// One op's definition: everything the program knows about it, in one place
// (graphs/ops/<op>.cc). The graph reader takes its fields from here, the
// graph builder its shape inference, the cost models its domain and work,
// the baselines its roles. Modelled on FlexFlow's lib/op-attrs/src/ops/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graphs/graph.h"
#include "graphs/vertex_model.h"

namespace pase {

class NodeContext;
struct LayerWork;

/// Which domain dimension a baseline strategy splits, or -1 for none.
using RoleDim = int (*)(const Vertex& vertex, const VertexModel& model);

/// The parts an op plays in the hand-written baselines (strategy/baselines.cc).
struct BaselineRoles {
  RoleDim batch_dim = nullptr;   ///< data parallelism; nullptr: domain dimension 0
  RoleDim owt_dim = nullptr;     ///< "one weird trick": the dimension split across all devices; nullptr: none
  /// Megatron's model-parallel dimension; nullptr: the vertex keeps the
  /// layout its first input arrives in.
  RoleDim tensor_parallel_dim = nullptr;
};

using InferFn = std::vector<Vertex> (*)(const NodeContext& node, Vertex vertex);
using ModelFn = VertexModel (*)(const Vertex& vertex);
using WorkFn = void (*)(const VertexModel& model, const int32_t* config, LayerWork& work);

struct OpDefinition {
  std::string name;  ///< the op's name in graph files ("conv2d")
  OpKind kind = OpKind::Elementwise;
  bool in_files = true;  ///< false for vertices only other ops create (reshape's ravel)
  std::vector<std::string> required_fields, optional_fields;  ///< beyond name, op, inputs, cutoff, outputs
  size_t min_inputs = 1, max_inputs = 1;  ///< SIZE_MAX: any number

  /// Checks the node's fields against its input shapes, sets the vertex's
  /// attributes and infers its output shapes. Returns the vertices the node
  /// becomes, in order: usually just `vertex`; a vertex input whose source is
  /// kPreviousVertex reads output 0 of the vertex before it in the list.
  InferFn infer = nullptr;
  /// Domain, splittable dimensions, tensor splits, weights and work parameters.
  ModelFn model = nullptr;
  /// Adds the work of one configuration; nullptr: the op only moves data, which edges price.
  WorkFn describe_work = nullptr;
  BaselineRoles roles;

  // A definition reads as one statement:
  //   OpDefinition("fc", OpKind::Fc).fields({"units"}, {"pointwise"}).infers(infer).models(model).works(describe_gemm)
  OpDefinition(std::string op_name, OpKind op_kind) : name(std::move(op_name)), kind(op_kind) {}
  OpDefinition& fields(std::vector<std::string> required, std::vector<std::string> optional = {}) {
    required_fields = std::move(required);
    optional_fields = std::move(optional);
    return *this;
  }
  OpDefinition& inputs(size_t min, size_t max) {
    min_inputs = min;
    max_inputs = max;
    return *this;
  }
  OpDefinition& infers(InferFn fn) { return infer = fn, *this; }
  OpDefinition& models(ModelFn fn) { return model = fn, *this; }
  OpDefinition& works(WorkFn fn) { return describe_work = fn, *this; }
  OpDefinition& batch_role(RoleDim fn) { return roles.batch_dim = fn, *this; }
  OpDefinition& owt_role(RoleDim fn) { return roles.owt_dim = fn, *this; }
  OpDefinition& tensor_parallel_role(RoleDim fn) { return roles.tensor_parallel_dim = fn, *this; }
  OpDefinition& internal() { return in_files = false, *this; }
};

/// TensorSource::vertex of an input that is output 0 of the previous vertex a node lowers to.
inline constexpr int kPreviousVertex = -2;

}  // namespace pase
