#pragma once
// What a layer and a redistribution cost on a mesh's axes (docs/plans.md,
// "Pricing on the mesh"): the one place the links a layout crosses are
// worked out, for the search over layouts (mesh_search.h), the placement of
// a strategy (build_plan.h) and the plan's realized totals alike.
#include <cstdint>
#include <vector>

#include "costmodel/cost_model.h"
#include "graphs/vertex_model.h"
#include "plans/plan.h"
#include "plans/realized_words.h"

namespace pase {

/// Whether `model` prices each collective by the links its group crosses
/// (the calibrated model; the `pase` model is device-order-free): its
/// searches choose every layer's axes with its configuration, and a plan
/// placed after a search is priced over its links.
[[nodiscard]] bool prices_links(const CostModel& model);

/// Devices of one node along each mesh axis: the whole axis when it lies
/// inside a node, 1 when each of its steps crosses to another node, and in
/// between for an axis cut by node boundaries ([16, 4] with 8 per node: 2
/// and 4). Devices are row-major, so node n holds ids [n·K, (n+1)·K).
[[nodiscard]] std::vector<int64_t> axis_devices_per_node(const Mesh& mesh);

/// Per domain dimension, how many of its pieces share a node under the
/// assignment: the product of its axes' devices per node.
[[nodiscard]] std::vector<int32_t> node_splits(const Mesh& mesh, const AxisAssignment& assignment);

/// The layer's cost with its splits on the assignment's axes
/// (CostModel::layer_on_nodes).
[[nodiscard]] double layer_on_mesh(const CostModel& model, const VertexModel& vertex, const int32_t* config,
                                   const Mesh& mesh, const AxisAssignment& assignment);

/// Whether moving a tensor from layout `held` to `needed` fetches across
/// nodes: some axis the producer splits the tensor over is used otherwise
/// by the consumer (another dimension, another place, or not at all: its
/// pieces must then come from the other devices along it), and that axis
/// steps across nodes. An axis only the consumer uses moves nothing (every
/// device along it holds the whole of it).
[[nodiscard]] bool crosses_nodes(const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh);
/// The same with the mesh's axis_devices_per_node given (for loops over many layout pairs).
[[nodiscard]] bool crosses_nodes(const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh,
                                 const std::vector<int64_t>& per_node);

/// The realized redistribution's cost: `words` fetched per device
/// (realized_words), over the link it crosses.
[[nodiscard]] double edge_on_mesh(const CostModel& model, double words, const AxisSpec& held, const AxisSpec& needed,
                                  const Mesh& mesh);
/// The same with the mesh's axis_devices_per_node given.
[[nodiscard]] double edge_on_mesh(const CostModel& model, double words, const AxisSpec& held, const AxisSpec& needed,
                                  const Mesh& mesh, const std::vector<int64_t>& per_node);

}  // namespace pase
