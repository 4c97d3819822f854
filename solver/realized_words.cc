#include "solver/realized_words.h"

#include <algorithm>

namespace pase {
namespace {

struct Interval {
  int64_t begin = 0, end = 0;
};

// The block of dimension `size` that the device at `coordinate` holds under `axes`.
Interval block_of(int64_t size, const std::vector<int>& axes, const Mesh& mesh, const std::vector<int64_t>& coordinate) {
  int64_t index = 0, split = 1;
  for (int axis : axes) {
    index = index * mesh.shape[axis] + coordinate[axis];
    split *= mesh.shape[axis];
  }
  const int64_t block = (size + split - 1) / split;
  return {std::min(size, index * block), std::min(size, (index + 1) * block)};
}

}  // namespace

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

double realized_words(const Shape& shape, const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh,
                      const std::vector<std::vector<int64_t>>& coordinates) {
  double worst = 0;
  for (const std::vector<int64_t>& coordinate : coordinates) {
    double need = 1, common = 1;
    for (size_t t = 0; t < shape.size(); ++t) {
      Interval h = block_of(shape[t], held[t], mesh, coordinate);
      Interval n = block_of(shape[t], needed[t], mesh, coordinate);
      need *= static_cast<double>(n.end - n.begin);
      common *= static_cast<double>(std::max<int64_t>(0, std::min(h.end, n.end) - std::max(h.begin, n.begin)));
    }
    worst = std::max(worst, need - common);
  }
  return worst;
}

}  // namespace pase
