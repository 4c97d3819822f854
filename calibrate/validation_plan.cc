#include "calibrate/validation_plan.h"

#include <map>

#include "base/error.h"
#include "strategy/strategy_reader.h"

namespace pase {

std::vector<ValidationLayer> validation_plan(const Graph& graph, const std::string& strategy_text,
                                          const std::string& source, const CalibratedCostModel& model) {
  // Only the layers' configs are needed; the rest of the file is the solver's.
  std::map<std::string, std::vector<int32_t>> configs;
  for (const StrategyLayer& layer : parse_strategy_file(strategy_text, source).layers)
    configs[layer.name] = std::vector<int32_t>(layer.config.begin(), layer.config.end());
  std::vector<ValidationLayer> plan;
  for (const Vertex& vertex : graph.vertices) {
    VertexModel vm = build_vertex_model(vertex);
    const std::vector<int32_t> unsplit(vm.domain.size(), 1);
    if (!describe_work(vm, unsplit.data()).has_gemm) continue;  // only GEMM layers are timed
    // The calibrated model prices an embedding as the gather frameworks run,
    // not as the one-hot GEMM of the pase model: cuBLAS has nothing to time.
    if (vm.kind == OpKind::Embedding) continue;
    auto it = configs.find(vertex.name);
    if (it == configs.end())
      throw InputError(source + ": no layer '" + vertex.name + "' (is the strategy for graph '" + graph.name + "'?)");
    const std::vector<int32_t>& config = it->second;
    if (config.size() != vm.domain.size())
      throw InputError(source + ": layer '" + vertex.name + "': field 'config': expected " +
                       std::to_string(vm.domain.size()) + " split counts (dims \"" + vm.letters + "\"), got " +
                       std::to_string(config.size()));
    for (size_t d = 0; d < config.size(); ++d)
      if (config[d] > vm.domain[d])
        throw InputError(source + ": layer '" + vertex.name + "': field 'config': split " + std::to_string(config[d]) +
                         " of dim '" + vm.letters.substr(d, 1) + "' exceeds its extent " + std::to_string(vm.domain[d]));
    ValidationLayer layer;
    layer.name = vertex.name;
    layer.config = config;
    layer.shape = gemm_shape(vm, config.data());
    layer.gemms = training_gemms(layer.shape);
    // The model's own price: Bpp instances in one batched kernel.
    for (size_t g = 0; g < 3; ++g) layer.predicted[g] = model.gemm_seconds(layer.gemms[g], layer.shape.batch);
    plan.push_back(std::move(layer));
  }
  return plan;
}

}  // namespace pase
