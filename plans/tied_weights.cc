#include "plans/tied_weights.h"

#include <map>
#include <utility>

#include "plans/realized_words.h"

namespace pase {

std::vector<WeightReshard> weight_reshards(const Plan& plan) {
  std::vector<WeightReshard> out;
  std::map<std::string, std::pair<size_t, size_t>> first;  // weight name -> (layer, weight index)
  std::vector<std::vector<int64_t>> coordinates;
  for (size_t l = 0; l < plan.layers.size(); ++l) {
    const std::vector<PlannedTensor>& weights = plan.layers[l].weights;
    for (size_t w = 0; w < weights.size(); ++w) {
      auto [it, fresh] = first.emplace(weights[w].name, std::make_pair(l, w));
      if (fresh) continue;
      const PlannedTensor& held = plan.layers[it->second.first].weights[it->second.second];
      if (held.spec == weights[w].spec) continue;
      WeightReshard reshard{weights[w].name, it->second.first, it->second.second, l, w,
                            held.shape != weights[w].shape, 0};
      if (!reshard.reshaped) {
        if (coordinates.empty()) coordinates = mesh_coordinates(plan.mesh);
        reshard.realized_words = realized_words(held.shape, held.spec, weights[w].spec, plan.mesh, coordinates);
      }
      out.push_back(std::move(reshard));
    }
  }
  return out;
}

std::string reshaped_weight_message(const Plan& plan, const WeightReshard& reshard, const std::string& source) {
  const PlannedLayer& holder = plan.layers[reshard.holder];
  const PlannedLayer& reader = plan.layers[reshard.reader];
  return source + ": weight '" + reshard.weight + "' has shape " +
         shape_to_string(holder.weights[reshard.holder_weight].shape) + " in layer '" + holder.name + "' but " +
         shape_to_string(reader.weights[reshard.reader_weight].shape) + " in layer '" + reader.name +
         "'; a framework holds one tensor per weight";
}

}  // namespace pase
