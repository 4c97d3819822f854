#include "plans/assignment_bound.h"

#include <algorithm>
#include <limits>
#include <set>

#include "plans/mesh.h"
#include "plans/realized_words.h"

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

const std::vector<AxisSpec>* AssignmentBound::layouts(const SplitMap& map, const std::vector<int32_t>& config,
                                                      bool canonical) {
  auto [it, inserted] = layouts_.try_emplace(std::make_tuple(map, config, canonical));
  if (inserted) {
    const Assignments* all = assignments(config);
    if (all) {
      std::set<AxisSpec> distinct;
      for (const AxisAssignment& assignment : *all) {
        AxisSpec spec = tensor_spec(map, assignment);
        distinct.insert(canonical ? canonical_spec(spec, mesh_) : std::move(spec));
      }
      it->second.emplace(distinct.begin(), distinct.end());
    }
  }
  return it->second ? &*it->second : nullptr;
}

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
  // Every producer layout is a relabelling of a canonical one, which is a
  // producer layout too (the assignments are closed under relabelling).
  const std::vector<AxisSpec>* held = layouts(held_map, held_config, true);
  const std::vector<AxisSpec>* needed = layouts(needed_map, needed_config, false);
  if (!held || !needed) return std::nullopt;
  // Edges that carry the same tensor between the same sets of layouts share one answer.
  auto key = std::make_tuple(tensor, held, needed);
  auto cached = least_.find(key);
  if (cached != least_.end()) return cached->second;
  const std::vector<AxisSpec>& held_specs = *held;
  const std::vector<AxisSpec>& needed_specs = *needed;
  // One consumer layout's blocks at a time against every canonical producer
  // layout's: memory of a few layouts, not of thousands.
  std::vector<std::vector<Block>> held_blocks;
  std::vector<double> held_devices;
  for (const AxisSpec& spec : held_specs) {
    held_blocks.push_back(device_blocks(tensor, spec, mesh_, coordinates_));
    held_devices.push_back(spec_devices(spec, mesh_));
  }
  double best = std::numeric_limits<double>::infinity();
  std::vector<Block> blocks;
  for (const AxisSpec& spec : needed_specs) {
    device_blocks(tensor, spec, mesh_, coordinates_, blocks);
    const double devices = spec_devices(spec, mesh_);
    for (size_t i = 0; i < held_blocks.size(); ++i)
      best = std::min(best, model_.fetch_cost(realized_words(held_blocks[i], blocks, tensor.size()),
                                              std::max(held_devices[i], devices)));
  }
  least_.emplace(std::move(key), best);
  return best;
}

}  // namespace pase
