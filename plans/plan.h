#pragma once
// A deployable plan (docs/plans.md): a strategy placed on a device mesh, with
// the layout of every input, output and weight of every layer. The solver
// builds it (build_plan), the strategy file carries it, `pase export` and
// `pase plan-check` read it back (read_plan). Mesh axes are referred to by
// index into Mesh::axes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/shape.h"

namespace pase {

/// Devices as a row-major grid, last axis fastest: device id =
/// Σ_j coord_j · Π_{k>j} shape_k; devices [n·dpn, (n+1)·dpn) share node n.
struct Mesh {
  std::vector<int64_t> shape;
  std::vector<std::string> axes;  ///< distinct names, one per axis
  int64_t devices_per_node = 0;   ///< 0: not known (node_size() then counts the mesh as one node)

  [[nodiscard]] int64_t devices() const {
    int64_t product = 1;
    for (int64_t size : shape) product *= size;
    return product;
  }
  /// Devices per node as files record it: all of them when not known.
  [[nodiscard]] int64_t node_size() const { return devices_per_node > 0 ? devices_per_node : devices(); }
};

/// The mesh axes each tensor dimension is split over, major first (indices into Mesh::axes).
using AxisSpec = std::vector<std::vector<int>>;

/// A weight as the model's checkpoint holds it, where the graph declares it
/// in more dimensions (graphs/checkpoint_shapes.h), and the weight's layout
/// carried onto that shape (plans/checkpoint_layout.h).
struct CheckpointView {
  Shape shape;                           ///< the checkpoint's shape
  std::vector<std::vector<int>> merges;  ///< per checkpoint dimension, the weight's dimensions it merges
  std::vector<int64_t> split;            ///< pieces per checkpoint dimension
  std::vector<std::string> dims;         ///< per checkpoint dimension, the letters of its merged dimensions
  std::optional<AxisSpec> spec;          ///< nullopt: no device's piece is one block of the checkpoint's tensor
  std::string note;                      ///< why spec is nullopt
};

/// One input, output or weight of a layer on the mesh.
struct PlannedTensor {
  std::string name;                  ///< inputs: the tensor read ("conv1", "x"); weights: the parameter's name; outputs: ""
  Shape shape;
  std::vector<int64_t> split;        ///< pieces per dimension (the strategy's split)
  std::vector<std::string> dims;     ///< per dimension, the layer letters it follows, major first ("" for none)
  AxisSpec spec;                     ///< per dimension, the mesh axes; Π sizes = split
  std::vector<int> grad_allreduce_axes;  ///< weights only: axes the gradient is all-reduced over
  std::optional<CheckpointView> checkpoint;  ///< weights only: where the checkpoint merges dimensions
  /// Inputs read from another layer's output: the cost model's words and the
  /// words the layouts really move (the most any device lacks).
  std::optional<double> model_words, realized_words;
  /// Pipeline plans: an input another stage's layer makes (`from_stage`, an
  /// earlier stage) is sent point to point; model_words and realized_words
  /// are then the send's (docs/pipeline.md, "Plans per stage").
  std::optional<int> from_stage;
};

struct PlannedLayer {
  std::string name, op, dims;        ///< dims: one letter per domain dimension
  std::vector<int64_t> config;       ///< split per letter
  std::vector<std::vector<int>> mesh_axes;  ///< per letter of dims, the mesh axes its split runs over, major first
  std::vector<PlannedTensor> inputs, outputs, weights;
  int stage = 0;  ///< pipeline plans: the stage that runs it (its mesh is Plan::stages[stage].mesh)
};

/// One pipeline stage's mesh: its devices are the job's
/// [first_device, first_device + mesh.devices()), in the mesh's row-major order.
struct PlanStage {
  int64_t first_device = 0;
  Mesh mesh;
  /// The stage's time per micro-batch with its redistributions as its layouts
  /// realize them (its sends as the model prices them).
  double realized_cost = 0;
  std::string assignment_proof = "all_assignments";  ///< as Plan::assignment_proof, for this stage's placement
};

struct Plan {
  Mesh mesh;  ///< every layer's mesh; pipeline plans: empty (each stage has its own, `stages`)
  /// Pipeline plans: each stage's devices and mesh, by stage; empty: one mesh.
  std::vector<PlanStage> stages;
  std::vector<PlannedLayer> layers;
  double realized_total_cost = 0;
  bool assignment_exact = true;  ///< the axis assignment is optimal over every assignment of every layer
  /// Why it is (build_plan.h's PlanProof): "all_assignments", "lower_bound" or "none".
  std::string assignment_proof = "all_assignments";
  size_t candidates_per_layer = 0;  ///< the most assignments the placing DP weighed for one layer
  /// Layer costs plus each edge's least realized cost over all assignment
  /// pairs: no placement of this strategy costs less (equal to
  /// realized_total_cost under the "lower_bound" proof).
  double realized_total_lower_bound = 0;

  /// The mesh a layer's axes and layouts refer to.
  [[nodiscard]] const Mesh& mesh_of(const PlannedLayer& layer) const {
    return stages.empty() ? mesh : stages[static_cast<size_t>(layer.stage)].mesh;
  }
};

}  // namespace pase
