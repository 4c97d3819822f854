#include "stages/pipeline_plan.h"

#include <algorithm>

#include "plans/build_plan.h"
#include "plans/mesh.h"
#include "plans/mesh_search.h"
#include "plans/stage_plans.h"
#include "stages/pipeline_document.h"

namespace pase {
namespace {

// "lower_bound" when every stage says so; "none" when any stage's placement
// is unproven; "per_stage" when each is proven, not all the same way.
std::string joint_proof(const std::vector<PlanStage>& stages) {
  std::string proof = stages.front().assignment_proof;
  for (const PlanStage& stage : stages) {
    if (stage.assignment_proof == "none") return "none";
    if (stage.assignment_proof != proof) proof = "per_stage";
  }
  return proof;
}

}  // namespace

PipelinePlacement place_pipeline(const Graph& graph, const PipelineOutcome& outcome, const PipelineRequest& request,
                                 int64_t devices_per_node) {
  PipelinePlacement placement;
  Plan plan;
  plan.assignment_exact = true;
  const int64_t m = request.stage.memory.micro_batches;
  std::vector<double> t, t_least, w;
  PlanOptions options;
  options.threads = std::max(1, request.stage.solve.dp.threads);
  options.max_work = request.stage.placement_work;
  for (size_t k = 0; k < outcome.stages.size(); ++k) {
    const PipelineStage& stage = outcome.stages[k];
    const StageSolve& solved = *stage.solve;
    const Graph named = solved_stage_graph(graph, stage);
    const Mesh mesh = default_mesh(stage.devices, devices_per_node);
    const std::string reason = unrealizable_reason(named, solved.outcome.tables, solved.outcome.solution.choice, mesh);
    if (!reason.empty()) {
      placement.unavailable = "stage " + std::to_string(k) + ": " + reason;
      return placement;
    }
    TrainingSetup setup = request.stage.memory;
    setup.activations_in_flight = solved.in_flight;
    const std::unique_ptr<CostModel> model = request.make_model(setup, stage.devices);
    // Priced on its mesh's layouts (a model that prices links): the plan is the strategy as priced.
    PlanResult placed =
        solved.outcome.layouts.empty()
            ? build_plan(named, solved.outcome.tables, solved.outcome.solution.choice, mesh, *model, options)
            : plan_from_layouts(named, solved.outcome.tables, solved.outcome.layouts, solved.outcome.solution.choice,
                                mesh, *model);
    // What the layouts add to (or take from) the stage's M t + w is M times what they add to t.
    const double per_micro_batch = static_cast<double>(m);
    t.push_back(stage.value.t + (placed.plan.realized_total_cost - solved.step_cost) / per_micro_batch);
    t_least.push_back(stage.value.t + (placed.plan.realized_total_lower_bound - solved.step_cost) / per_micro_batch);
    w.push_back(stage.value.w);
    plan.stages.push_back({stage.first_device, mesh, t.back(), proof_name(placed.proof)});
    plan.assignment_exact = plan.assignment_exact && placed.exact;
    plan.candidates_per_layer = std::max(plan.candidates_per_layer, placed.plan.candidates_per_layer);
    for (PlannedLayer& layer : placed.plan.layers) {
      layer.stage = static_cast<int>(k);
      plan.layers.push_back(std::move(layer));
    }
  }
  sort_in_graph_order(graph, plan.layers);  // as the document lists them
  plan.assignment_proof = joint_proof(plan.stages);
  plan.realized_total_cost = pipeline_step_time(t, w, m, request.schedule);
  plan.realized_total_lower_bound = pipeline_step_time(t_least, w, m, request.schedule);
  mark_sends(plan);
  placement.plan = std::move(plan);
  return placement;
}

}  // namespace pase
