#include "plans/plan_check.h"

#include "plans/stage_plans.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "base/checked_math.h"
#include "base/error.h"
#include "base/shape.h"
#include "plans/layout_text.h"
#include "plans/stage_plans.h"

namespace pase {
namespace {

// Ops whose tensors, when each dimension follows one letter, form an einsum.
const std::set<std::string> kEinsumOps = {"fc",        "einsum",     "contraction", "matmul",
                                         "embedding", "transpose", "reduce_mean"};
// The shrunk problem's whole domain is at most this many points.
constexpr int64_t kMaxShrunkPoints = int64_t{1} << 22;
// ... and the most points all devices compute together. A replicated layer
// makes every device compute the whole problem: one elementwise layer of 20
// letters on 256 devices took 28 s and 4 GiB before this bound.
constexpr int64_t kMaxDevicePoints = int64_t{1} << 23;
// A layer's line names at most this many of its problems.
constexpr size_t kProblemsPerLine = 3;

std::string axes_text(const std::vector<int>& axes, const Mesh& mesh) {
  std::string text = "[";
  for (size_t i = 0; i < axes.size(); ++i) text += (i ? ", " : "") + mesh.axes[axes[i]];
  return text + "]";
}

std::string number_text(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1), the same on every platform.
double random_value(uint64_t& state) { return static_cast<double>(splitmix64(state) >> 11) * 0x1p-52 - 1.0; }

int64_t axes_size(const std::vector<int>& axes, const Mesh& mesh) {
  int64_t size = 1;
  for (int axis : axes) size *= mesh.shape[axis];
  return size;
}

int64_t device_id(const std::vector<int64_t>& coords, const Mesh& mesh) {
  int64_t id = 0;
  for (size_t a = 0; a < coords.size(); ++a) id = id * mesh.shape[a] + coords[a];
  return id;
}

std::string normalized_jax(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' || c == '\t') continue;
    out += c == '"' ? '\'' : c;
  }
  return out;
}

// ---- The shrunk problem -------------------------------------------------

struct SimTensor {
  const PlannedTensor* tensor = nullptr;
  std::string label;
  std::vector<int> letters;        // per dimension, the layer letter (index into dims)
  std::vector<int64_t> extent;     // per dimension, in the shrunk problem
  std::vector<int64_t> stride;     // row-major
  std::vector<double> values;
};

// Whether the layer's tensors form an einsum (or, with `sum`, a sum of
// same-dims inputs) with every dimension following one letter; fills `operands`
// (inputs, then weights) and `output`.
bool simulable(const PlannedLayer& layer, bool sum, std::vector<SimTensor>& operands, SimTensor& output) {
  if (layer.outputs.size() != 1) return false;
  auto letters_of = [&layer](const PlannedTensor& tensor, std::vector<int>& letters) {
    for (const std::string& dims : tensor.dims) {
      if (dims.size() != 1) return false;
      int letter = static_cast<int>(layer.dims.find(dims[0]));
      if (letter < 0 || std::find(letters.begin(), letters.end(), letter) != letters.end()) return false;
      letters.push_back(letter);
    }
    return true;
  };
  output.tensor = &layer.outputs[0];
  output.label = "output 0";
  if (!letters_of(layer.outputs[0], output.letters)) return false;
  for (size_t i = 0; i < layer.inputs.size() + layer.weights.size(); ++i) {
    bool weight = i >= layer.inputs.size();
    SimTensor operand;
    operand.tensor = weight ? &layer.weights[i - layer.inputs.size()] : &layer.inputs[i];
    operand.label = weight ? "weight '" + operand.tensor->name + "'"
                           : "input " + std::to_string(i) + " ('" + operand.tensor->name + "')";
    if (!letters_of(*operand.tensor, operand.letters)) return false;
    if (sum && operand.letters != output.letters) return false;
    operands.push_back(std::move(operand));
  }
  if (operands.empty()) return false;
  for (int letter : output.letters) {
    bool found = false;
    for (const SimTensor& operand : operands)
      found = found || std::find(operand.letters.begin(), operand.letters.end(), letter) != operand.letters.end();
    if (!found) return false;
  }
  return true;
}

class ShrunkLayer {
 public:
  ShrunkLayer(const PlannedLayer& layer, const Mesh& mesh, bool sum, std::vector<SimTensor> operands, SimTensor output,
              int64_t block)
      : layer_(layer), mesh_(mesh), sum_(sum), operands_(std::move(operands)), output_(std::move(output)) {
    for (int64_t split : layer.config) extent_.push_back(split * block);
    for (SimTensor* t : all()) {
      for (int letter : t->letters) t->extent.push_back(extent_[letter]);
      t->stride.assign(t->extent.size(), 1);
      for (size_t d = t->extent.size(); d-- > 1;) t->stride[d - 1] = t->stride[d] * t->extent[d];
    }
    for (size_t l = 0; l < layer.dims.size(); ++l) {
      bool used = false;
      for (SimTensor* t : all()) used = used || std::find(t->letters.begin(), t->letters.end(), l) != t->letters.end();
      if (used) active_.push_back(static_cast<int>(l));
    }
  }

  // Points of the shrunk problem (saturating: a layer of many letters would overflow).
  int64_t points() const {
    int64_t n = 1;
    for (int l : active_) n = checked_mul(n, extent_[l]).value_or(std::numeric_limits<int64_t>::max());
    return n;
  }

  // At most the points all devices' tiles span together, saturating: what
  // run() computes besides the reference, each device on its own tiles. A
  // replicated layer costs every device the whole problem.
  int64_t device_points() const {
    std::vector<int64_t> split(extent_.size(), std::numeric_limits<int64_t>::max());
    for (const SimTensor* t : all())
      for (size_t d = 0; d < t->letters.size(); ++d)
        split[t->letters[d]] = std::min(split[t->letters[d]], axes_size(t->tensor->spec[d], mesh_));
    int64_t n = mesh_.devices();
    for (int l : active_)
      n = checked_mul(n, (extent_[l] + split[l] - 1) / split[l]).value_or(std::numeric_limits<int64_t>::max());
    return n;
  }

  // The first inconsistency, or "" when every device's output tile is right.
  std::string run(uint64_t seed, double tolerance) {
    fill_operands(seed);
    const std::vector<double> reference = unsharded_result();
    DeviceResults results;
    if (std::string problem = compute_on_devices(results); !problem.empty()) return problem;
    if (std::string problem = sum_over_reductions(results); !problem.empty()) return problem;
    return compare_outputs(results, reference, tolerance);
  }

 private:
  // What the devices computed: each its own output tile, then the sums of
  // the tiles of each group that a reduction axis joins.
  struct DeviceResults {
    std::vector<std::vector<double>> local;
    std::vector<std::vector<int64_t>> local_shape;
    std::map<int64_t, std::vector<double>> sums;  // keyed by the group's device with reduction coordinates 0
    std::vector<int64_t> group;                   // per device, its group's key
  };

  void fill_operands(uint64_t seed) {
    for (SimTensor& operand : operands_) {
      int64_t count = 1;
      for (int64_t e : operand.extent) count *= e;
      operand.values.resize(count);
      for (double& v : operand.values) v = random_value(seed);
    }
  }

  // The layer's output computed on one device, unsharded.
  std::vector<double> unsharded_result() {
    int64_t out_count = 1;
    for (int64_t e : output_.extent) out_count *= e;
    std::vector<double> reference(out_count, 0.0);
    std::vector<Interval> whole(layer_.dims.size());
    for (int l : active_) whole[l] = {0, extent_[l]};
    std::vector<std::vector<Interval>> all_whole(operands_.size(), std::vector<Interval>());
    for (size_t j = 0; j < operands_.size(); ++j)
      for (int letter : operands_[j].letters) all_whole[j].push_back(whole[letter]);
    contract(all_whole, whole, reference);
    return reference;
  }

  // Every device computes on its own tiles.
  std::string compute_on_devices(DeviceResults& results) {
    const int64_t devices = mesh_.devices();
    results.local.assign(devices, {});
    results.local_shape.assign(devices, {});
    for (int64_t d = 0; d < devices; ++d) {
      std::vector<int64_t> coords = mesh_coords(mesh_, d);
      std::vector<std::vector<Interval>> tiles;
      std::vector<Interval> span(layer_.dims.size());  // per letter: local extent (begin unused)
      std::vector<int> span_from(layer_.dims.size(), -1);
      for (size_t j = 0; j < operands_.size(); ++j) {
        tiles.push_back(tile_of(operands_[j], coords));
        for (size_t t = 0; t < operands_[j].letters.size(); ++t) {
          int letter = operands_[j].letters[t];
          int64_t length = tiles[j][t].length();
          if (span_from[letter] < 0) {
            span[letter] = {0, length};
            span_from[letter] = static_cast<int>(j);
          } else if (span[letter].length() != length) {
            return "device " + std::to_string(d) + ": " + operands_[span_from[letter]].label + " holds " +
                   std::to_string(span[letter].length()) + " elements of '" + layer_.dims[letter] + "' but " +
                   operands_[j].label + " holds " + std::to_string(length) + shrunk_note();
          }
        }
      }
      for (int letter : output_.letters) results.local_shape[d].push_back(span[letter].length());
      int64_t count = 1;
      for (int64_t e : results.local_shape[d]) count *= e;
      results.local[d].assign(count, 0.0);
      contract(tiles, span, results.local[d]);
    }
    return "";
  }

  // Sum over the reduction axes: the axes of letters the output lacks.
  std::string sum_over_reductions(DeviceResults& results) {
    const int64_t devices = mesh_.devices();
    std::vector<char> reduced(mesh_.shape.size(), 0);
    for (size_t l = 0; l < layer_.dims.size(); ++l)
      if (std::find(output_.letters.begin(), output_.letters.end(), static_cast<int>(l)) == output_.letters.end())
        for (int axis : layer_.mesh_axes[l]) reduced[axis] = 1;
    std::map<int64_t, int64_t> first_member;
    results.group.assign(devices, 0);
    for (int64_t d = 0; d < devices; ++d) {
      std::vector<int64_t> coords = mesh_coords(mesh_, d);
      for (size_t a = 0; a < coords.size(); ++a)
        if (reduced[a]) coords[a] = 0;
      results.group[d] = device_id(coords, mesh_);
      auto [it, fresh] = results.sums.emplace(results.group[d], results.local[d]);
      if (fresh) {
        first_member[results.group[d]] = d;
        continue;
      }
      int64_t other = first_member[results.group[d]];
      if (results.local_shape[d] != results.local_shape[other])
        return "devices " + std::to_string(other) + " and " + std::to_string(d) + ", whose results are summed, compute " +
               "tiles of shapes " + shape_to_string(results.local_shape[other]) + " and " +
               shape_to_string(results.local_shape[d]) + shrunk_note();
      for (size_t i = 0; i < results.local[d].size(); ++i) it->second[i] += results.local[d][i];
    }
    return "";
  }

  // Each device's summed tile against the unsharded result, where its output layout puts it.
  std::string compare_outputs(DeviceResults& results, const std::vector<double>& reference, double tolerance) {
    for (int64_t d = 0; d < mesh_.devices(); ++d) {
      std::vector<Interval> tile = tile_of(output_, mesh_coords(mesh_, d));
      std::vector<int64_t> shape;
      for (const Interval& interval : tile) shape.push_back(interval.length());
      if (shape != results.local_shape[d])
        return "device " + std::to_string(d) + " computes an output tile of shape " +
               shape_to_string(results.local_shape[d]) + ", but its output layout gives it " + shape_to_string(shape) +
               shrunk_note();
      const std::vector<double>& got = results.sums[results.group[d]];
      std::vector<int64_t> at(shape.size(), 0);
      for (size_t i = 0; i < got.size(); ++i) {
        int64_t flat = 0;
        std::vector<int64_t> element(shape.size());
        for (size_t t = 0; t < shape.size(); ++t) {
          element[t] = tile[t].begin + at[t];
          flat += element[t] * output_.stride[t];
        }
        double want = reference[flat];
        if (!(std::fabs(got[i] - want) <= tolerance * std::max(1.0, std::fabs(want))))
          return "device " + std::to_string(d) + ": output element " + shape_to_string(element) + " is " +
                 number_text(got[i]) + ", but the unsharded result is " + number_text(want) + shrunk_note();
        for (size_t t = shape.size(); t-- > 0;) {
          if (++at[t] < shape[t]) break;
          at[t] = 0;
        }
      }
    }
    return "";
  }

  std::vector<SimTensor*> all() {
    std::vector<SimTensor*> tensors;
    for (SimTensor& operand : operands_) tensors.push_back(&operand);
    tensors.push_back(&output_);
    return tensors;
  }
  std::vector<const SimTensor*> all() const {
    std::vector<const SimTensor*> tensors;
    for (const SimTensor& operand : operands_) tensors.push_back(&operand);
    tensors.push_back(&output_);
    return tensors;
  }

  std::vector<Interval> tile_of(const SimTensor& t, const std::vector<int64_t>& coords) const {
    std::vector<Interval> tile;
    for (size_t d = 0; d < t.letters.size(); ++d) {
      const std::vector<int>& axes = t.tensor->spec[d];
      tile.push_back(block_interval(t.extent[d], axes_size(axes, mesh_), block_index(axes, coords, mesh_)));
    }
    return tile;
  }

  // out[output letters] += combine over operands of operand[tile begin + local], over the
  // local extents `span` of the active letters; operand j reads its `tiles[j]`.
  void contract(const std::vector<std::vector<Interval>>& tiles, const std::vector<Interval>& span,
                std::vector<double>& out) const {
    int64_t count = 1;
    for (int l : active_) count *= span[l].length();
    if (count == 0) return;
    std::vector<int64_t> at(layer_.dims.size(), 0);  // local index per letter
    std::vector<int64_t> out_stride(output_.letters.size(), 1);
    for (size_t t = output_.letters.size(); t-- > 1;) out_stride[t - 1] = out_stride[t] * span[output_.letters[t]].length();
    for (int64_t point = 0; point < count; ++point) {
      double value = sum_ ? 0.0 : 1.0;
      for (size_t j = 0; j < operands_.size(); ++j) {
        const SimTensor& operand = operands_[j];
        int64_t flat = 0;
        for (size_t t = 0; t < operand.letters.size(); ++t)
          flat += (tiles[j][t].begin + at[operand.letters[t]]) * operand.stride[t];
        value = sum_ ? value + operand.values[flat] : value * operand.values[flat];
      }
      int64_t flat = 0;
      for (size_t t = 0; t < output_.letters.size(); ++t) flat += at[output_.letters[t]] * out_stride[t];
      out[flat] += value;
      for (size_t i = active_.size(); i-- > 0;) {
        int l = active_[i];
        if (++at[l] < span[l].length()) break;
        at[l] = 0;
      }
    }
  }

  std::string shrunk_note() const {
    std::string note = " (shrunk problem:";
    for (int l : active_) note += std::string(" ") + layer_.dims[l] + "=" + std::to_string(extent_[l]);
    return note + ")";
  }

  const PlannedLayer& layer_;
  const Mesh& mesh_;
  bool sum_;
  std::vector<SimTensor> operands_;
  SimTensor output_;
  std::vector<int64_t> extent_;  // per letter
  std::vector<int> active_;      // letters some tensor follows
};

// ---- Layouts --------------------------------------------------------------

// The layout problems of one tensor (spec against mesh axes, written texts).
void check_layout(const PlannedLayer& layer, const PlannedTensor& tensor, const WrittenLayout& written,
                  const std::string& label, const Mesh& mesh, std::vector<std::string>& problems) {
  for (size_t t = 0; t < tensor.dims.size(); ++t) {
    std::vector<int> expected;
    for (char letter : tensor.dims[t]) {
      const std::vector<int>& axes = layer.mesh_axes[layer.dims.find(letter)];
      expected.insert(expected.end(), axes.begin(), axes.end());
    }
    if (tensor.spec[t] != expected)
      problems.push_back(label + ": spec[" + std::to_string(t) + "] is " + axes_text(tensor.spec[t], mesh) +
                         ", but its dims '" + tensor.dims[t] + "' run over " + axes_text(expected, mesh));
  }
  if (!written.jax) {
    problems.push_back(label + ": layout.jax is missing");
  } else if (normalized_jax(*written.jax) != normalized_jax(jax_partition_spec(tensor.spec, mesh))) {
    problems.push_back(label + ": layout.jax is \"" + *written.jax + "\", but the spec says \"" +
                       jax_partition_spec(tensor.spec, mesh) + "\"");
  }
  DtensorLayout dtensor = dtensor_placements(tensor.spec, mesh);
  if (!written.has_dtensor) {
    problems.push_back(label + ": layout.dtensor is missing");
  } else if (dtensor.placements != written.dtensor) {
    auto text = [](const std::optional<std::vector<std::string>>& placements) {
      if (!placements) return std::string("null");
      std::string out = "[";
      for (size_t i = 0; i < placements->size(); ++i) out += (i ? ", " : "") + (*placements)[i];
      return out + "]";
    };
    problems.push_back(label + ": layout.dtensor is " + text(written.dtensor) + ", but the spec says " +
                       text(dtensor.placements));
  } else if (!dtensor.placements && (!written.dtensor_note || written.dtensor_note->empty())) {
    problems.push_back(label + ": layout.dtensor is null without a dtensor_note");
  }
  if (!written.hlo) {
    problems.push_back(label + ": layout.hlo is missing");
    return;
  }
  std::string error;
  auto tiles = hlo_device_tiles(*written.hlo, tensor.spec.size(), mesh.devices(), error);
  if (!tiles) {
    problems.push_back(label + ": layout.hlo \"" + *written.hlo + "\": " + error);
    return;
  }
  for (int64_t d = 0; d < mesh.devices(); ++d) {
    std::vector<int64_t> coords = mesh_coords(mesh, d), want;
    for (const std::vector<int>& axes : tensor.spec) want.push_back(block_index(axes, coords, mesh));
    if ((*tiles)[d] != want) {
      problems.push_back(label + ": layout.hlo \"" + *written.hlo + "\" gives device " + std::to_string(d) + " tile " +
                         shape_to_string((*tiles)[d]) + ", but the spec gives it " + shape_to_string(want));
      return;
    }
  }
}

void check_grad_axes(const PlannedLayer& layer, const PlannedTensor& weight, const std::string& label, const Mesh& mesh,
                     std::vector<std::string>& problems) {
  std::vector<int> expected;
  for (size_t l = 0; l < layer.dims.size(); ++l) {
    bool in_weight = false;
    for (const std::string& dims : weight.dims) in_weight = in_weight || dims.find(layer.dims[l]) != std::string::npos;
    if (!in_weight) expected.insert(expected.end(), layer.mesh_axes[l].begin(), layer.mesh_axes[l].end());
  }
  std::vector<int> written = weight.grad_allreduce_axes;
  std::sort(expected.begin(), expected.end());
  std::sort(written.begin(), written.end());
  if (written != expected)
    problems.push_back(label + ": grad_allreduce_axes is " + axes_text(weight.grad_allreduce_axes, mesh) +
                       ", but the layer's axes outside its dims are " + axes_text(expected, mesh));
}

}  // namespace

std::vector<int64_t> mesh_coords(const Mesh& mesh, int64_t device) {
  std::vector<int64_t> coords(mesh.shape.size());
  for (size_t a = mesh.shape.size(); a-- > 0;) {
    coords[a] = device % mesh.shape[a];
    device /= mesh.shape[a];
  }
  return coords;
}

int64_t block_index(const std::vector<int>& axes, const std::vector<int64_t>& coords, const Mesh& mesh) {
  int64_t index = 0;
  for (int axis : axes) index = index * mesh.shape[axis] + coords[axis];
  return index;
}

Interval block_interval(int64_t size, int64_t pieces, int64_t index) {
  int64_t each = (size + pieces - 1) / pieces;
  return {std::min(size, index * each), std::min(size, (index + 1) * each)};
}

// Stated apart from plans/realized_words.cc on purpose (in integers, from
// the contract): plan-check is the oracle of what the solver writes.
int64_t realized_words(const Shape& shape, const AxisSpec& held, const AxisSpec& needed, const Mesh& mesh) {
  int64_t most = 0;
  for (int64_t d = 0; d < mesh.devices(); ++d) {
    std::vector<int64_t> coords = mesh_coords(mesh, d);
    int64_t need = 1, overlap = 1;
    for (size_t t = 0; t < shape.size(); ++t) {
      Interval h = block_interval(shape[t], axes_size(held[t], mesh), block_index(held[t], coords, mesh));
      Interval n = block_interval(shape[t], axes_size(needed[t], mesh), block_index(needed[t], coords, mesh));
      need *= n.length();
      overlap *= std::max<int64_t>(0, std::min(h.end, n.end) - std::max(h.begin, n.begin));
    }
    most = std::max(most, need - overlap);
  }
  return most;
}

namespace {

// Every layer and edge of a plan on one mesh.
PlanCheckReport check_on_mesh(const PlanFile& file, const PlanCheckOptions& options) {
  PlanCheckReport report;
  const Plan& plan = file.plan;
  const Mesh& mesh = plan.mesh;
  // A few bytes of plan ("shape": [16777216]) would otherwise cost minutes
  // and gigabytes: every tensor's tiles are checked on every device.
  if (mesh.devices() > options.max_devices)
    throw LimitError({"max_devices", "the device limit of the check",
                      file.source + ": the plan's mesh has " + std::to_string(mesh.devices()) +
                          " devices, above the limit of " + std::to_string(options.max_devices) + " (",
                      "); the check visits every device's tiles"});
  for (size_t l = 0; l < plan.layers.size(); ++l) {
    const PlannedLayer& layer = plan.layers[l];
    const WrittenLayerLayouts& written = file.written[l];
    std::vector<std::string> problems;
    for (size_t i = 0; i < layer.inputs.size(); ++i)
      check_layout(layer, layer.inputs[i], written.inputs[i],
                   "input " + std::to_string(i) + " ('" + layer.inputs[i].name + "')", mesh, problems);
    for (size_t k = 0; k < layer.outputs.size(); ++k)
      check_layout(layer, layer.outputs[k], written.outputs[k], "output " + std::to_string(k), mesh, problems);
    for (size_t w = 0; w < layer.weights.size(); ++w) {
      std::string label = "weight '" + layer.weights[w].name + "'";
      check_layout(layer, layer.weights[w], written.weights[w], label, mesh, problems);
      check_grad_axes(layer, layer.weights[w], label, mesh, problems);
    }

    const bool sum = layer.op == "elementwise";
    std::vector<SimTensor> operands;
    SimTensor output;
    bool computed = false;
    if ((sum || kEinsumOps.count(layer.op)) && simulable(layer, sum, operands, output)) {
      for (int64_t block = options.block; block >= 1 && !computed; block = block > 1 ? 1 : 0) {
        ShrunkLayer shrunk(layer, mesh, sum, operands, output, block);
        if (shrunk.points() > kMaxShrunkPoints || shrunk.device_points() > kMaxDevicePoints) continue;
        computed = true;
        std::string problem = shrunk.run(options.seed + l * 0x9e3779b97f4a7c15ULL, options.tolerance);
        if (!problem.empty()) problems.push_back("computed: " + problem);
      }
    }
    ++(computed ? report.layers_computed : report.layers_layout_only);
    if (!problems.empty()) {
      std::string line = "layer '" + layer.name + "': ";
      for (size_t i = 0; i < problems.size() && i < kProblemsPerLine; ++i) line += (i ? "; " : "") + problems[i];
      if (problems.size() > kProblemsPerLine)
        line += " (and " + std::to_string(problems.size() - kProblemsPerLine) + " more)";
      report.problems.push_back(std::move(line));
    }

    for (size_t i = 0; i < layer.inputs.size(); ++i) {
      const PlannedTensor& input = layer.inputs[i];
      std::optional<TensorSourceRef> source = find_producer(plan, input.name);
      if (!source) continue;
      ++report.edges;
      const PlannedLayer& producer = plan.layers[source->layer];
      std::string edge = "edge '" + input.name + "' -> '" + layer.name + "' (input " + std::to_string(i) + "): ";
      if (source->port >= producer.outputs.size()) {
        report.problems.push_back(edge + "layer '" + producer.name + "' has " + std::to_string(producer.outputs.size()) +
                                  " outputs");
        continue;
      }
      const PlannedTensor& made = producer.outputs[source->port];
      if (made.shape != input.shape) {
        report.problems.push_back(edge + "the input's shape " + shape_to_string(input.shape) +
                                  " is not the output's " + shape_to_string(made.shape));
        continue;
      }
      if (!input.realized_words) {
        report.problems.push_back(edge + "no redistribution record");
        continue;
      }
      int64_t words = realized_words(input.shape, made.spec, input.spec, mesh);
      double written_words = *input.realized_words;
      if (std::fabs(written_words - static_cast<double>(words)) > 1e-9 * std::max(1.0, static_cast<double>(words)))
        report.problems.push_back(edge + "realized_words is " + number_text(written_words) + ", but the layouts " +
                                  "leave a device at most " + std::to_string(words) + " elements to fetch");
    }
  }
  return report;
}


// The most elements any device of `mesh` needs of a tensor laid out by
// `spec`, counted device by device from its blocks: none of a send is held.
int64_t largest_needed_tile(const Shape& shape, const AxisSpec& spec, const Mesh& mesh) {
  int64_t most = 0;
  for (int64_t device = 0; device < mesh.devices(); ++device) {
    const std::vector<int64_t> coords = mesh_coords(mesh, device);
    int64_t elements = 1;
    for (size_t t = 0; t < shape.size(); ++t) {
      int64_t pieces = 1;
      for (int axis : spec[t]) pieces *= mesh.shape[static_cast<size_t>(axis)];
      elements *= block_interval(shape[t], pieces, block_index(spec[t], coords, mesh)).length();
    }
    most = std::max(most, elements);
  }
  return most;
}

bool same_words(double written, double expected) {
  return std::fabs(written - expected) <= 1e-9 * std::max(1.0, std::fabs(expected));
}

// What a send record must say: made by a layer of the stage it names, of
// the input's shape, its words the model's pairs and the receiving tiles.
std::string send_problem(const Plan& plan, const PlannedLayer& layer, const PlannedTensor& input,
                         const TensorSourceRef& source) {
  const PlannedLayer& producer = plan.layers[source.layer];
  const std::string made_in = "layer '" + producer.name + "' runs in stage " + std::to_string(producer.stage);
  if (!input.from_stage || !input.model_words || !input.realized_words) return made_in + ", but the input has no send record";
  if (*input.from_stage != producer.stage) return "from_stage is " + std::to_string(*input.from_stage) + ", but " + made_in;
  if (source.port >= producer.outputs.size())
    return "layer '" + producer.name + "' has " + std::to_string(producer.outputs.size()) + " outputs";
  if (producer.outputs[source.port].shape != input.shape)
    return "the input's shape " + shape_to_string(input.shape) + " is not the output's " +
           shape_to_string(producer.outputs[source.port].shape);
  const Mesh& mesh = plan.mesh_of(layer);
  const int64_t pairs = std::min(plan.mesh_of(producer).devices(), mesh.devices());
  const double model = static_cast<double>(checked_product(input.shape).value_or(0)) / static_cast<double>(pairs);
  if (!same_words(*input.model_words, model))
    return "model_words is " + number_text(*input.model_words) + ", but the tensor over " + std::to_string(pairs) +
           " pairs of devices is " + number_text(model);
  const int64_t needed = largest_needed_tile(input.shape, input.spec, mesh);
  if (!same_words(*input.realized_words, static_cast<double>(needed)))
    return "realized_words is " + number_text(*input.realized_words) + ", but a device of stage " +
           std::to_string(layer.stage) + " needs at most " + std::to_string(needed) + " elements of it";
  return "";
}

// Every input of a pipeline plan that another stage's layer makes.
void check_sends(const Plan& plan, PlanCheckReport& report) {
  for (const PlannedLayer& layer : plan.layers)
    for (size_t i = 0; i < layer.inputs.size(); ++i) {
      const PlannedTensor& input = layer.inputs[i];
      const std::string send = "send '" + input.name + "' -> '" + layer.name + "' (input " + std::to_string(i) + "): ";
      const std::optional<TensorSourceRef> source = find_producer(plan, input.name);
      if (!source || plan.layers[source->layer].stage == layer.stage) {
        if (input.from_stage)
          report.problems.push_back(send + "from_stage is " + std::to_string(*input.from_stage) +
                                    (source ? ", but the layer that makes it runs in the same stage"
                                            : ", but no layer makes it"));
        continue;
      }
      ++report.sends;  // from an earlier stage, or in an interleaved pipeline the last stage's chunk to the first's
      const std::string problem = send_problem(plan, layer, input, *source);
      if (!problem.empty()) report.problems.push_back(send + problem);
    }
}

}  // namespace

PlanCheckReport check_plan(const PlanFile& file, const PlanCheckOptions& options) {
  if (file.plan.stages.empty()) return check_on_mesh(file, options);
  PlanCheckReport report;
  for (size_t k = 0; k < file.plan.stages.size(); ++k) {
    const PlanCheckReport part = check_on_mesh(stage_plan_file(file, k), options);
    report.layers_computed += part.layers_computed;
    report.layers_layout_only += part.layers_layout_only;
    report.edges += part.edges;
    for (const std::string& problem : part.problems) report.problems.push_back("stage " + std::to_string(k) + ": " + problem);
  }
  check_sends(file.plan, report);
  return report;
}

}  // namespace pase
