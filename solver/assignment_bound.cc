#include "solver/assignment_bound.h"

#include <algorithm>
#include <limits>
#include <set>

#include "solver/mesh.h"
#include "solver/realized_words.h"

namespace pase {

AxisSpec canonical_spec(const AxisSpec& spec, const Mesh& mesh) {
  const size_t axes = mesh.shape.size();
  std::vector<int> relabel(axes, -1);
  std::vector<char> taken(axes, 0);
  AxisSpec canonical(spec.size());
  for (size_t t = 0; t < spec.size(); ++t)
    for (int axis : spec[t]) {
      if (relabel[axis] < 0) {
        size_t target = 0;
        while (taken[target] || mesh.shape[target] != mesh.shape[axis]) ++target;  // axis itself qualifies
        taken[target] = 1;
        relabel[axis] = static_cast<int>(target);
      }
      canonical[t].push_back(relabel[axis]);
    }
  return canonical;
}

AssignmentBound::AssignmentBound(const Mesh& mesh, const CostModel& model, size_t max_assignments)
    : mesh_(mesh), model_(model), max_assignments_(max_assignments), coordinates_(mesh_coordinates(mesh)) {}

const AssignmentBound::Assignments* AssignmentBound::assignments(const std::vector<int32_t>& config) {
  auto [it, inserted] = assignments_.try_emplace(config);
  if (inserted) {
    AxisAssignments found = axis_assignments(mesh_, config.data(), static_cast<int>(config.size()), max_assignments_);
    if (found.complete) it->second = std::move(found.list);
  }
  return it->second ? &*it->second : nullptr;
}

std::optional<double> AssignmentBound::least_edge_cost(const Shape& tensor, const SplitMap& held_map,
                                                       const std::vector<int32_t>& held_config,
                                                       const SplitMap& needed_map,
                                                       const std::vector<int32_t>& needed_config) {
  auto key = std::make_tuple(tensor, held_map, held_config, needed_map, needed_config);
  auto cached = least_.find(key);
  if (cached != least_.end()) return cached->second;
  std::optional<double>& least = least_[std::move(key)];
  const Assignments* held = assignments(held_config);
  const Assignments* needed = assignments(needed_config);
  if (!held || !needed) return least;
  // Every producer layout is a relabelling of a canonical one, which is a
  // producer layout too (the assignments are closed under relabelling).
  std::set<AxisSpec> held_specs, needed_specs;
  for (const AxisAssignment& assignment : *held) held_specs.insert(canonical_spec(tensor_spec(held_map, assignment), mesh_));
  for (const AxisAssignment& assignment : *needed) needed_specs.insert(tensor_spec(needed_map, assignment));
  std::vector<std::vector<Block>> needed_blocks;
  std::vector<double> needed_devices;
  for (const AxisSpec& spec : needed_specs) {
    needed_blocks.push_back(device_blocks(tensor, spec, mesh_, coordinates_));
    needed_devices.push_back(spec_devices(spec, mesh_));
  }
  double best = std::numeric_limits<double>::infinity();
  for (const AxisSpec& spec : held_specs) {
    const std::vector<Block> blocks = device_blocks(tensor, spec, mesh_, coordinates_);
    const double devices = spec_devices(spec, mesh_);
    for (size_t j = 0; j < needed_blocks.size(); ++j)
      best = std::min(best, model_.fetch_cost(realized_words(blocks, needed_blocks[j], tensor.size()),
                                              std::max(devices, needed_devices[j])));
  }
  least = best;
  return least;
}

}  // namespace pase
