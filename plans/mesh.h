#pragma once
// Device meshes (docs/plans.md): the default mesh, the `--mesh` syntax, and
// which configurations a mesh can realize and how.
#include <cstdint>
#include <string>
#include <vector>

#include "plans/plan.h"

namespace pase {

/// The prime factors of `devices`, largest first, as axes "x0", "x1", …
/// (8 -> [2, 2, 2], 12 -> [3, 2, 2], 1 -> one axis of size 1).
[[nodiscard]] Mesh default_mesh(int64_t devices, int64_t devices_per_node);

/// The meshes `--mesh search` tries: dp=N/t,tp=t for every t that divides
/// the devices of a node and the device count, largest t first. Device ids
/// are row-major, so the tp axis lies inside a node and dp runs across nodes
/// (and over the rest of a node when t is smaller than one).
[[nodiscard]] std::vector<Mesh> node_meshes(int64_t devices, int64_t devices_per_node);

/// "auto", "2x4" (axes x0, x1) or "dp=2,tp=4" (named axes). Throws
/// OptionError (option "mesh") with one line: a malformed shape, a size
/// below 1, a repeated or malformed axis name, or sizes whose product is not
/// `devices`.
[[nodiscard]] Mesh parse_mesh(const std::string& text, int64_t devices, int64_t devices_per_node);

/// Every way to give each domain dimension with split > 1 an ordered list of
/// distinct mesh axes whose sizes multiply to its split (major first), in a
/// fixed order: the assignment using axes in mesh order comes first. At most
/// `limit` are returned; `complete` says whether that was all of them.
struct AxisAssignments {
  std::vector<std::vector<std::vector<int>>> list;  ///< [assignment][domain dim] -> axes
  bool complete = true;
};
[[nodiscard]] AxisAssignments axis_assignments(const Mesh& mesh, const int32_t* config, int rank, size_t limit);

/// The assignments of axis_assignments on every mesh of two axes the mesh's
/// axes group into (its first a axes, and the rest), written in the mesh's
/// own axes, each once. On the mesh of prime factors these are the layouts
/// of every mesh dp=N/t,tp=t whose t is a product of its last factors, with
/// the same devices holding the same tiles: the layouts `node_meshes` offers,
/// on one mesh and mixed layer by layer, at tens a configuration where every
/// assignment would be thousands. (Three groups would add a third split at a
/// few hundred layouts a layer: llama2-7b at 64 devices gained 1.4% in cost
/// and took 400 times as long.) At most `limit`.
[[nodiscard]] AxisAssignments grouped_assignments(const Mesh& mesh, const int32_t* config, int rank, size_t limit);

/// Which layouts a search over a mesh's layouts weighs: every assignment, or
/// the grouped ones (what the mesh of prime factors searches: its every
/// assignment is too many).
enum class LayoutSpace { Every, Grouped };
/// The layouts a search weighs on `mesh`: every one on a mesh of up to
/// three axes (of size above 1), the grouped ones on more (the mesh of prime
/// factors of 16 devices and up).
[[nodiscard]] LayoutSpace layout_space(const Mesh& mesh);
[[nodiscard]] AxisAssignments layouts_in(LayoutSpace space, const Mesh& mesh, const int32_t* config, int rank,
                                         size_t limit);

/// Whether some axis assignment exists for the configuration.
[[nodiscard]] bool realizable(const Mesh& mesh, const int32_t* config, int rank);

}  // namespace pase
