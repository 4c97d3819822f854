#pragma once
// One op's definition: everything the program knows about it, in one place
// (graphs/ops/<op>.cc). The graph reader takes its fields from here, the
// graph builder its shape inference, the cost models its domain and work,
// the baselines its roles. Modelled on FlexFlow's lib/op-attrs/src/ops/.
#include <cstddef>
#include <string>
#include <vector>

#include "graphs/graph.h"
#include "graphs/vertex_model.h"

namespace pase {

class NodeContext;
struct LayerWork;

/// Which domain dimension a baseline strategy splits, or -1 for none.
using RoleDim = int (*)(const Vertex& vertex, const VertexModel& model);

/// The parts an op plays in the hand-written baselines (solver/baselines.cc).
struct BaselineRoles {
  RoleDim batch_dim = nullptr;   ///< data parallelism; nullptr: domain dimension 0
  RoleDim owt_dim = nullptr;     ///< "one weird trick": the dimension split across all devices; nullptr: none
  /// Megatron's model-parallel dimension; nullptr: the vertex keeps the
  /// layout its first input arrives in.
  RoleDim tensor_parallel_dim = nullptr;
};

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
  std::vector<Vertex> (*infer)(const NodeContext& node, Vertex vertex) = nullptr;
  /// Domain, splittable dimensions, tensor splits, weights and work parameters.
  VertexModel (*model)(const Vertex& vertex) = nullptr;
  /// Adds the work of one configuration; nullptr: the op only moves data, which edges price.
  void (*describe_work)(const VertexModel& model, const int32_t* config, LayerWork& work) = nullptr;
  BaselineRoles roles;
};

/// TensorSource::vertex of an input that is output 0 of the previous vertex a node lowers to.
inline constexpr int kPreviousVertex = -2;

}  // namespace pase
