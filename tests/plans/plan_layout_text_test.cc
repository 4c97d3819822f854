// The layout texts (plans/layout_text.h) against what they mean: the HLO
// text is read back by this test's own reader of XLA's HloSharding forms and
// must put every device on the tile the contract gives it (docs/plans.md);
// DTensor placements are read back by DTensor's left-to-right rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "plans/layout_text.h"

using namespace pase;

namespace {

Mesh make_mesh(std::vector<int64_t> shape, std::vector<std::string> axes) {
  Mesh mesh;
  mesh.shape = std::move(shape);
  mesh.axes = std::move(axes);
  return mesh;
}

std::vector<int64_t> numbers(const std::string& text) {
  std::vector<int64_t> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::stoll(item));
  return values;
}

std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    index[k] = flat % dims[k];
    flat /= dims[k];
  }
  return index;
}

int64_t ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t flat = 0;
  for (size_t k = 0; k < dims.size(); ++k) flat = flat * dims[k] + index[k];
  return flat;
}

// XLA's HloSharding text, read as XLA defines it: {replicated}, or
// {devices=[t…]IDS[ last_tile_dim_replicate]} where IDS is an explicit
// list or <=[r…] (iota(N).reshape(r…)) with an optional T(p…) (then
// .transpose(p…)); the tile array is those ids in row-major order over t….
// Returns, per device id, its tile index (the first `rank` coordinates).
std::vector<std::vector<int64_t>> read_hlo(const std::string& text, size_t rank, int64_t devices) {
  if (text == "{replicated}") return std::vector<std::vector<int64_t>>(devices, std::vector<int64_t>(rank, 0));
  REQUIRE(text.rfind("{devices=[", 0) == 0);
  REQUIRE(text.back() == '}');
  size_t close = text.find(']');
  std::vector<int64_t> tile = numbers(text.substr(10, close - 10));
  std::string rest = text.substr(close + 1, text.size() - close - 2);
  const std::string replicate = " last_tile_dim_replicate";
  bool replicated = rest.size() >= replicate.size() && rest.compare(rest.size() - replicate.size(), replicate.size(), replicate) == 0;
  if (replicated) rest.resize(rest.size() - replicate.size());
  REQUIRE(tile.size() == rank + (replicated ? 1 : 0));
  std::vector<int64_t> ids;
  if (rest.rfind("<=[", 0) == 0) {
    size_t end = rest.find(']');
    std::vector<int64_t> reshape = numbers(rest.substr(3, end - 3));
    std::vector<int64_t> perm;
    for (size_t k = 0; k < reshape.size(); ++k) perm.push_back(static_cast<int64_t>(k));
    if (end + 1 < rest.size()) {
      REQUIRE(rest.compare(end + 1, 2, "T(") == 0);
      REQUIRE(rest.back() == ')');
      perm = numbers(rest.substr(end + 3, rest.size() - end - 4));
    }
    REQUIRE(perm.size() == reshape.size());
    std::vector<int64_t> transposed;
    for (int64_t p : perm) transposed.push_back(reshape[p]);
    for (int64_t flat = 0; flat < devices; ++flat) {
      std::vector<int64_t> at = unravel(flat, transposed), source(reshape.size());
      for (size_t k = 0; k < perm.size(); ++k) source[perm[k]] = at[k];
      ids.push_back(ravel(source, reshape));  // iota: the value is the row-major position
    }
  } else {
    ids = numbers(rest);
  }
  REQUIRE(static_cast<int64_t>(ids.size()) == devices);
  std::vector<std::vector<int64_t>> tiles(devices);
  std::vector<char> seen(devices, 0);
  for (int64_t flat = 0; flat < devices; ++flat) {
    REQUIRE(ids[flat] >= 0);
    REQUIRE(ids[flat] < devices);
    REQUIRE(!seen[ids[flat]]);
    seen[ids[flat]] = 1;
    std::vector<int64_t> at = unravel(flat, tile);
    tiles[ids[flat]].assign(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(rank));
  }
  return tiles;
}

// The contract: device id = row-major coordinates, last axis fastest; its tile
// along dimension t is the mixed-radix number of its coordinates on spec[t].
std::vector<std::vector<int64_t>> contract_tiles(const AxisSpec& spec, const Mesh& mesh) {
  std::vector<std::vector<int64_t>> tiles;
  for (int64_t d = 0; d < mesh.devices(); ++d) {
    std::vector<int64_t> coords = unravel(d, mesh.shape), tile;
    for (const std::vector<int>& axes : spec) {
      int64_t block = 0;
      for (int axis : axes) block = block * mesh.shape[axis] + coords[axis];
      tile.push_back(block);
    }
    tiles.push_back(tile);
  }
  return tiles;
}

// DTensor's rule: a dimension sharded on several mesh axes is cut by them
// left to right in mesh order, the first most significant.
std::vector<std::vector<int64_t>> dtensor_tiles(const std::vector<std::string>& placements, size_t rank,
                                                const Mesh& mesh) {
  AxisSpec spec(rank);
  for (size_t a = 0; a < placements.size(); ++a)
    if (placements[a] != "Replicate()") {
      REQUIRE(placements[a].rfind("Shard(", 0) == 0);
      spec[std::stoul(placements[a].substr(6))].push_back(static_cast<int>(a));
    }
  return contract_tiles(spec, mesh);
}

// Calls `visit` with every spec of `rank` dimensions over the mesh: each axis
// in no dimension or in one, in every order within a dimension.
void every_spec(const Mesh& mesh, size_t rank, const std::function<void(const AxisSpec&)>& visit) {
  const size_t axes = mesh.shape.size();
  std::vector<size_t> where(axes, 0);  // 0: unused, t+1: dimension t
  while (true) {
    AxisSpec spec(rank);
    for (size_t a = 0; a < axes; ++a)
      if (where[a]) spec[where[a] - 1].push_back(static_cast<int>(a));
    std::function<void(size_t)> orders = [&](size_t t) {
      if (t == rank) return visit(spec);
      std::sort(spec[t].begin(), spec[t].end());
      do orders(t + 1);
      while (std::next_permutation(spec[t].begin(), spec[t].end()));
    };
    orders(0);
    size_t a = 0;
    for (; a < axes; ++a) {
      if (++where[a] <= rank) break;
      where[a] = 0;
    }
    if (a == axes) return;
  }
}

std::vector<int64_t> split_of(const AxisSpec& spec, const Mesh& mesh) { return spec_split(spec, mesh); }

}  // namespace

TEST_CASE("layout texts: the contract's examples") {
  Mesh mesh = make_mesh({2, 4}, {"x0", "x1"});
  AxisSpec spec = {{}, {0}};
  CHECK(jax_partition_spec(spec, mesh) == "P(None, 'x0')");
  CHECK(hlo_sharding(spec, mesh) == "{devices=[1,2,4]<=[8] last_tile_dim_replicate}");
  DtensorLayout dtensor = dtensor_placements(spec, mesh);
  REQUIRE(dtensor.placements);
  CHECK(*dtensor.placements == std::vector<std::string>{"Shard(1)", "Replicate()"});
  CHECK(dtensor.note == "");

  CHECK(jax_partition_spec({{}, {0, 1}}, mesh) == "P(None, ('x0', 'x1'))");
  CHECK(jax_partition_spec({{1}, {0}}, mesh) == "P('x1', 'x0')");
  CHECK(jax_partition_spec({}, mesh) == "P()");
  CHECK(hlo_sharding({{}, {}}, mesh) == "{replicated}");
  CHECK(hlo_sharding({}, mesh) == "{replicated}");
  CHECK(hlo_sharding({{0}, {1}}, mesh) == "{devices=[2,4]<=[8]}");
  CHECK(hlo_sharding({{1}, {0}}, mesh) == "{devices=[4,2]<=[2,4]T(1,0)}");
  CHECK(hlo_sharding({{1, 0}}, mesh) == "{devices=[8]<=[2,4]T(1,0)}");
  CHECK(hlo_sharding({{}, {1}}, mesh) == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  CHECK(split_of({{}, {1, 0}}, mesh) == std::vector<int64_t>{1, 8});
}

TEST_CASE("layout texts: DTensor's left-to-right rule") {
  Mesh mesh = make_mesh({2, 4}, {"x0", "x1"});
  DtensorLayout in_order = dtensor_placements({{}, {0, 1}}, mesh);
  REQUIRE(in_order.placements);
  CHECK(*in_order.placements == std::vector<std::string>{"Shard(1)", "Shard(1)"});
  DtensorLayout reversed = dtensor_placements({{}, {1, 0}}, mesh);
  CHECK(!reversed.placements);
  CHECK(reversed.note ==
        "dimension 1 runs over x1, x0 with x1 before x0, but DTensor shards a dimension over several mesh axes in mesh "
        "order (x0 major)");
  // An axis of size 1 cuts nothing, so its place in the order does not matter.
  Mesh with_one = make_mesh({1, 4}, {"a", "b"});
  DtensorLayout ones = dtensor_placements({{1, 0}}, with_one);
  REQUIRE(ones.placements);
  CHECK(*ones.placements == std::vector<std::string>{"Shard(0)", "Shard(0)"});
}

TEST_CASE("layout texts: every spec's HLO and DTensor texts mean the contract's tiles") {
  const std::vector<Mesh> meshes = {make_mesh({2, 4}, {"x0", "x1"}), make_mesh({3, 2, 2}, {"dp", "tp", "sp"}),
                                    make_mesh({8}, {"x"}), make_mesh({2, 1, 3}, {"a", "b", "c"}),
                                    make_mesh({1}, {"one"}), make_mesh({2, 3, 2, 2}, {"p", "q", "r", "s"})};
  for (const Mesh& mesh : meshes)
    for (size_t rank = 0; rank <= 3; ++rank) {
      int specs = 0;
      every_spec(mesh, rank, [&](const AxisSpec& spec) {
        ++specs;
        const std::string hlo = hlo_sharding(spec, mesh);
        CAPTURE(hlo);
        CAPTURE(jax_partition_spec(spec, mesh));
        const auto want = contract_tiles(spec, mesh);
        CHECK(read_hlo(hlo, rank, mesh.devices()) == want);
        // The tile sizes are the splits, with a replication dimension exactly
        // when some axis is in no dimension's list.
        bool all_used = true, none_used = true;
        for (size_t a = 0; a < mesh.shape.size(); ++a) {
          bool used = false;
          for (const auto& axes : spec) used = used || std::find(axes.begin(), axes.end(), a) != axes.end();
          all_used = all_used && used;
          none_used = none_used && !used;
        }
        if (none_used) {
          CHECK(hlo == "{replicated}");
        } else {
          std::string tile;
          for (int64_t s : split_of(spec, mesh)) tile += (tile.empty() ? "" : ",") + std::to_string(s);
          CHECK(hlo.rfind("{devices=[" + tile + (all_used ? "]" : ","), 0) == 0);
          CHECK((hlo.find("last_tile_dim_replicate") != std::string::npos) == !all_used);
        }
        // The library's reader agrees with this one.
        std::string error;
        auto library = hlo_device_tiles(hlo, rank, mesh.devices(), error);
        REQUIRE(library);
        CHECK(*library == want);

        DtensorLayout dtensor = dtensor_placements(spec, mesh);
        if (dtensor.placements) {
          CHECK(dtensor.note == "");
          CHECK(dtensor_tiles(*dtensor.placements, rank, mesh) == want);
        } else {
          CHECK(dtensor.note != "");
          // The same axes in mesh order would lay the tensor out differently.
          AxisSpec sorted = spec;
          for (auto& axes : sorted) std::sort(axes.begin(), axes.end());
          CHECK(contract_tiles(sorted, mesh) != want);
        }
      });
      CHECK(specs > 0);
    }
}

TEST_CASE("HLO reader: explicit device lists and iota forms agree") {
  // Mesh [2, 4]: dimension 0 over x1, dimension 1 over x0.
  CHECK(read_hlo("{devices=[4,2]0,4,1,5,2,6,3,7}", 2, 8) == read_hlo("{devices=[4,2]<=[2,4]T(1,0)}", 2, 8));
  // Mesh [3, 2, 2]: dimension 0 over (sp, tp), replicated over dp.
  CHECK(read_hlo("{devices=[4,3]0,4,8,2,6,10,1,5,9,3,7,11 last_tile_dim_replicate}", 1, 12) ==
        read_hlo("{devices=[4,3]<=[3,2,2]T(2,1,0) last_tile_dim_replicate}", 1, 12));
  Mesh mesh = make_mesh({3, 2, 2}, {"dp", "tp", "sp"});
  CHECK(read_hlo("{devices=[4,3]0,4,8,2,6,10,1,5,9,3,7,11 last_tile_dim_replicate}", 1, 12) ==
        contract_tiles({{2, 1}}, mesh));
  std::string error;
  auto explicit_list = hlo_device_tiles("{devices=[4,3]0,4,8,2,6,10,1,5,9,3,7,11 last_tile_dim_replicate}", 1, 12, error);
  REQUIRE(explicit_list);
  CHECK(*explicit_list == contract_tiles({{2, 1}}, mesh));
}

TEST_CASE("hlo_device_tiles: malformed texts") {
  std::string error;
  CHECK(!hlo_device_tiles("{maximal device=0}", 1, 8, error));
  CHECK(error == "expected {replicated} or {devices=[...]...}");
  CHECK(!hlo_device_tiles("{devices=[2,4]<=[8]}", 1, 8, error));
  CHECK(error == "2 tile sizes for a tensor of rank 1");
  CHECK(!hlo_device_tiles("{devices=[2,2]<=[8]}", 2, 8, error));
  CHECK(error == "the tile sizes [2, 2] do not multiply to the mesh's 8 devices");
  CHECK(!hlo_device_tiles("{devices=[2,4]0,1,2,3,4,5,6,6}", 2, 8, error));
  CHECK(error == "the device list is not a permutation of 0..7");
  CHECK(!hlo_device_tiles("{devices=[2,4]<=[2,4]T(0,0)}", 2, 8, error));
  CHECK(error == "T[0, 0] is not a permutation of the 2 iota dimensions");
  CHECK(!hlo_device_tiles("{devices=[2,4]<=[8] last_tile_dims={0}}", 2, 8, error));
  CHECK(error == "unexpected text before the closing }");
}
