#include "plans/mesh_pricing.h"

#include <algorithm>
#include <utility>

namespace pase {

bool prices_links(const CostModel& model) { return model.name() == "calibrated"; }

std::vector<int64_t> axis_devices_per_node(const Mesh& mesh) {
  const int64_t node = mesh.node_size();
  std::vector<int64_t> per_node(mesh.shape.size(), 1);
  int64_t stride = 1;  // ids between neighbours along the axis
  for (size_t j = mesh.shape.size(); j-- > 0;) {
    per_node[j] = stride >= node ? 1 : std::min(mesh.shape[j], std::max<int64_t>(1, node / stride));
    stride *= mesh.shape[j];
  }
  return per_node;
}

std::vector<int32_t> node_splits(const Mesh& mesh, const AxisAssignment& assignment) {
  const std::vector<int64_t> per_node = axis_devices_per_node(mesh);
  std::vector<int32_t> splits(assignment.size(), 1);
  for (size_t d = 0; d < assignment.size(); ++d)
    for (int axis : assignment[d]) splits[d] *= static_cast<int32_t>(per_node[static_cast<size_t>(axis)]);
  return splits;
}

double layer_on_mesh(const CostModel& model, const VertexModel& vertex, const int32_t* config, const Mesh& mesh,
                     const AxisAssignment& assignment) {
  const std::vector<int32_t> splits = node_splits(mesh, assignment);
  return model.layer_on_nodes(vertex, config, splits.data());
}

bool crosses_nodes(const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh) {
  return crosses_nodes(held, needed, mesh, axis_devices_per_node(mesh));
}

bool crosses_nodes(const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh, const std::vector<int64_t>& per_node) {
  // An axis keeps its role when the consumer has it at the same place of the
  // same tensor dimension; the pair's matrices price every layout pair, so
  // this allocates nothing.
  for (size_t t = 0; t < held.size(); ++t)
    for (size_t i = 0; i < held[t].size(); ++i) {
      const int axis = held[t][i];
      const bool kept = t < needed.size() && i < needed[t].size() && needed[t][i] == axis;
      if (!kept && per_node[static_cast<size_t>(axis)] < mesh.shape[static_cast<size_t>(axis)]) return true;
    }
  return false;
}

double edge_on_mesh(const CostModel& model, double words, const AxisSpec& held, const AxisSpec& needed,
                    const Mesh& mesh) {
  return edge_on_mesh(model, words, held, needed, mesh, axis_devices_per_node(mesh));
}

double edge_on_mesh(const CostModel& model, double words, const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh,
                    const std::vector<int64_t>& per_node) {
  return model.fetch_cost_on_nodes(words, std::max(spec_devices(held, mesh), spec_devices(needed, mesh)),
                                   crosses_nodes(held, needed, mesh, per_node));
}

}  // namespace pase
