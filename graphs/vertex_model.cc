#include "graphs/vertex_model.h"

namespace pase {

void tensor_split(const SplitMap& map, const int32_t* config, int64_t* split_out) {
  for (size_t i = 0; i < map.size(); ++i) {
    int64_t split = 1;
    for (int d : map[i]) split *= config[d];
    split_out[i] = split;
  }
}

}  // namespace pase
