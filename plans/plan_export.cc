#include "plans/plan_export.h"

#include <set>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_text.h"
#include "plans/layout_text.h"
#include "plans/tied_weights.h"

namespace pase {
namespace {

using json = nlohmann::ordered_json;

// The device ids nested as the mesh's array (row-major, last axis fastest).
json device_array(const Mesh& mesh, size_t axis, int64_t first) {
  json level = json::array();
  int64_t stride = 1;
  for (size_t a = axis + 1; a < mesh.shape.size(); ++a) stride *= mesh.shape[a];
  for (int64_t i = 0; i < mesh.shape[axis]; ++i) {
    int64_t id = first + i * stride;
    level.push_back(axis + 1 == mesh.shape.size() ? json(id) : device_array(mesh, axis + 1, id));
  }
  return level;
}

struct Layout {
  json value;
  std::string note;  // dtensor: why value is null
};

Layout layout_of(const AxisSpec& spec, const Mesh& mesh, ExportFramework framework) {
  switch (framework) {
    case ExportFramework::Jax: {
      json entries = json::array();
      for (const std::vector<int>& axes : spec) {
        if (axes.empty()) {
          entries.push_back(nullptr);
        } else if (axes.size() == 1) {
          entries.push_back(mesh.axes[axes[0]]);
        } else {
          json names = json::array();
          for (int axis : axes) names.push_back(mesh.axes[axis]);
          entries.push_back(std::move(names));
        }
      }
      return {std::move(entries), ""};
    }
    case ExportFramework::Dtensor: {
      DtensorLayout layout = dtensor_placements(spec, mesh);
      if (!layout.placements) return {json(nullptr), layout.note};
      return {json(*layout.placements), ""};
    }
    case ExportFramework::Hlo:
      return {json(hlo_sharding(spec, mesh)), ""};
  }
  return {json(nullptr), ""};
}

// The layout a framework holds the weight in: on its checkpoint's shape
// where the graph declares it in more dimensions and the layout carries over.
const AxisSpec& held_spec(const PlannedTensor& weight) {
  return weight.checkpoint && weight.checkpoint->spec ? *weight.checkpoint->spec : weight.spec;
}

// "weight_shapes": per weight, the shape its layout is on; where the graph
// declares it in more dimensions than the checkpoint, how the two relate.
json weight_shape_entry(const PlannedTensor& weight) {
  json entry = json::object();
  if (!weight.checkpoint) {
    entry["shape"] = weight.shape;
    return entry;
  }
  const CheckpointView& view = *weight.checkpoint;
  if (view.spec) {
    entry["shape"] = view.shape;
    entry["graph_shape"] = weight.shape;
  } else {
    entry["shape"] = weight.shape;
    entry["checkpoint_shape"] = view.shape;
  }
  entry["merges"] = view.merges;
  if (!view.spec) entry["note"] = view.note;
  return entry;
}

const char* framework_name(ExportFramework framework) {
  switch (framework) {
    case ExportFramework::Jax: return "jax";
    case ExportFramework::Dtensor: return "dtensor";
    case ExportFramework::Hlo: return "hlo";
  }
  return "";
}

// "weight_reshards" (only where a plan has some): per later reader of a
// weight in another layout, the layout it reads the weight in.
void append_weight_reshards(std::string& out, const PlanFile& file, ExportFramework framework) {
  const std::vector<WeightReshard> reshards = weight_reshards(file.plan);
  for (const WeightReshard& r : reshards)
    if (r.reshaped) throw InputError(reshaped_weight_message(file.plan, r, file.source));
  if (reshards.empty()) return;
  append_json_top_level_key(out, "weight_reshards");
  out += "[";
  for (size_t i = 0; i < reshards.size(); ++i) {
    const WeightReshard& r = reshards[i];
    Layout layout = layout_of(held_spec(file.plan.layers[r.reader].weights[r.reader_weight]), file.plan.mesh, framework);
    json entry = json::object();
    entry["weight"] = r.weight;
    entry["layer"] = file.plan.layers[r.reader].name;
    entry["held_by"] = file.plan.layers[r.holder].name;
    entry["layout"] = std::move(layout.value);
    entry["realized_words"] = static_cast<int64_t>(r.realized_words);  // a count of elements
    if (!layout.note.empty()) entry["note"] = layout.note;
    out += (i ? ",\n    " : "\n    ") + entry.dump();
  }
  out += "\n  ]";
}

}  // namespace

std::optional<ExportFramework> export_framework(const std::string& name) {
  if (name == "jax") return ExportFramework::Jax;
  if (name == "dtensor") return ExportFramework::Dtensor;
  if (name == "hlo") return ExportFramework::Hlo;
  return std::nullopt;
}

std::string export_plan(const PlanFile& file, ExportFramework framework, int64_t max_devices) {
  const Mesh& mesh = file.plan.mesh;
  // device_ids lists every device: a few bytes of "shape": [2^62] would ask
  // for more memory than any machine has (2^24 devices took 5 s and 1.7 GiB).
  if (mesh.devices() > max_devices)
    throw LimitError({"max_devices", "the device limit of the export",
                      file.source + ": the plan's mesh has " + std::to_string(mesh.devices()) +
                          " devices, above the limit of " + std::to_string(max_devices) + " (",
                      "); the export lists every device's id"});
  std::string out;
  auto field = [&out](const char* key) { append_json_top_level_key(out, key); };
  field("format");
  append_json_string(out, "pase-export");
  field("version");
  append_json_number(out, int64_t{1});
  field("framework");
  append_json_string(out, framework_name(framework));
  field("graph");
  append_json_string(out, file.graph);
  field("mesh");
  json mesh_json = json::object();
  mesh_json["shape"] = mesh.shape;
  mesh_json["axis_names"] = mesh.axes;
  mesh_json["device_ids"] = device_array(mesh, 0, 0);
  mesh_json["devices_per_node"] = mesh.node_size();
  out += mesh_json.dump();

  json notes = json::array();
  // Weights by name, in the order layers first read them, each held in its
  // first reader's layout; a later reader in another layout reshards it.
  std::set<std::string> seen;
  std::string weights, shapes;
  for (const PlannedLayer& layer : file.plan.layers)
    for (const PlannedTensor& weight : layer.weights) {
      if (!seen.insert(weight.name).second) continue;
      Layout layout = layout_of(held_spec(weight), mesh, framework);
      weights += weights.empty() ? "\n    " : ",\n    ";
      append_json_string(weights, weight.name);
      weights += ": " + layout.value.dump();
      if (!layout.note.empty()) notes.push_back(json{{"weight", weight.name}, {"note", layout.note}});
      shapes += shapes.empty() ? "\n    " : ",\n    ";
      append_json_string(shapes, weight.name);
      shapes += ": " + weight_shape_entry(weight).dump();
    }
  field("weights");
  out += weights.empty() ? "{}" : "{" + weights + "\n  }";
  field("weight_shapes");
  out += shapes.empty() ? "{}" : "{" + shapes + "\n  }";

  std::string outputs;
  for (const PlannedLayer& layer : file.plan.layers) {
    json list = json::array();
    for (size_t k = 0; k < layer.outputs.size(); ++k) {
      Layout layout = layout_of(layer.outputs[k].spec, mesh, framework);
      list.push_back(std::move(layout.value));
      if (!layout.note.empty())
        notes.push_back(json{{"output", layer.name}, {"index", k}, {"note", layout.note}});
    }
    outputs += outputs.empty() ? "\n    " : ",\n    ";
    append_json_string(outputs, layer.name);
    outputs += ": " + list.dump();
  }
  field("outputs");
  out += outputs.empty() ? "{}" : "{" + outputs + "\n  }";

  append_weight_reshards(out, file, framework);

  if (framework == ExportFramework::Dtensor) {
    field("notes");
    if (notes.empty()) {
      out += "[]";
    } else {
      out += "[";
      for (size_t i = 0; i < notes.size(); ++i) out += (i ? ",\n    " : "\n    ") + notes[i].dump();
      out += "\n  ]";
    }
  }
  out += "\n}\n";
  return out;
}

}  // namespace pase
