#include "plans/mesh_pricing.h"

#include <algorithm>
#include <map>
#include <utility>

namespace pase {

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

namespace {

// Each axis a layout uses: the tensor dimension it splits and its place there.
std::map<int, std::pair<size_t, size_t>> axis_roles(const AxisSpec& spec) {
  std::map<int, std::pair<size_t, size_t>> roles;
  for (size_t t = 0; t < spec.size(); ++t)
    for (size_t i = 0; i < spec[t].size(); ++i) roles[spec[t][i]] = {t, i};
  return roles;
}

}  // namespace

bool crosses_nodes(const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh) {
  const std::vector<int64_t> per_node = axis_devices_per_node(mesh);
  const auto needed_roles = axis_roles(needed);
  for (const auto& [axis, role] : axis_roles(held)) {
    const auto it = needed_roles.find(axis);
    const bool moves = it == needed_roles.end() || it->second != role;
    if (moves && per_node[static_cast<size_t>(axis)] < mesh.shape[static_cast<size_t>(axis)]) return true;
  }
  return false;
}

double edge_on_mesh(const CostModel& model, double words, const AxisSpec& held, const AxisSpec& needed,
                    const Mesh& mesh) {
  return model.fetch_cost_on_nodes(words, std::max(spec_devices(held, mesh), spec_devices(needed, mesh)),
                                   crosses_nodes(held, needed, mesh));
}

}  // namespace pase
