#include "plans/realized_words.h"

#include <algorithm>

namespace pase {

AxisSpec tensor_spec(const SplitMap& map, const AxisAssignment& assignment) {
  AxisSpec spec(map.size());
  for (size_t t = 0; t < map.size(); ++t)
    for (int d : map[t]) spec[t].insert(spec[t].end(), assignment[d].begin(), assignment[d].end());
  return spec;
}

double spec_devices(const AxisSpec& spec, const Mesh& mesh) {
  double product = 1;
  for (const auto& axes : spec)
    for (int axis : axes) product *= static_cast<double>(mesh.shape[axis]);
  return product;
}

std::vector<std::vector<int64_t>> mesh_coordinates(const Mesh& mesh) {
  const int64_t devices = mesh.devices();
  std::vector<std::vector<int64_t>> coordinates(static_cast<size_t>(devices), std::vector<int64_t>(mesh.shape.size()));
  for (int64_t id = 0; id < devices; ++id) {
    int64_t rest = id;
    for (size_t j = mesh.shape.size(); j-- > 0;) {
      coordinates[id][j] = rest % mesh.shape[j];
      rest /= mesh.shape[j];
    }
  }
  return coordinates;
}

void device_blocks(const Shape& shape, const AxisSpec& spec, const Mesh& mesh,
                   const std::vector<std::vector<int64_t>>& coordinates, std::vector<Block>& blocks) {
  const size_t rank = shape.size();
  blocks.resize(coordinates.size() * rank);
  for (size_t t = 0; t < rank; ++t) {
    int64_t split = 1;
    for (int axis : spec[t]) split *= mesh.shape[axis];
    const int64_t block = (shape[t] + split - 1) / split;
    for (size_t device = 0; device < coordinates.size(); ++device) {
      int64_t index = 0;
      for (int axis : spec[t]) index = index * mesh.shape[axis] + coordinates[device][axis];
      blocks[device * rank + t] = {std::min(shape[t], index * block), std::min(shape[t], (index + 1) * block)};
    }
  }
}

std::vector<Block> device_blocks(const Shape& shape, const AxisSpec& spec, const Mesh& mesh,
                                 const std::vector<std::vector<int64_t>>& coordinates) {
  std::vector<Block> blocks;
  device_blocks(shape, spec, mesh, coordinates, blocks);
  return blocks;
}

double realized_words(const std::vector<Block>& held, const std::vector<Block>& needed, size_t rank) {
  double worst = 0;
  for (size_t at = 0; at < needed.size(); at += rank) {
    double need = 1, common = 1;
    for (size_t t = at; t < at + rank; ++t) {
      need *= static_cast<double>(needed[t].second - needed[t].first);
      common *= static_cast<double>(
          std::max<int64_t>(0, std::min(held[t].second, needed[t].second) - std::max(held[t].first, needed[t].first)));
    }
    worst = std::max(worst, need - common);
  }
  return worst;
}

double realized_words(const Shape& shape, const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh,
                      const std::vector<std::vector<int64_t>>& coordinates) {
  return realized_words(device_blocks(shape, held, mesh, coordinates), device_blocks(shape, needed, mesh, coordinates),
                        shape.size());
}

}  // namespace pase
