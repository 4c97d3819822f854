#include "plans/stage_plans.h"

#include <algorithm>

namespace pase {

PlanFile stage_plan_file(const PlanFile& file, size_t k) {
  PlanFile part;
  part.source = file.source;
  part.graph = file.graph;
  const PlanStage& stage = file.plan.stages.at(k);
  part.devices = stage.mesh.devices();
  part.plan.mesh = stage.mesh;
  part.plan.assignment_proof = stage.assignment_proof;
  part.plan.realized_total_cost = stage.realized_cost;
  for (size_t l = 0; l < file.plan.layers.size(); ++l) {
    if (static_cast<size_t>(file.plan.layers[l].stage) != k) continue;
    part.plan.layers.push_back(file.plan.layers[l]);
    part.plan.layers.back().stage = 0;
    if (l < file.written.size()) part.written.push_back(file.written[l]);
  }
  return part;
}

int64_t largest_tile(const Shape& shape, const AxisSpec& spec, const Mesh& mesh) {
  int64_t elements = 1;
  for (size_t t = 0; t < shape.size(); ++t) {
    int64_t pieces = 1;
    for (int axis : spec[t]) pieces *= mesh.shape[static_cast<size_t>(axis)];
    elements *= (shape[t] + pieces - 1) / pieces;
  }
  return elements;
}

void mark_sends(Plan& plan) {
  for (PlannedLayer& layer : plan.layers) {
    for (PlannedTensor& input : layer.inputs) {
      if (input.model_words) continue;  // redistributed inside the stage
      const std::optional<TensorSourceRef> producer = find_producer(plan, input.name);
      if (!producer) continue;  // a tensor of the graph
      const int from = plan.layers[producer->layer].stage;
      if (from == layer.stage) continue;  // another stage: an earlier one, or, interleaved, any
      const Mesh& mesh = plan.mesh_of(layer);
      const int64_t pairs = std::min(plan.stages[static_cast<size_t>(from)].mesh.devices(), mesh.devices());
      input.from_stage = from;
      input.model_words = static_cast<double>(checked_product(input.shape).value_or(0)) / static_cast<double>(pairs);
      input.realized_words = static_cast<double>(largest_tile(input.shape, input.spec, mesh));
    }
  }
}

}  // namespace pase
