#pragma once
// Writing a plan's fields into a strategy file (docs/plans.md): the mesh, a
// layer's mesh axes, and each tensor's dims, layout and redistribution
// record, as JSON text in the strategy writer's compact style.
#include <string>

#include "plans/plan.h"

namespace pase {

/// {"shape":[…],"axes":[…],"devices_per_node":K} (devices_per_node: Mesh::node_size()).
void append_mesh(std::string& out, const Mesh& mesh);

/// Pipeline plans: [{"stage":0,"first_device":0,"mesh":{…},"realized_cost":t,"assignment_proof":"…"},…].
void append_stage_meshes(std::string& out, const std::vector<PlanStage>& stages);

/// {"b":[],"n":["x0"],…}: each letter of the layer's dims with its axes' names.
void append_mesh_axes(std::string& out, const PlannedLayer& layer, const Mesh& mesh);

/// The members a planned tensor adds after its split: ,"dims":[…],"layout":{spec, jax, hlo, dtensor},
/// then ,"redistribution":{…} for inputs read from a layer of the stage (,"send":{"from_stage":k,…}
/// for one sent from an earlier stage) and ,"grad_allreduce_axes":[…] for weights.
/// `with_dims` false: the caller has written "dims".
void append_tensor_plan(std::string& out, const PlannedTensor& tensor, const Mesh& mesh, bool is_weight,
                        bool with_dims = true);

}  // namespace pase
