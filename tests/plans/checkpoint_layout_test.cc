// A weight declared in more dimensions than its checkpoint holds it in
// (graphs/checkpoint_shapes.h, plans/checkpoint_layout.h): the merges, the
// graph file's field and its errors, and the layout carried onto the
// checkpoint's shape, checked against every device's elements counted out.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "base/error.h"
#include "graphs/checkpoint_shapes.h"
#include "graphs/graph_file.h"
#include "plans/checkpoint_layout.h"
#include "test_support.h"

using namespace pase;

namespace {

using Merges = std::vector<std::vector<int>>;

// The flat (row-major) indices of the elements device `id` holds of a tensor
// of `shape` laid out by `spec` on a mesh of `mesh_shape`: along each
// dimension, block b of s holds [b·⌈e/s⌉, min(e, (b+1)·⌈e/s⌉)) (docs/plans.md),
// b counted over the dimension's axes major first. Written from the
// definition, not from the library.
std::set<int64_t> held_elements(const Shape& shape, const AxisSpec& spec, const Shape& mesh_shape, int64_t id) {
  std::vector<int64_t> coordinate(mesh_shape.size());
  for (size_t a = mesh_shape.size(); a-- > 0;) {
    coordinate[a] = id % mesh_shape[a];
    id /= mesh_shape[a];
  }
  std::vector<int64_t> first(shape.size()), last(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t block = 0, pieces = 1;
    for (int axis : spec[d]) {
      block = block * mesh_shape[axis] + coordinate[axis];
      pieces *= mesh_shape[axis];
    }
    const int64_t size = (shape[d] + pieces - 1) / pieces;
    first[d] = std::min(shape[d], block * size);
    last[d] = std::min(shape[d], (block + 1) * size);
  }
  std::set<int64_t> out;
  std::vector<int64_t> at = first;
  for (size_t d = 0; d < shape.size(); ++d)
    if (first[d] == last[d]) return out;
  while (true) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + at[d];
    out.insert(flat);
    size_t d = shape.size();
    while (d-- > 0) {
      if (++at[d] < last[d]) break;
      at[d] = first[d];
    }
    if (d == static_cast<size_t>(-1)) return out;
  }
}

bool same_pieces(const Shape& a_shape, const AxisSpec& a, const Shape& b_shape, const AxisSpec& b,
                 const Shape& mesh_shape) {
  const int64_t devices = std::accumulate(mesh_shape.begin(), mesh_shape.end(), int64_t{1}, std::multiplies<>());
  for (int64_t id = 0; id < devices; ++id)
    if (held_elements(a_shape, a, mesh_shape, id) != held_elements(b_shape, b, mesh_shape, id)) return false;
  return true;
}

// Every spec of a `rank`-dimensional tensor over the mesh's axes: each axis
// on one dimension or none, in every order.
std::vector<AxisSpec> every_spec(size_t rank, size_t axes) {
  std::vector<AxisSpec> out;
  std::vector<int> order(axes);
  std::iota(order.begin(), order.end(), 0);
  do {
    size_t assignments = 1;
    for (size_t a = 0; a < axes; ++a) assignments *= rank + 1;
    for (size_t code = 0; code < assignments; ++code) {
      AxisSpec spec(rank);
      size_t rest = code;
      for (int axis : order) {
        const size_t dim = rest % (rank + 1);
        rest /= rank + 1;
        if (dim < rank) spec[dim].push_back(axis);
      }
      out.push_back(spec);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

PlannedTensor weight_laid_out(const Shape& shape, const AxisSpec& spec, const Shape& mesh_shape) {
  PlannedTensor weight;
  weight.shape = shape;
  weight.spec = spec;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t pieces = 1;
    for (int axis : spec[d]) pieces *= mesh_shape[axis];
    weight.split.push_back(pieces);
    weight.dims.push_back(std::string(1, static_cast<char>('a' + d)));
  }
  return weight;
}

}  // namespace

TEST_CASE("checkpoint_merges: neighbouring dimensions merged, and nothing else") {
  CHECK(checkpoint_merges({8, 8, 128, 8192}, {8192, 8192}) == Merges{{0, 1, 2}, {3}});
  CHECK(checkpoint_merges({8192, 8, 8, 128}, {8192, 8192}) == Merges{{0}, {1, 2, 3}});
  CHECK(checkpoint_merges({3, 4, 16}, {192}) == Merges{{0, 1, 2}});
  CHECK(checkpoint_merges({4, 16}, {4, 16}) == Merges{{0}, {1}});
  CHECK(checkpoint_merges({1, 4, 1, 8, 1}, {4, 8}) == Merges{{0, 1}, {2, 3, 4}});  // size-1 dimensions join a group
  CHECK(checkpoint_merges({4, 1}, {4, 1}) == Merges{{0}, {1}});
  CHECK(!checkpoint_merges({4, 16}, {16, 4}));       // reordered
  CHECK(!checkpoint_merges({4, 16}, {2, 32}));       // the first dimension split
  CHECK(!checkpoint_merges({4, 16}, {65}));          // another element count
  CHECK(!checkpoint_merges({4, 16}, {4, 16, 2}));    // more dimensions
  CHECK(!checkpoint_merges({4, 16}, {}));
}

TEST_CASE("checkpoint_view: the carried layout holds every device's elements, and none is missed") {
  struct Case {
    Shape shape, checkpoint, mesh;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {6, 4}, {2, 2}},   {{2, 3, 4}, {2, 12}, {2, 3}}, {{2, 4, 2}, {16}, {2, 2}},
      {{4, 2, 6}, {8, 6}, {2, 2, 2}}, {{2, 2, 4}, {2, 8}, {4, 2}},  {{3, 2, 2}, {12}, {3, 2}},
  };
  int carried = 0, refused = 0;
  for (const Case& c : cases) {
    CAPTURE(shape_to_string(c.shape));
    CAPTURE(shape_to_string(c.checkpoint));
    CAPTURE(shape_to_string(c.mesh));
    const Merges merges = *checkpoint_merges(c.shape, c.checkpoint);
    const std::vector<AxisSpec> on_checkpoint = every_spec(c.checkpoint.size(), c.mesh.size());
    for (const AxisSpec& spec : every_spec(c.shape.size(), c.mesh.size())) {
      const PlannedTensor weight = weight_laid_out(c.shape, spec, c.mesh);
      const CheckpointView view = checkpoint_view(weight, c.checkpoint, merges);
      CHECK(view.merges == merges);
      if (view.spec) {
        ++carried;
        CHECK(view.note.empty());
        CHECK(same_pieces(c.shape, spec, c.checkpoint, *view.spec, c.mesh));
        for (size_t k = 0; k < c.checkpoint.size(); ++k) {
          int64_t pieces = 1;
          for (int axis : (*view.spec)[k]) pieces *= c.mesh[axis];
          CHECK(view.split[k] == pieces);
        }
      } else {
        ++refused;
        CHECK(!view.note.empty());
        const bool any = std::any_of(on_checkpoint.begin(), on_checkpoint.end(), [&](const AxisSpec& other) {
          return same_pieces(c.shape, spec, c.checkpoint, other, c.mesh);
        });
        CHECK_MESSAGE(!any, view.note);
      }
    }
  }
  CHECK(carried > 100);  // both answers are exercised
  CHECK(refused > 100);
}

TEST_CASE("checkpoint_view: the note names the dimensions") {
  // GPT-2's fused c_attn [d, (q|k|v), heads, head dim] split over heads.
  const PlannedTensor c_attn = weight_laid_out({256, 3, 8, 32}, {{}, {}, {0}, {}}, {4});
  const CheckpointView view = checkpoint_view(c_attn, {256, 768}, *checkpoint_merges({256, 3, 8, 32}, {256, 768}));
  CHECK(!view.spec);
  CHECK(view.dims == std::vector<std::string>{"a", "bcd"});
  CHECK(view.split == std::vector<int64_t>{1, 4});
  CHECK(view.note ==
        "checkpoint dimension 1 (768) merges dimensions 1, 2, 3 of the weight's [256, 3, 8, 32]: dimension 2 is "
        "split 4 ways while dimension 1 is split 1 of 3, so a device's piece is not one block of it; hold the "
        "weight as [256, 3, 8, 32], a view of the checkpoint's tensor");
  const PlannedTensor uneven = weight_laid_out({3, 8}, {{0}, {}}, {2});
  CHECK(checkpoint_view(uneven, {24}, {{0, 1}}).note ==
        "checkpoint dimension 0 (24) merges dimensions 0, 1 of the weight's [3, 8]: dimension 0 (3) is split 2 "
        "ways unevenly, so the pieces are not the checkpoint's blocks; hold the weight as [3, 8], a view of the "
        "checkpoint's tensor");
}

TEST_CASE("checkpoint_shapes: the graph file's field reads back, and its errors name the field") {
  const std::string head = R"({"format": "pase-graph", "version": 1, "name": "t", "cutoff": 1,
    "tensors": {"x": [4, 8], "w": [2, 4, 8]}, "parameters": ["w"], )";
  const std::string nodes = R"("nodes": [{"name": "p", "op": "einsum", "equation": "bk,hnk->bhn", "inputs": ["x", "w"]}]})";
  const Graph graph = test::graph_from_json(head + R"("checkpoint_shapes": {"w": [8, 8]}, )" + nodes, "g.json");
  CHECK(graph.checkpoint_shapes == std::map<std::string, Shape>{{"w", {8, 8}}});
  const GraphFileV1 file = parse_graph_file(head + R"("checkpoint_shapes": {"w": [8, 8]}, )" + nodes, "g.json");
  CHECK(write_graph_file(parse_graph_file(write_graph_file(file), "g.json")) == write_graph_file(file));
  CHECK(write_graph_file(file).find("  \"checkpoint_shapes\": {\n    \"w\": [8,8]\n  },\n") != std::string::npos);

  auto error = [&](const std::string& field) {
    try {
      (void)test::graph_from_json(head + field + nodes, "g.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(R"("checkpoint_shapes": {"ww": [8, 8]}, )") ==
        "g.json: field 'checkpoint_shapes.ww': 'ww' names no weight (did you mean 'w'?)");
  CHECK(error(R"("checkpoint_shapes": {"w": [4, 16]}, )") ==
        "g.json: field 'checkpoint_shapes.w': [4, 16] is not the weight's shape [2, 4, 8] with neighbouring "
        "dimensions merged");
  CHECK(error(R"("checkpoint_shapes": {"x": [32]}, )") ==
        "g.json: field 'checkpoint_shapes.x': 'x' names no weight (did you mean 'w'?)");
  CHECK(error(R"("checkpoint_shapes": {"w": [8, -8]}, )").find("checkpoint shape of 'w'") != std::string::npos);
}
