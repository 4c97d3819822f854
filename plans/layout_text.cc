#include "plans/layout_text.h"

#include <algorithm>

#include "base/shape.h"

namespace pase {
namespace {

std::string join_numbers(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text;
}

// A cursor over an HloSharding text; spaces between tokens are skipped.
class HloCursor {
 public:
  explicit HloCursor(const std::string& text) : text_(text) {}
  bool eat(const std::string& token) {
    skip();
    if (text_.compare(at_, token.size(), token) != 0) return false;
    at_ += token.size();
    return true;
  }
  bool number(int64_t& value) {
    skip();
    size_t start = at_;
    value = 0;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9' && at_ - start < 12)
      value = value * 10 + (text_[at_++] - '0');
    return at_ > start;
  }
  // "a,b,c" up to (not including) a token that is not a number.
  bool numbers(std::vector<int64_t>& values) {
    int64_t value = 0;
    if (!number(value)) return false;
    values.push_back(value);
    while (eat(",")) {
      if (!number(value)) return false;
      values.push_back(value);
    }
    return true;
  }
  bool done() {
    skip();
    return at_ == text_.size();
  }

 private:
  void skip() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  const std::string& text_;
  size_t at_ = 0;
};

bool is_permutation_of_iota(const std::vector<int64_t>& values) {
  std::vector<char> seen(values.size(), 0);
  for (int64_t v : values) {
    if (v < 0 || v >= static_cast<int64_t>(values.size()) || seen[v]) return false;
    seen[v] = 1;
  }
  return true;
}

}  // namespace

std::vector<int64_t> spec_split(const AxisSpec& spec, const Mesh& mesh) {
  std::vector<int64_t> split;
  for (const std::vector<int>& axes : spec) {
    int64_t pieces = 1;
    for (int axis : axes) pieces *= mesh.shape[axis];
    split.push_back(pieces);
  }
  return split;
}

std::string jax_partition_spec(const AxisSpec& spec, const Mesh& mesh) {
  std::string text = "P(";
  for (size_t t = 0; t < spec.size(); ++t) {
    if (t) text += ", ";
    const std::vector<int>& axes = spec[t];
    if (axes.empty()) {
      text += "None";
    } else if (axes.size() == 1) {
      text += "'" + mesh.axes[axes[0]] + "'";
    } else {
      text += "(";
      for (size_t i = 0; i < axes.size(); ++i) text += (i ? ", '" : "'") + mesh.axes[axes[i]] + "'";
      text += ")";
    }
  }
  return text + ")";
}

std::string hlo_sharding(const AxisSpec& spec, const Mesh& mesh) {
  const int rank_of_mesh = static_cast<int>(mesh.shape.size());
  // The mesh axes in the order the tile array runs over them: each
  // dimension's axes in turn, then the axes no dimension uses (replication).
  std::vector<int> order;
  for (const std::vector<int>& axes : spec) order.insert(order.end(), axes.begin(), axes.end());
  if (order.empty()) return "{replicated}";
  std::vector<int> unused;
  for (int a = 0; a < rank_of_mesh; ++a)
    if (std::find(order.begin(), order.end(), a) == order.end()) unused.push_back(a);
  order.insert(order.end(), unused.begin(), unused.end());

  std::vector<int64_t> tile = spec_split(spec, mesh);
  if (!unused.empty()) {
    int64_t replicas = 1;
    for (int a : unused) replicas *= mesh.shape[a];
    tile.push_back(replicas);
  }

  // The device array is iota(N) reshaped to the mesh and transposed to
  // `order`. Axes of size 1 change nothing; runs of axes that stay adjacent
  // and in order are one axis of their sizes' product.
  std::vector<int> position(rank_of_mesh, -1);  // among the axes above size 1
  int kept = 0;
  for (int a = 0; a < rank_of_mesh; ++a)
    if (mesh.shape[a] > 1) position[a] = kept++;
  std::vector<int> permuted;  // positions in `order`'s order
  for (int a : order)
    if (position[a] >= 0) permuted.push_back(position[a]);
  struct Group {
    int start;
    int64_t size;
  };
  std::vector<Group> groups;  // in `permuted`'s order
  std::vector<int64_t> kept_size;
  for (int a = 0; a < rank_of_mesh; ++a)
    if (position[a] >= 0) kept_size.push_back(mesh.shape[a]);
  for (size_t i = 0; i < permuted.size(); ++i) {
    if (i > 0 && permuted[i] == permuted[i - 1] + 1)
      groups.back().size *= kept_size[permuted[i]];
    else
      groups.push_back({permuted[i], kept_size[permuted[i]]});
  }
  std::vector<size_t> by_start(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) by_start[g] = g;
  std::sort(by_start.begin(), by_start.end(), [&](size_t x, size_t y) { return groups[x].start < groups[y].start; });
  std::vector<int64_t> dims, transpose(groups.size());
  for (size_t r = 0; r < by_start.size(); ++r) {
    dims.push_back(groups[by_start[r]].size);
    transpose[by_start[r]] = static_cast<int64_t>(r);
  }
  bool identity = true;
  for (size_t g = 0; g < transpose.size(); ++g) identity = identity && transpose[g] == static_cast<int64_t>(g);

  std::string text = "{devices=[" + join_numbers(tile) + "]";
  if (identity)
    text += "<=[" + std::to_string(mesh.devices()) + "]";
  else
    text += "<=[" + join_numbers(dims) + "]T(" + join_numbers(transpose) + ")";
  if (!unused.empty()) text += " last_tile_dim_replicate";
  return text + "}";
}

DtensorLayout dtensor_placements(const AxisSpec& spec, const Mesh& mesh) {
  DtensorLayout layout;
  std::vector<std::string> placements(mesh.shape.size(), "Replicate()");
  for (size_t t = 0; t < spec.size(); ++t) {
    int last = -1;  // the last axis above size 1 seen in this dimension
    for (int axis : spec[t]) {
      placements[axis] = "Shard(" + std::to_string(t) + ")";
      if (mesh.shape[axis] == 1) continue;
      if (last > axis && layout.note.empty()) {
        std::string names;
        for (size_t i = 0; i < spec[t].size(); ++i) names += (i ? ", " : "") + mesh.axes[spec[t][i]];
        layout.note = "dimension " + std::to_string(t) + " runs over " + names + " with " + mesh.axes[last] +
                      " before " + mesh.axes[axis] + ", but DTensor shards a dimension over several mesh axes in " +
                      "mesh order (" + mesh.axes[axis] + " major)";
      }
      last = axis;
    }
  }
  if (layout.note.empty()) layout.placements = std::move(placements);
  return layout;
}

std::optional<std::vector<std::vector<int64_t>>> hlo_device_tiles(const std::string& text, size_t rank,
                                                                 int64_t devices, std::string& error) {
  HloCursor in(text);
  if (in.eat("{") && in.eat("replicated") && in.eat("}") && in.done())
    return std::vector<std::vector<int64_t>>(devices, std::vector<int64_t>(rank, 0));
  HloCursor cursor(text);
  std::vector<int64_t> tile, ids, reshape, transpose;
  if (!(cursor.eat("{") && cursor.eat("devices") && cursor.eat("=") && cursor.eat("[") && cursor.numbers(tile) &&
        cursor.eat("]"))) {
    error = "expected {replicated} or {devices=[...]...}";
    return std::nullopt;
  }
  bool iota = cursor.eat("<=");
  if (iota) {
    if (!(cursor.eat("[") && cursor.numbers(reshape) && cursor.eat("]"))) {
      error = "expected <=[sizes] after the tile sizes";
      return std::nullopt;
    }
    if (cursor.eat("T") && !(cursor.eat("(") && cursor.numbers(transpose) && cursor.eat(")"))) {
      error = "expected T(permutation) after the iota sizes";
      return std::nullopt;
    }
  } else if (!cursor.numbers(ids)) {
    error = "expected device ids or <=[sizes] after the tile sizes";
    return std::nullopt;
  }
  bool replicate = cursor.eat("last_tile_dim_replicate");
  if (!(cursor.eat("}") && cursor.done())) {
    error = "unexpected text before the closing }";
    return std::nullopt;
  }
  if (tile.size() != rank + (replicate ? 1 : 0)) {
    error = std::to_string(tile.size()) + " tile sizes for a tensor of rank " + std::to_string(rank) +
            (replicate ? " (with a replication dimension)" : "");
    return std::nullopt;
  }
  int64_t product = 1;
  for (int64_t size : tile) product = size > 0 && product <= devices ? product * size : devices + 1;
  if (product != devices) {
    error = "the tile sizes " + shape_to_string(tile) + " do not multiply to the mesh's " + std::to_string(devices) + " devices";
    return std::nullopt;
  }
  if (iota) {
    int64_t count = 1;
    for (int64_t size : reshape) count = size > 0 && count <= devices ? count * size : devices + 1;
    if (count != devices) {
      error = "the iota sizes " + shape_to_string(reshape) + " do not multiply to " + std::to_string(devices);
      return std::nullopt;
    }
    if (transpose.empty())
      for (size_t i = 0; i < reshape.size(); ++i) transpose.push_back(static_cast<int64_t>(i));
    if (transpose.size() != reshape.size() || !is_permutation_of_iota(transpose)) {
      error = "T" + shape_to_string(transpose) + " is not a permutation of the " + std::to_string(reshape.size()) +
              " iota dimensions";
      return std::nullopt;
    }
    // ids[i]: the device at position i of iota(N).reshape(reshape).transpose(transpose).
    std::vector<int64_t> stride(reshape.size(), 1);
    for (size_t k = reshape.size(); k-- > 1;) stride[k - 1] = stride[k] * reshape[k];
    std::vector<int64_t> at(reshape.size(), 0);
    for (int64_t i = 0; i < devices; ++i) {
      int64_t id = 0;
      for (size_t k = 0; k < transpose.size(); ++k) id += at[k] * stride[transpose[k]];
      ids.push_back(id);
      for (size_t k = transpose.size(); k-- > 0;) {
        if (++at[k] < reshape[transpose[k]]) break;
        at[k] = 0;
      }
    }
  } else if (static_cast<int64_t>(ids.size()) != devices || !is_permutation_of_iota(ids)) {
    error = "the device list is not a permutation of 0.." + std::to_string(devices - 1);
    return std::nullopt;
  }
  std::vector<std::vector<int64_t>> tiles(devices);
  std::vector<int64_t> at(tile.size(), 0);
  for (int64_t i = 0; i < devices; ++i) {
    tiles[ids[i]].assign(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(rank));
    for (size_t k = tile.size(); k-- > 0;) {
      if (++at[k] < tile[k]) break;
      at[k] = 0;
    }
  }
  return tiles;
}

}  // namespace pase
