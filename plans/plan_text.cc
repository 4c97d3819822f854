#include "plans/plan_text.h"

#include "base/json_text.h"
#include "plans/layout_text.h"

namespace pase {
namespace {

void append_axis_names(std::string& out, const std::vector<int>& axes, const Mesh& mesh) {
  out += '[';
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, mesh.axes[static_cast<size_t>(axes[i])]);
  }
  out += ']';
}

// {"spec": [...], "jax": "P(...)", "hlo": "{...}", "dtensor": [...]} (docs/plans.md).
void append_layout(std::string& out, const AxisSpec& spec, const Mesh& mesh) {
  out += "{\"spec\":[";
  for (size_t t = 0; t < spec.size(); ++t) {
    if (t) out += ',';
    append_axis_names(out, spec[t], mesh);
  }
  out += "],\"jax\":";
  append_json_string(out, jax_partition_spec(spec, mesh));
  out += ",\"hlo\":";
  append_json_string(out, hlo_sharding(spec, mesh));
  out += ",\"dtensor\":";
  DtensorLayout dtensor = dtensor_placements(spec, mesh);
  if (dtensor.placements) {
    append_json_array(out, *dtensor.placements);
  } else {
    out += "null,\"dtensor_note\":";
    append_json_string(out, dtensor.note);
  }
  out += '}';
}

// "checkpoint": the weight on the shape its checkpoint holds it in.
void append_checkpoint(std::string& out, const CheckpointView& view, const Mesh& mesh) {
  out += ",\"checkpoint\":{\"shape\":";
  append_json_array(out, view.shape);
  out += ",\"merges\":[";
  for (size_t c = 0; c < view.merges.size(); ++c) {
    if (c) out += ',';
    append_json_array(out, view.merges[c]);
  }
  out += "],\"dims\":";
  append_json_array(out, view.dims);
  out += ",\"split\":";
  append_json_array(out, view.split);
  out += ",\"layout\":";
  if (view.spec) {
    append_layout(out, *view.spec, mesh);
  } else {
    out += "null,\"note\":";
    append_json_string(out, view.note);
  }
  out += '}';
}

}  // namespace

void append_mesh(std::string& out, const Mesh& mesh) {
  out += "{\"shape\":";
  append_json_array(out, mesh.shape);
  out += ",\"axes\":";
  append_json_array(out, mesh.axes);
  out += ",\"devices_per_node\":";
  append_json_number(out, mesh.node_size());
  out += '}';
}

void append_stage_meshes(std::string& out, const std::vector<PlanStage>& stages) {
  out += '[';
  for (size_t k = 0; k < stages.size(); ++k) {
    out += k ? ",{\"stage\":" : "{\"stage\":";
    append_json_number(out, static_cast<int64_t>(k));
    out += ",\"first_device\":";
    append_json_number(out, stages[k].first_device);
    out += ",\"mesh\":";
    append_mesh(out, stages[k].mesh);
    out += ",\"realized_cost\":";
    append_json_number(out, stages[k].realized_cost);
    out += ",\"assignment_proof\":";
    append_json_string(out, stages[k].assignment_proof);
    out += '}';
  }
  out += ']';
}

void append_mesh_axes(std::string& out, const PlannedLayer& layer, const Mesh& mesh) {
  out += '{';
  for (size_t d = 0; d < layer.dims.size(); ++d) {
    if (d) out += ',';
    append_json_string(out, std::string(1, layer.dims[d]));
    out += ':';
    append_axis_names(out, layer.mesh_axes[d], mesh);
  }
  out += '}';
}

void append_tensor_plan(std::string& out, const PlannedTensor& tensor, const Mesh& mesh, bool is_weight, bool with_dims) {
  if (with_dims) {
    out += ",\"dims\":";
    append_json_array(out, tensor.dims);
  }
  out += ",\"layout\":";
  append_layout(out, tensor.spec, mesh);
  if (tensor.from_stage && tensor.model_words && tensor.realized_words) {
    out += ",\"send\":{\"from_stage\":";
    append_json_number(out, int64_t{*tensor.from_stage});
    out += ",\"model_words\":";
    append_json_number(out, *tensor.model_words);
    out += ",\"realized_words\":";
    append_json_number(out, *tensor.realized_words);
    out += '}';
  } else if (tensor.model_words && tensor.realized_words) {
    out += ",\"redistribution\":{\"model_words\":";
    append_json_number(out, *tensor.model_words);
    out += ",\"realized_words\":";
    append_json_number(out, *tensor.realized_words);
    out += '}';
  }
  if (is_weight) {
    out += ",\"grad_allreduce_axes\":";
    append_axis_names(out, tensor.grad_allreduce_axes, mesh);
    if (tensor.checkpoint) append_checkpoint(out, *tensor.checkpoint, mesh);
  }
}

}  // namespace pase
