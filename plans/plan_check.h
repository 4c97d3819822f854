#pragma once
// An executable check of a plan's semantics (`pase plan-check`, docs/plans.md).
//
// - Every layer: each tensor's spec is the projection of the layer's mesh
//   axes (spec[t] = the axes of the letters of dims[t], in order), each
//   weight's grad_allreduce_axes are the layer's axes its letters lack, and
//   the written jax, dtensor and hlo texts say what the spec says (hlo by
//   meaning: which device holds which tile).
// - Layers whose tensors form an einsum (fc, einsum, contraction, matmul,
//   embedding, transpose, reduce_mean: output = the sum, over the letters the
//   output lacks, of the product of the inputs and weights) or a sum
//   (elementwise: inputs with the output's dims), every tensor dimension
//   following one letter: run on a shrunk problem, each letter's extent
//   config × a small block, with random values. Every device of the mesh
//   computes the einsum of the tiles its layouts give it, the results are
//   summed over the layer's reduction axes (those under letters the output
//   lacks), and each device's result must equal its output tile of the
//   unsharded result.
// - Every input that reads another layer's output: the realized words are
//   recomputed from the two layouts on the real shapes.
// - Pipeline plans (docs/pipeline.md): each stage's layers and edges on its
//   own mesh as above; every input an earlier stage's layer makes has a send
//   record naming that stage, of the output's shape, whose model words are
//   the tensor over the smaller stage's devices and whose realized words are
//   the most any receiving device needs (counted device by device).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plans/plan_reader.h"

namespace pase {

struct PlanCheckOptions {
  uint64_t seed = 1;         ///< of the random tensor values
  int64_t block = 2;         ///< elements per block of each letter in the shrunk problem
  double tolerance = 1e-9;   ///< relative, on every element of the shrunk problem
  /// Refuse (LimitError) a mesh of more devices: the check visits every
  /// device's tiles of every tensor, so its time and memory grow with them.
  int64_t max_devices = int64_t{1} << 16;
};

struct PlanCheckReport {
  size_t layers_computed = 0;     ///< run on a shrunk problem (and layouts checked)
  size_t layers_layout_only = 0;  ///< layouts checked only
  size_t edges = 0;               ///< inputs read from another layer's output (of the same stage)
  size_t sends = 0;               ///< pipeline plans: inputs read from an earlier stage's layer
  /// One line per inconsistent layer ("layer 'fc6': ...": its layout problems,
  /// then "computed: ..." for the first wrong result) or edge ("edge 'conv1' -> 'pool1' ...").
  std::vector<std::string> problems;
};

/// Checks every layer and edge; a LimitError ("max_devices") when the mesh has
/// more devices than options.max_devices.
[[nodiscard]] PlanCheckReport check_plan(const PlanFile& file, const PlanCheckOptions& options = {});

/// A device's coordinate on each mesh axis (row-major ids, last axis fastest).
[[nodiscard]] std::vector<int64_t> mesh_coords(const Mesh& mesh, int64_t device);

/// The block index the coordinates select along `axes`: their mixed-radix
/// number, the first axis most significant.
[[nodiscard]] int64_t block_index(const std::vector<int>& axes, const std::vector<int64_t>& coords, const Mesh& mesh);

/// Block `index` of `size` elements cut into `pieces` as XLA cuts them:
/// ceil(size / pieces) elements each, the last ones shorter or empty.
struct Interval {
  int64_t begin = 0, end = 0;
  [[nodiscard]] int64_t length() const { return end - begin; }
};
[[nodiscard]] Interval block_interval(int64_t size, int64_t pieces, int64_t index);

/// Under layouts `held` (what devices have) and `needed` (what they must have)
/// of a tensor of `shape`: the most elements any device needs and does not hold.
[[nodiscard]] int64_t realized_words(const Shape& shape, const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh);

}  // namespace pase
