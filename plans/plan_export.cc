#include "plans/plan_export.h"

#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_text.h"
#include "plans/layout_text.h"
#include "plans/stage_plans.h"
#include "plans/tied_weights.h"

namespace pase {
namespace {

using json = nlohmann::ordered_json;

// Writes `"key": ` as a member of the document or of a stage's object.
using FieldWriter = std::function<void(const char* key)>;

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
void append_weight_reshards(std::string& out, const PlanFile& file, ExportFramework framework,
                            const std::string& indent, const FieldWriter& field) {
  const std::vector<WeightReshard> reshards = weight_reshards(file.plan);
  for (const WeightReshard& r : reshards)
    if (r.reshaped) throw InputError(reshaped_weight_message(file.plan, r, file.source));
  if (reshards.empty()) return;
  field("weight_reshards");
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
    out += (i ? ",\n" : "\n") + indent + "  " + entry.dump();
  }
  out += "\n" + indent + "]";
}

}  // namespace

std::optional<ExportFramework> export_framework(const std::string& name) {
  if (name == "jax") return ExportFramework::Jax;
  if (name == "dtensor") return ExportFramework::Dtensor;
  if (name == "hlo") return ExportFramework::Hlo;
  return std::nullopt;
}

namespace {

// The mesh, every weight's and layer output's layout, the weight reshards and
// (dtensor) the notes of one mesh's plan, whose devices begin at `first_device`:
// the whole document's fields, or one stage's.
void append_mesh_layouts(std::string& out, const PlanFile& file, ExportFramework framework, int64_t first_device,
                         const std::string& indent, const FieldWriter& field) {
  const Mesh& mesh = file.plan.mesh;
  const std::string item = "\n" + indent + "  ";
  field("mesh");
  json mesh_json = json::object();
  mesh_json["shape"] = mesh.shape;
  mesh_json["axis_names"] = mesh.axes;
  mesh_json["device_ids"] = device_array(mesh, 0, first_device);
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
      weights += weights.empty() ? item : "," + item;
      append_json_string(weights, weight.name);
      weights += ": " + layout.value.dump();
      if (!layout.note.empty()) notes.push_back(json{{"weight", weight.name}, {"note", layout.note}});
      shapes += shapes.empty() ? item : "," + item;
      append_json_string(shapes, weight.name);
      shapes += ": " + weight_shape_entry(weight).dump();
    }
  field("weights");
  out += weights.empty() ? "{}" : "{" + weights + "\n" + indent + "}";
  field("weight_shapes");
  out += shapes.empty() ? "{}" : "{" + shapes + "\n" + indent + "}";

  std::string outputs;
  for (const PlannedLayer& layer : file.plan.layers) {
    json list = json::array();
    for (size_t k = 0; k < layer.outputs.size(); ++k) {
      Layout layout = layout_of(layer.outputs[k].spec, mesh, framework);
      list.push_back(std::move(layout.value));
      if (!layout.note.empty())
        notes.push_back(json{{"output", layer.name}, {"index", k}, {"note", layout.note}});
    }
    outputs += outputs.empty() ? item : "," + item;
    append_json_string(outputs, layer.name);
    outputs += ": " + list.dump();
  }
  field("outputs");
  out += outputs.empty() ? "{}" : "{" + outputs + "\n" + indent + "}";

  append_weight_reshards(out, file, framework, indent, field);

  if (framework == ExportFramework::Dtensor) {
    field("notes");
    if (notes.empty()) {
      out += "[]";
    } else {
      out += "[";
      for (size_t i = 0; i < notes.size(); ++i) out += (i ? "," : "") + item + notes[i].dump();
      out += "\n" + indent + "]";
    }
  }
}

// "sends" of a pipeline stage: each input an earlier stage makes, with the
// stage it comes from and the layout the receiving layer needs it in.
void append_sends(std::string& out, const PlanFile& part, ExportFramework framework, const std::string& indent,
                  const FieldWriter& field) {
  std::string sends;
  for (const PlannedLayer& layer : part.plan.layers)
    for (const PlannedTensor& input : layer.inputs) {
      if (!input.from_stage) continue;
      json entry = json::object();
      entry["tensor"] = input.name;
      entry["layer"] = layer.name;
      entry["from_stage"] = *input.from_stage;
      entry["shape"] = input.shape;
      Layout layout = layout_of(input.spec, part.plan.mesh, framework);
      entry["layout"] = std::move(layout.value);
      if (!layout.note.empty()) entry["note"] = layout.note;
      sends += (sends.empty() ? "\n" : ",\n") + indent + "  " + entry.dump();
    }
  field("sends");
  out += sends.empty() ? "[]" : "[" + sends + "\n" + indent + "]";
}

void check_device_limit(const PlanFile& file, int64_t devices, int64_t max_devices) {
  // device_ids lists every device: a few bytes of "shape": [2^62] would ask
  // for more memory than any machine has (2^24 devices took 5 s and 1.7 GiB).
  if (devices > max_devices)
    throw LimitError({"max_devices", "the device limit of the export",
                      file.source + ": the plan's mesh has " + std::to_string(devices) +
                          " devices, above the limit of " + std::to_string(max_devices) + " (",
                      "); the export lists every device's id"});
}

}  // namespace

std::string export_plan(const PlanFile& file, ExportFramework framework, int64_t max_devices) {
  int64_t devices = file.plan.mesh.devices();
  if (!file.plan.stages.empty()) devices = file.plan.stages.back().first_device + file.plan.stages.back().mesh.devices();
  check_device_limit(file, devices, max_devices);
  std::string out;
  const FieldWriter field = [&out](const char* key) { append_json_top_level_key(out, key); };
  field("format");
  append_json_string(out, "pase-export");
  field("version");
  append_json_number(out, int64_t{1});
  field("framework");
  append_json_string(out, framework_name(framework));
  field("graph");
  append_json_string(out, file.graph);
  if (file.plan.stages.empty()) {
    append_mesh_layouts(out, file, framework, 0, "  ", field);
    out += "\n}\n";
    return out;
  }
  // A pipeline: each stage's own mesh, layouts and the sends it receives.
  field("stages");
  out += "[";
  for (size_t k = 0; k < file.plan.stages.size(); ++k) {
    const PlanFile part = stage_plan_file(file, k);
    bool first = true;
    const FieldWriter member = [&out, &first](const char* key) {
      out += first ? "{\n      " : ",\n      ";
      first = false;
      append_json_string(out, key);
      out += ": ";
    };
    out += k ? ",\n    " : "\n    ";
    member("stage");
    append_json_number(out, static_cast<int64_t>(k));
    member("first_device");
    append_json_number(out, file.plan.stages[k].first_device);
    append_mesh_layouts(out, part, framework, file.plan.stages[k].first_device, "      ", member);
    append_sends(out, part, framework, "      ", member);
    out += "\n    }";
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace pase
