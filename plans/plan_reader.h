#pragma once
// Reading the plan of a `pase-strategy` file (docs/plans.md): the mesh, each
// layer's mesh axes, and each input, output and weight's dims, layout and
// redistribution record. The one reader of plans (`pase export`, `pase
// plan-check`). Structure is checked here, with one-line errors naming the
// file, the layer and the field; whether the layouts agree with the layers'
// mesh axes and with each other is plan-check's work (plans/plan_check.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plans/plan.h"

namespace pase {

/// A layout's framework texts as the file writes them (each absent if missing).
struct WrittenLayout {
  std::optional<std::string> jax, hlo;
  bool has_dtensor = false;
  std::optional<std::vector<std::string>> dtensor;  ///< nullopt: written as null
  std::optional<std::string> dtensor_note;
};

/// The texts of one layer's tensors, parallel to PlannedLayer's lists.
struct WrittenLayerLayouts {
  std::vector<WrittenLayout> inputs, outputs, weights;
};

struct PlanFile {
  std::string source;  ///< file name for messages
  std::string graph;
  std::optional<int64_t> devices;
  Plan plan;
  std::vector<WrittenLayerLayouts> written;  ///< per layer of plan.layers
};

/// Parses a strategy file and reads its plan; nullopt when the file has no
/// "mesh" (a strategy without a plan). Every malformed or inconsistent field
/// is an InputError "SOURCE: layer 'fc6': field 'mesh_axes.n[0]': ...":
/// mesh axes named twice or sizes whose product is not `devices`; a layer's
/// letters that mesh_axes leaves out or whose axes do not multiply to its
/// config entry; an axis under two letters or in two dimensions of a tensor;
/// an unknown axis name; a tensor's split that its spec does not make.
[[nodiscard]] std::optional<PlanFile> read_plan(const std::string& text, const std::string& source);

/// The layer output an input reads: the layer and output port that the
/// input's `tensor` ("conv1", "qkv:1") names, or nullopt for a tensor of the
/// graph (no layer makes it).
struct TensorSourceRef {
  size_t layer = 0;
  size_t port = 0;
};
[[nodiscard]] std::optional<TensorSourceRef> find_producer(const Plan& plan, const std::string& tensor);

}  // namespace pase
