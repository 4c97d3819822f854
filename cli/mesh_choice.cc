#include "cli/mesh_choice.h"

#include <chrono>
#include <exception>
#include <limits>
#include <utility>

#include "base/byte_size.h"
#include "base/error.h"
#include "cli/exit_status.h"
#include "cli/progress_line.h"
#include "cli/text_output.h"
#include "plans/mesh.h"
#include "plans/mesh_pricing.h"
#include "solve/outcome.h"

namespace pase {
MeshChoice choose_mesh(const GraphFileV1& file, const std::string& path, const std::vector<int64_t>& counts,
                       const ModelMaker& make_model, SolveRequest request, const std::vector<Mesh>& meshes) {
  MeshChoice choice;
  std::exception_ptr first_error;
  request.search_layouts = true;
  for (const Mesh& mesh : meshes) {
    MeshTrial trial;
    trial.mesh = mesh;
    request.mesh = mesh;
    if (choice.search.best && std::chrono::steady_clock::now() >= request.cap_search.deadline) {
      trial.out_of_time = true;
      choice.trials.push_back(std::move(trial));
      continue;
    }
    set_progress_stage("mesh " + mesh_shape_words(mesh) + " (" + std::to_string(choice.trials.size() + 1) + " of " +
                       std::to_string(meshes.size()) + ")");
    try {
      const bool have_best = choice.search.best && choice.trials[choice.chosen].solved;
      const double incumbent =
          have_best ? choice.trials[choice.chosen].cost : std::numeric_limits<double>::infinity();
      TrainingSearch search = solve_training(file, path, counts, make_model, request, incumbent);
      if (!search.best || (search.bounded_out() && !search.best->outcome.solved())) {  // nothing here beats the best found
        trial.bounded_out = true;
        trial.bound = search.least_bound;
        choice.trials.push_back(std::move(trial));
        continue;
      }
      const SolveOutcome& out = search.best->outcome;
      trial.solved = out.solved();
      if (trial.solved) {
        trial.cost = out.solution.cost;
        trial.bytes = out.bytes.total();
      } else {
        trial.refused = out.capped ? no_fit_words(*out.capped) : "no strategy";
      }
      const bool best = trial.solved && (!choice.search.best || !choice.trials[choice.chosen].solved ||
                                         trial.cost < choice.trials[choice.chosen].cost);
      if (best || !choice.search.best) {
        choice.search = std::move(search);
        choice.chosen = choice.trials.size();
      }
    } catch (const LimitError& error) {
      trial.refused = error.what();
      if (!first_error) first_error = std::current_exception();
    } catch (const ResourceError& error) {
      trial.refused = error.what();
      if (!first_error) first_error = std::current_exception();
    }
    choice.trials.push_back(std::move(trial));
  }
  if (!choice.search.best) std::rethrow_exception(first_error);
  return choice;
}

std::string mesh_choice_words(const MeshChoice& choice, const std::string& unit) {
  std::string text;
  for (size_t i = 0; i < choice.trials.size(); ++i) {
    const MeshTrial& trial = choice.trials[i];
    text += "mesh search: " + mesh_shape_words(trial.mesh) + " ";
    if (trial.out_of_time)
      text += "not searched: the time limit had passed (the answer is the best of the meshes searched)";
    else if (trial.bounded_out)
      text += "bounded out: nothing on it costs less than " + format_total(trial.bound, unit) + " " + unit +
              ", no better than a mesh before it";
    else if (trial.solved)
      text += format_total(trial.cost, unit) + " " + unit + ", " + format_gib(trial.bytes) + " GiB per device" +
              (i == choice.chosen ? " (chosen)" : "");
    else
      text += "gave nothing: " + trial.refused;
    text += "\n";
  }
  return text;
}

double placed_cost(const SolveOutcome& out) {
  return out.placed ? out.placed->plan.realized_total_cost : out.solution.cost;
}

void price_on_searched_plan(SolveRequest& request, const StrategyDocument& file, int64_t devices,
                            const CostModel& model) {
  if (!file.plan || file.plan->assignment_proof != "searched" || file.plan->mesh.devices() != devices ||
      !prices_links(model))
    return;
  request.mesh = file.plan->mesh;
  request.search_layouts = true;
}

void require_links_for_mesh_search(const CostModel& model) {
  if (!prices_links(model) || model.devices_per_node() <= 0)
    throw UsageError("--mesh search: needs a model of the machine's links (--cost-model calibrated --machine NAME)");
}

bool stages_on_layouts(const std::string& mesh_option, const CostModel& model, bool no_plan) {
  return mesh_option == "auto" || (mesh_option.empty() && prices_links(model) && !no_plan);
}

MeshPlan mesh_plan(const std::string& text, int64_t p, const CostModel& model) {
  MeshPlan plan;
  if (text == "search") {
    require_links_for_mesh_search(model);
    plan.search = plan.search_layouts = true;
    plan.meshes = node_meshes(p, model.devices_per_node());
    return plan;
  }
  try {
    plan.meshes.push_back(parse_mesh(text, p, model.devices_per_node()));
  } catch (const OptionError& error) {  // a command-line mistake, spelled as the flag
    throw UsageError(error.words().with("--mesh"));
  }
  // The paper's model is device-order-free: its optimum is placed after.
  plan.search_layouts = prices_links(model);
  return plan;
}

std::unique_ptr<TrainingSolve> solve_on_meshes(const GraphFileV1& file, const std::string& path,
                                               const std::vector<int64_t>& counts, const ModelMaker& make_model,
                                               const SolveRequest& request, const MeshPlan& plan, Mesh& mesh,
                                               std::string* mesh_words) {
  if (plan.search) {
    MeshChoice choice = choose_mesh(file, path, counts, make_model, request, plan.meshes);
    mesh = choice.trials[choice.chosen].mesh;
    if (mesh_words) *mesh_words = mesh_choice_words(choice, choice.search.best->outcome.tables.unit);
    return std::move(choice.search.best);
  }
  SolveRequest on = request;
  on.mesh = plan.meshes.front();
  on.search_layouts = plan.search_layouts;
  mesh = plan.meshes.front();
  return std::move(solve_training(file, path, counts, make_model, on).best);
}

}  // namespace pase
