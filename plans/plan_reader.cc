#include "plans/plan_reader.h"

#include <algorithm>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "base/json_document.h"
#include "base/json_reader.h"
#include "graphs/checkpoint_shapes.h"
#include "plans/checkpoint_layout.h"

namespace pase {
namespace {

std::string axis_list(const Mesh& mesh) {
  std::string names;
  for (size_t a = 0; a < mesh.axes.size(); ++a) names += (a ? ", " : "") + mesh.axes[a];
  return names;
}

std::string names_of(const std::vector<int>& axes, const Mesh& mesh) {
  std::string names = "[";
  for (size_t i = 0; i < axes.size(); ++i) names += (i ? ", " : "") + mesh.axes[axes[i]];
  return names + "]";
}

Mesh read_mesh(const JsonReader& field, const std::optional<int64_t>& devices) {
  field.expect_object();
  Mesh mesh;
  JsonReader shape = field.required("shape", "the size of each mesh axis");
  for (const JsonReader& size : shape.items("axis sizes")) mesh.shape.push_back(size.as_positive("axis size"));
  if (mesh.shape.empty()) shape.fail("expected at least one axis, got []");
  JsonReader axes = field.required("axes", "a name for each mesh axis");
  std::vector<JsonReader> names = axes.items("axis names");
  if (names.size() != mesh.shape.size())
    axes.fail("expected " + std::to_string(mesh.shape.size()) + " names (one per size in 'shape'), got " +
              std::to_string(names.size()));
  for (size_t a = 0; a < names.size(); ++a) {
    std::string name = names[a].as_string();
    if (name.empty()) names[a].fail("expected an axis name, got \"\"");
    auto same = std::find(mesh.axes.begin(), mesh.axes.end(), name);
    if (same != mesh.axes.end())
      names[a].fail("axis name '" + name + "' used twice (also axes[" + std::to_string(same - mesh.axes.begin()) + "])");
    mesh.axes.push_back(std::move(name));
  }
  std::optional<int64_t> product = checked_product(mesh.shape);
  if (!product) shape.fail("the axis sizes " + shape_to_string(mesh.shape) + " make more than 2^63 devices");
  if (devices && *product != *devices)
    shape.fail("the axis sizes " + shape_to_string(mesh.shape) + " make " + std::to_string(*product) +
               " devices, but 'devices' is " + std::to_string(*devices));
  if (auto f = field.optional("devices_per_node")) mesh.devices_per_node = f->as_non_negative();
  return mesh;
}

// "stage_meshes": each stage's mesh, in stage order, on the devices that
// follow the stage before's; together `devices`.
std::vector<PlanStage> read_stage_meshes(const JsonReader& field, const std::optional<int64_t>& devices) {
  std::vector<PlanStage> stages;
  int64_t next_device = 0;
  for (const JsonReader& entry : field.items("stages")) {
    entry.expect_object();
    const int64_t k = static_cast<int64_t>(stages.size());
    JsonReader stage = entry.required("stage");
    if (stage.as_non_negative() != k) stage.fail("expected " + std::to_string(k) + " (the stages in order)");
    PlanStage planned;
    JsonReader first = entry.required("first_device", "the stage's first device");
    planned.first_device = first.as_non_negative();
    if (planned.first_device != next_device)
      first.fail("expected " + std::to_string(next_device) + ", the device after the stage before's");
    planned.mesh = read_mesh(entry.required("mesh"), std::nullopt);
    if (auto f = entry.optional("realized_cost")) planned.realized_cost = f->as_number();
    if (auto f = entry.optional("assignment_proof")) planned.assignment_proof = f->as_string();
    next_device += planned.mesh.devices();
    if (next_device > (int64_t{1} << 40)) entry.fail("the stages' meshes make more than 2^40 devices");
    stages.push_back(std::move(planned));
  }
  if (stages.empty()) field.fail("expected at least one stage, got []");
  if (devices && next_device != *devices)
    field.fail("the stages' meshes make " + std::to_string(next_device) + " devices, but 'devices' is " +
               std::to_string(*devices));
  return stages;
}

/// Reads a list of mesh axis names into indices; `taken` (per axis, where it
/// already appears: "under letter 'n'", "" if nowhere) catches an axis used
/// twice, and records `here` for those read.
std::vector<int> read_axes(const JsonReader& list, const Mesh& mesh, std::vector<std::string>& taken,
                           const std::string& here) {
  std::vector<int> axes;
  for (const JsonReader& item : list.items("mesh axis names")) {
    std::string name = item.as_string();
    auto found = std::find(mesh.axes.begin(), mesh.axes.end(), name);
    if (found == mesh.axes.end()) item.fail("unknown mesh axis '" + name + "' (the mesh's axes are " + axis_list(mesh) + ")");
    int axis = static_cast<int>(found - mesh.axes.begin());
    if (!taken[axis].empty()) item.fail("axis '" + name + "' is also " + taken[axis]);
    taken[axis] = here;
    axes.push_back(axis);
  }
  return axes;
}

std::string pieces_text(int64_t pieces) { return std::to_string(pieces) + (pieces == 1 ? " piece" : " pieces"); }

int64_t axes_size(const std::vector<int>& axes, const Mesh& mesh) {
  int64_t size = 1;
  for (int axis : axes) size *= mesh.shape[axis];
  return size;
}

WrittenLayout read_written(const JsonReader& layout) {
  WrittenLayout written;
  if (auto f = layout.optional("jax")) written.jax = f->as_string();
  if (auto f = layout.optional("hlo")) written.hlo = f->as_string();
  if (auto f = layout.optional("dtensor")) {
    written.has_dtensor = true;
    if (!f->value().is_null()) {
      written.dtensor.emplace();
      for (const JsonReader& placement : f->items("placements")) written.dtensor->push_back(placement.as_string());
    }
  }
  if (auto f = layout.optional("dtensor_note")) written.dtensor_note = f->as_string();
  return written;
}

// A weight's "checkpoint": its shape must merge the weight's dimensions, and
// what the file says of the merge and the layout must be what follows from
// the weight's own layout (plans/checkpoint_layout.h).
CheckpointView read_checkpoint(const JsonReader& entry, const PlannedTensor& weight, const Mesh& mesh) {
  entry.expect_object();
  JsonReader shape_field = entry.required("shape");
  Shape shape;
  for (const JsonReader& size : shape_field.items("sizes")) shape.push_back(size.as_positive());
  std::optional<std::vector<std::vector<int>>> merges = checkpoint_merges(weight.shape, shape);
  if (!merges)
    shape_field.fail(shape_to_string(shape) + " is not the weight's shape " + shape_to_string(weight.shape) +
                     " with neighbouring dimensions merged");
  CheckpointView view = checkpoint_view(weight, shape, *merges);
  JsonReader merges_field = entry.required("merges", "the weight's dimensions each checkpoint dimension merges");
  std::vector<std::vector<int>> written;
  for (const JsonReader& group : merges_field.items("lists of dimensions")) {
    written.emplace_back();
    for (const JsonReader& d : group.items("dimensions")) written.back().push_back(static_cast<int>(d.as_int()));
  }
  if (written != *merges) {
    std::string expected = "[";
    for (size_t c = 0; c < merges->size(); ++c) {
      expected += c ? ", [" : "[";
      for (size_t i = 0; i < (*merges)[c].size(); ++i) expected += (i ? ", " : "") + std::to_string((*merges)[c][i]);
      expected += "]";
    }
    merges_field.fail("expected " + expected + "], the weight's " + shape_to_string(weight.shape) +
                      " merged into " + shape_to_string(shape));
  }
  JsonReader layout = entry.required("layout");
  if (layout.value().is_null() != !view.spec)
    layout.fail(view.spec ? "the weight's layout carries onto the checkpoint's shape, so the layout cannot be null"
                          : "expected null: " + view.note);
  if (view.spec) {
    layout.expect_object();
    std::vector<std::string> taken(mesh.shape.size());
    std::vector<JsonReader> spec = layout.required("spec").items("axis lists");
    AxisSpec read;
    for (size_t c = 0; c < spec.size(); ++c) read.push_back(read_axes(spec[c], mesh, taken, "in spec"));
    if (read != *view.spec) layout.fail("expected the weight's layout carried onto the checkpoint's shape");
  }
  return view;
}

enum class TensorRole { Input, Output, Weight };

// An input's "redistribution" record (read from a layer of its stage), or its
// "send" (pipeline plans: from a layer of an earlier stage).
void read_moved_words(const JsonReader& entry, const PlannedLayer& layer, PlannedTensor& tensor) {
  std::optional<JsonReader> record = entry.optional("redistribution");
  if (std::optional<JsonReader> send = entry.optional("send")) {
    if (record) send->fail("an input is sent from another stage or redistributed inside its own, not both");
    record = send;
    JsonReader from = send->required("from_stage", "the stage whose layer makes the tensor");
    const int64_t stage = from.as_non_negative();
    if (stage == layer.stage)  // an earlier stage, or in an interleaved pipeline any other
      from.fail("expected another stage than the layer's own (" + std::to_string(layer.stage) + "), got " +
                std::to_string(stage));
    tensor.from_stage = static_cast<int>(stage);
  }
  if (!record) return;
  record->expect_object();
  tensor.model_words = record->required("model_words").as_number();
  JsonReader realized = record->required("realized_words");
  tensor.realized_words = realized.as_number();
  if (*tensor.realized_words < 0) realized.fail("expected a non-negative number, got " + json_excerpt(realized.value()));
}

PlannedTensor read_tensor(const JsonReader& entry, TensorRole role, const PlannedLayer& layer, const Mesh& mesh,
                          WrittenLayout& written) {
  entry.expect_object();
  PlannedTensor tensor;
  if (role == TensorRole::Input) tensor.name = entry.required("tensor").as_string();
  if (role == TensorRole::Weight) tensor.name = entry.required("name").as_string();
  for (const JsonReader& size : entry.required("shape").items("sizes")) tensor.shape.push_back(size.as_positive());
  const size_t rank = tensor.shape.size();
  auto expect_rank = [rank](const JsonReader& list, const std::string& what) {
    std::vector<JsonReader> items = list.items(what);
    if (items.size() != rank)
      list.fail("expected " + std::to_string(rank) + " entries (one per dimension of 'shape'), got " +
                std::to_string(items.size()));
    return items;
  };
  for (const JsonReader& pieces : expect_rank(entry.required("split"), "split counts"))
    tensor.split.push_back(pieces.as_positive("split count"));
  for (const JsonReader& letters : expect_rank(entry.required("dims", "the layer letters each dimension follows"),
                                               "strings of layer letters")) {
    std::string text = letters.as_string();
    for (char letter : text)
      if (layer.dims.find(letter) == std::string::npos)
        letters.fail("'" + std::string(1, letter) + "' is not a letter of the layer's dims '" + layer.dims + "'");
    tensor.dims.push_back(std::move(text));
  }
  JsonReader layout = entry.required("layout");
  layout.expect_object();
  std::vector<std::string> taken(mesh.shape.size());
  std::vector<JsonReader> spec = expect_rank(layout.required("spec", "the mesh axes of each dimension"), "axis lists");
  for (size_t t = 0; t < rank; ++t) {
    tensor.spec.push_back(read_axes(spec[t], mesh, taken, "in spec[" + std::to_string(t) + "]"));
    int64_t pieces = axes_size(tensor.spec[t], mesh);
    if (pieces != tensor.split[t])
      spec[t].fail("the axes " + names_of(tensor.spec[t], mesh) + " make " + pieces_text(pieces) + ", but split[" +
                   std::to_string(t) + "] is " + std::to_string(tensor.split[t]));
  }
  written = read_written(layout);
  if (role == TensorRole::Weight) {
    std::vector<std::string> reduced(mesh.shape.size());
    for (int axis : read_axes(entry.required("grad_allreduce_axes"), mesh, reduced, "earlier in the list"))
      tensor.grad_allreduce_axes.push_back(axis);
    if (auto view = entry.optional("checkpoint")) tensor.checkpoint = read_checkpoint(*view, tensor, mesh);
  }
  if (role == TensorRole::Input) read_moved_words(entry, layer, tensor);
  return tensor;
}

PlannedLayer read_layer(const JsonReader& layer, const Plan& plan, WrittenLayerLayouts& written) {
  PlannedLayer out;
  out.name = layer.required("name").as_string();
  if (!plan.stages.empty()) {
    JsonReader stage = layer.required("stage", "the pipeline stage that runs the layer");
    out.stage = static_cast<int>(std::min<int64_t>(stage.as_non_negative(), int64_t{1} << 30));
    if (static_cast<size_t>(out.stage) >= plan.stages.size())
      stage.fail("expected a stage below " + std::to_string(plan.stages.size()) + " (the stage_meshes), got " +
                 std::to_string(out.stage));
  }
  const Mesh& mesh = plan.mesh_of(out);
  if (auto f = layer.optional("op")) out.op = f->as_string();
  JsonReader dims = layer.required("dims", "one letter per domain dimension");
  out.dims = dims.as_string();
  for (size_t i = 0; i < out.dims.size(); ++i)
    if (out.dims.find(out.dims[i]) != i) dims.fail("letter '" + std::string(1, out.dims[i]) + "' appears twice");
  JsonReader config = layer.required("config");
  std::vector<JsonReader> splits = config.items("split counts");
  if (splits.size() != out.dims.size())
    config.fail("expected " + std::to_string(out.dims.size()) + " entries (one per letter of dims '" + out.dims +
                "'), got " + std::to_string(splits.size()));
  for (const JsonReader& split : splits) out.config.push_back(split.as_positive("split count"));

  JsonReader mesh_axes = layer.required("mesh_axes", "the mesh axes of each letter");
  for (const auto& [key, value] : mesh_axes.members())
    if (key.size() != 1 || out.dims.find(key[0]) == std::string::npos)
      value.fail("not a letter of the layer's dims '" + out.dims + "'");
  std::vector<std::string> taken(mesh.shape.size());
  for (size_t i = 0; i < out.dims.size(); ++i) {
    const std::string letter(1, out.dims[i]);
    JsonReader list = mesh_axes.required(letter);
    out.mesh_axes.push_back(read_axes(list, mesh, taken, "under letter '" + letter + "'"));
    int64_t pieces = axes_size(out.mesh_axes.back(), mesh);
    if (pieces != out.config[i])
      list.fail("the axes " + names_of(out.mesh_axes.back(), mesh) + " make " + pieces_text(pieces) +
                ", but config[" + std::to_string(i) + "] (letter '" + letter + "') is " + std::to_string(out.config[i]));
  }

  auto read_list = [&](const char* key, TensorRole role, std::vector<PlannedTensor>& tensors,
                       std::vector<WrittenLayout>& texts, bool required) {
    std::optional<JsonReader> list = required ? std::optional<JsonReader>(layer.required(key)) : layer.optional(key);
    if (!list) return;
    for (const JsonReader& entry : list->items()) {
      texts.emplace_back();
      tensors.push_back(read_tensor(entry, role, out, mesh, texts.back()));
    }
  };
  read_list("inputs", TensorRole::Input, out.inputs, written.inputs, true);
  read_list("outputs", TensorRole::Output, out.outputs, written.outputs, true);
  read_list("weights", TensorRole::Weight, out.weights, written.weights, false);
  return out;
}

}  // namespace

std::optional<PlanFile> read_plan(const std::string& text, const std::string& source) {
  nlohmann::json document = parse_json_document(text, source);
  JsonReader root(document, source);
  root.expect_object("a JSON object at the top level");
  root.check_header("pase-strategy", 1);
  std::optional<JsonReader> mesh = root.optional("mesh");
  std::optional<JsonReader> stage_meshes = root.optional("stage_meshes");
  if (!mesh && !stage_meshes) return std::nullopt;
  if (mesh && stage_meshes) stage_meshes->fail("a plan has one mesh or a mesh per pipeline stage, not both");

  PlanFile file;
  file.source = source;
  if (auto f = root.optional("graph")) file.graph = f->as_string();
  if (auto f = root.optional("devices")) file.devices = f->as_positive("number of devices");
  if (mesh) file.plan.mesh = read_mesh(*mesh, file.devices);
  else file.plan.stages = read_stage_meshes(*stage_meshes, file.devices);
  if (auto f = root.optional("realized_total_cost")) file.plan.realized_total_cost = f->as_number();
  if (auto record = root.optional("axis_assignment")) {
    record->expect_object();
    if (auto f = record->optional("exact")) file.plan.assignment_exact = f->as_bool();
    if (auto f = record->optional("proof")) file.plan.assignment_proof = f->as_string();
    if (auto f = record->optional("candidates_per_layer")) file.plan.candidates_per_layer = static_cast<size_t>(f->as_non_negative());
    if (auto f = record->optional("realized_total_lower_bound")) file.plan.realized_total_lower_bound = f->as_number();
  }
  std::vector<JsonReader> layers = root.required("layers", "one entry per vertex").items();
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < layers.size(); ++i) {
    JsonReader layer = layers[i].as_subject("layers[" + std::to_string(i) + "]");
    layer.expect_object();
    std::string name = layer.required("name").as_string();
    auto [it, inserted] = seen.emplace(name, i);
    layer = layer.as_subject("layer '" + name + "'");
    if (!inserted)
      layer.fail("listed twice (layers[" + std::to_string(it->second) + "] and layers[" + std::to_string(i) + "])");
    file.written.emplace_back();
    file.plan.layers.push_back(read_layer(layer, file.plan, file.written.back()));
  }
  return file;
}

std::optional<TensorSourceRef> find_producer(const Plan& plan, const std::string& tensor) {
  auto find = [&plan](const std::string& name) -> std::optional<size_t> {
    for (size_t l = 0; l < plan.layers.size(); ++l)
      if (plan.layers[l].name == name) return l;
    return std::nullopt;
  };
  if (std::optional<size_t> layer = find(tensor)) return TensorSourceRef{*layer, 0};
  size_t colon = tensor.rfind(':');
  if (colon == std::string::npos || colon + 1 == tensor.size()) return std::nullopt;
  size_t port = 0;
  for (size_t i = colon + 1; i < tensor.size(); ++i) {
    if (tensor[i] < '0' || tensor[i] > '9' || port > 100000) return std::nullopt;
    port = port * 10 + static_cast<size_t>(tensor[i] - '0');
  }
  if (std::optional<size_t> layer = find(tensor.substr(0, colon))) return TensorSourceRef{*layer, port};
  return std::nullopt;
}

}  // namespace pase
