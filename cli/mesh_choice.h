#pragma once
// `--mesh search` (docs/plans.md, "Choosing the mesh"): the meshes that fit
// the machine's nodes (plans/mesh.h, node_meshes), each solved with its
// layouts searched (every collective priced over the links it crosses), the
// cheapest kept, with what every mesh gave.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/training_solve.h"
#include "plans/plan.h"

namespace pase {

/// One mesh tried: its cost and bytes per device, or why it gave nothing.
struct MeshTrial {
  Mesh mesh;
  bool solved = false;
  double cost = 0;
  uint64_t bytes = 0;
  std::string refused;  ///< nothing fits under the cap, or the search was refused; empty when solved
  /// Not searched to the end: a lower bound on every strategy it has
  /// (`bound`) already reached a cost found on an earlier mesh.
  bool bounded_out = false;
  double bound = 0;
  /// Not searched: the time limit had passed with an answer on an earlier
  /// mesh (nothing bounds this one: the answer is the best of those searched).
  bool out_of_time = false;
};

struct MeshChoice {
  TrainingSearch search;          ///< the chosen mesh's solve
  std::vector<MeshTrial> trials;  ///< every mesh, in the order tried
  size_t chosen = 0;              ///< index into trials
};

/// Solves `request` on every mesh of `meshes` (search_layouts on each) and
/// keeps the cheapest answer; under a cap a mesh (or a micro-batch count of
/// it) whose optimum without the cap already costs at least the best found
/// is not searched. When no mesh gives an answer, the first mesh's error
/// propagates.
[[nodiscard]] MeshChoice choose_mesh(const GraphFileV1& file, const std::string& path, const std::vector<int64_t>& counts,
                                     const ModelMaker& make_model, SolveRequest request, const std::vector<Mesh>& meshes);

/// "mesh search: dp=8 x tp=8 15.68 s, 74.74 GiB (chosen); dp=16 x tp=4 ...": one line per mesh.
[[nodiscard]] std::string mesh_choice_words(const MeshChoice& choice, const std::string& unit);

/// A strategy's cost as placed: its plan's realized cost (on a mesh whose
/// layouts were searched, the cost the search priced); unplaced, its cost.
[[nodiscard]] double placed_cost(const SolveOutcome& out);

/// What `--mesh` asks of a command that solves at several device counts
/// (compare, batch), at one of them: every node mesh (`search`), or the one
/// mesh the text spells.
struct MeshPlan {
  bool search = false;
  std::vector<Mesh> meshes;
  /// Each layer's axes searched with its configuration (SolveRequest::search_layouts):
  /// under `search`, and on a mesh the user shaped when the model knows the links.
  bool search_layouts = false;
};

/// A strategy file's plan whose layouts were searched (on `devices`, under
/// a model that knows the links) is priced as that search priced it: `request`
/// on the plan's mesh, each layer's configuration on its axes; any other file
/// leaves `request` as it is.
void price_on_searched_plan(SolveRequest& request, const StrategyDocument& file, int64_t devices,
                            const CostModel& model);

/// UsageError unless `model` knows the machine's links, as `--mesh search` needs.
void require_links_for_mesh_search(const CostModel& model);

/// Whether pipeline stages are priced each on its default mesh's layouts:
/// with --mesh auto, and without --mesh where `model` prices links (unless
/// `no_plan`), as a solve without stages prices on its default mesh's
/// layouts: so that one stage is the solve without stages, the plan the
/// priced plan.
[[nodiscard]] bool stages_on_layouts(const std::string& mesh_option, const CostModel& model, bool no_plan = false);

/// --mesh TEXT at p devices on `model`'s machine (its devices per node); a
/// mesh that does not fit p, or `search` on a model that does not know the
/// links, is a command-line mistake (a UsageError naming --mesh).
[[nodiscard]] MeshPlan mesh_plan(const std::string& text, int64_t p, const CostModel& model);

/// `request` solved on the plan's meshes (search: choose_mesh, and its
/// lines in `mesh_words` when given): the cheapest solve, `mesh` set to where.
[[nodiscard]] std::unique_ptr<TrainingSolve> solve_on_meshes(const GraphFileV1& file, const std::string& path,
                                                             const std::vector<int64_t>& counts,
                                                             const ModelMaker& make_model, const SolveRequest& request,
                                                             const MeshPlan& plan, Mesh& mesh,
                                                             std::string* mesh_words = nullptr);

}  // namespace pase
