#include "plans/mesh.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "base/error.h"

namespace pase {
namespace {

[[noreturn]] void bad_mesh(const std::string& text, const std::string& why) {
  throw OptionError({"mesh", "the mesh", "", " '" + text + "': " + why});
}

int64_t parse_size(const std::string& mesh_text, const std::string& digits) {
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
    bad_mesh(mesh_text, "expected a size, got '" + digits + "'");
  int64_t size = std::stoll(digits);
  if (size < 1) bad_mesh(mesh_text, "axis sizes must be at least 1, got " + digits);
  return size;
}

bool is_axis_name(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == separator) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

// Depth-first over the dimensions to split, giving each an ordered tuple of
// unused axes whose sizes multiply to its split. Axes are tried in mesh order,
// so the first assignment found uses each dimension's axes in mesh order.
class AssignmentSearch {
 public:
  /// `sets_only`: each dimension's axes in mesh order only (one of each
  /// set's orders: enough to know whether any assignment exists, where every
  /// order of nine axes would be 9! tries to fail a split of 1024 on 512).
  AssignmentSearch(const Mesh& mesh, const int32_t* config, int rank, size_t limit, bool sets_only = false)
      : mesh_(mesh), config_(config), rank_(rank), limit_(limit), sets_only_(sets_only), used_(mesh.shape.size(), 0),
        current_(rank) {}

  AxisAssignments run() {
    dimension(0);
    return std::move(result_);
  }

 private:
  void dimension(int d) {
    if (result_.list.size() >= limit_) {
      result_.complete = false;
      return;
    }
    if (d == rank_) {
      result_.list.push_back(current_);
      return;
    }
    if (config_[d] == 1) {
      current_[d].clear();
      dimension(d + 1);
      return;
    }
    extend(d, config_[d], 0);
  }

  // Appends axes to dimension d's list until their sizes make `remaining`
  // (under sets_only, axes from `first` on).
  void extend(int d, int64_t remaining, size_t first) {
    if (remaining == 1) {
      dimension(d + 1);
      return;
    }
    for (size_t axis = sets_only_ ? first : 0; axis < mesh_.shape.size(); ++axis) {
      if (used_[axis] || mesh_.shape[axis] == 1 || remaining % mesh_.shape[axis] != 0) continue;
      used_[axis] = 1;
      current_[d].push_back(static_cast<int>(axis));
      extend(d, remaining / mesh_.shape[axis], axis + 1);
      current_[d].pop_back();
      used_[axis] = 0;
      if (!result_.complete) return;
    }
  }

  const Mesh& mesh_;
  const int32_t* config_;
  int rank_;
  size_t limit_;
  bool sets_only_;
  std::vector<char> used_;
  std::vector<std::vector<int>> current_;
  AxisAssignments result_;
};

}  // namespace

Mesh default_mesh(int64_t devices, int64_t devices_per_node) {
  Mesh mesh;
  mesh.devices_per_node = devices_per_node;
  int64_t rest = devices;
  for (int64_t f = 2; f * f <= rest; ++f)
    while (rest % f == 0) {
      mesh.shape.push_back(f);
      rest /= f;
    }
  if (rest > 1 || mesh.shape.empty()) mesh.shape.push_back(rest);
  std::sort(mesh.shape.begin(), mesh.shape.end(), std::greater<int64_t>());
  for (size_t i = 0; i < mesh.shape.size(); ++i) mesh.axes.push_back("x" + std::to_string(i));
  return mesh;
}

std::vector<Mesh> node_meshes(int64_t devices, int64_t devices_per_node) {
  std::vector<Mesh> meshes;
  const int64_t node = devices_per_node > 0 ? devices_per_node : devices;
  for (int64_t tp = std::min(node, devices); tp >= 1; --tp)
    if (node % tp == 0 && devices % tp == 0) {
      Mesh mesh;
      mesh.devices_per_node = devices_per_node;
      mesh.shape = {devices / tp, tp};
      mesh.axes = {"dp", "tp"};
      meshes.push_back(std::move(mesh));
    }
  return meshes;
}

Mesh parse_mesh(const std::string& text, int64_t devices, int64_t devices_per_node) {
  if (text == "auto") return default_mesh(devices, devices_per_node);
  Mesh mesh;
  mesh.devices_per_node = devices_per_node;
  if (text.find('=') != std::string::npos) {
    for (const std::string& part : split_on(text, ',')) {
      auto equals = part.find('=');
      if (equals == std::string::npos) bad_mesh(text, "expected NAME=SIZE, got '" + part + "'");
      std::string name = part.substr(0, equals);
      if (!is_axis_name(name)) bad_mesh(text, "'" + name + "' is not an axis name (a letter, then letters, digits or _)");
      if (std::find(mesh.axes.begin(), mesh.axes.end(), name) != mesh.axes.end())
        bad_mesh(text, "axis '" + name + "' is named twice");
      mesh.axes.push_back(name);
      mesh.shape.push_back(parse_size(text, part.substr(equals + 1)));
    }
  } else {
    for (const std::string& part : split_on(text, 'x')) {
      mesh.shape.push_back(parse_size(text, part));
      mesh.axes.push_back("x" + std::to_string(mesh.axes.size()));
    }
  }
  int64_t product = 1;
  for (int64_t size : mesh.shape) {
    if (product > std::numeric_limits<int64_t>::max() / size) bad_mesh(text, "the sizes multiply past 2^63");
    product *= size;
  }
  if (product != devices)
    bad_mesh(text, "its sizes multiply to " + std::to_string(product) + ", not to the " + std::to_string(devices) +
                       " devices");
  return mesh;
}

AxisAssignments axis_assignments(const Mesh& mesh, const int32_t* config, int rank, size_t limit) {
  return AssignmentSearch(mesh, config, rank, limit).run();
}

namespace {

// The assignments of the coarse mesh whose axis g is the mesh's axes
// [cuts[g], cuts[g + 1]) (row-major, so its index is theirs in mixed radix),
// written in the mesh's axes, added to `result` unless seen.
void add_grouped(const Mesh& mesh, const std::vector<int>& cuts, const int32_t* config, int rank, size_t limit,
                 std::set<std::vector<std::vector<int>>>& seen, AxisAssignments& result) {
  Mesh coarse;
  for (size_t g = 0; g + 1 < cuts.size(); ++g) {
    int64_t size = 1;
    for (int j = cuts[g]; j < cuts[g + 1]; ++j) size *= mesh.shape[static_cast<size_t>(j)];
    coarse.shape.push_back(size);
    coarse.axes.push_back("g" + std::to_string(g));
  }
  for (const std::vector<std::vector<int>>& grouped : axis_assignments(coarse, config, rank, limit).list) {
    std::vector<std::vector<int>> fine(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d)
      for (int g : grouped[static_cast<size_t>(d)])
        for (int axis = cuts[static_cast<size_t>(g)]; axis < cuts[static_cast<size_t>(g) + 1]; ++axis)
          if (mesh.shape[static_cast<size_t>(axis)] > 1) fine[static_cast<size_t>(d)].push_back(axis);
    if (!seen.insert(fine).second) continue;
    if (result.list.size() == limit) {
      result.complete = false;
      return;
    }
    result.list.push_back(std::move(fine));
  }
}

}  // namespace

AxisAssignments grouped_assignments(const Mesh& mesh, const int32_t* config, int rank, size_t limit) {
  AxisAssignments result;
  std::set<std::vector<std::vector<int>>> seen;
  const int axes = static_cast<int>(mesh.shape.size());
  // Groups [0, a) and [a, axes); one group only for a mesh of one axis (on
  // more, both groups on one dimension give the whole mesh's order already).
  if (axes == 1) add_grouped(mesh, {0, 1}, config, rank, limit, seen, result);
  for (int a = 1; a < axes && result.complete; ++a) add_grouped(mesh, {0, a, axes}, config, rank, limit, seen, result);
  return result;
}

LayoutSpace layout_space(const Mesh& mesh) {
  const auto axes = std::count_if(mesh.shape.begin(), mesh.shape.end(), [](int64_t size) { return size > 1; });
  return axes > 3 ? LayoutSpace::Grouped : LayoutSpace::Every;
}

AxisAssignments layouts_in(LayoutSpace space, const Mesh& mesh, const int32_t* config, int rank, size_t limit) {
  return space == LayoutSpace::Grouped ? grouped_assignments(mesh, config, rank, limit)
                                        : axis_assignments(mesh, config, rank, limit);
}

namespace {

bool prime(int64_t n) {
  if (n < 2) return false;
  for (int64_t f = 2; f * f <= n; ++f)
    if (n % f == 0) return false;
  return true;
}

}  // namespace

bool realizable(const Mesh& mesh, const int32_t* config, int rank) {
  // On a mesh of prime axes (the default mesh is the devices' prime
  // factors) a split is a product of distinct axes exactly when the splits'
  // product divides the devices: the axes are its prime factors, each used
  // once. The search would find that too, but only after trying every set
  // of axes when it fails (a split of 3 x 2^5 on ten axes of 2: 637 sets).
  if (std::all_of(mesh.shape.begin(), mesh.shape.end(), prime)) {
    int64_t left = mesh.devices();
    for (int d = 0; d < rank; ++d) {
      if (left % config[d] != 0) return false;
      left /= config[d];
    }
    return true;
  }
  return !AssignmentSearch(mesh, config, rank, 1, /*sets_only=*/true).run().list.empty();
}

}  // namespace pase
