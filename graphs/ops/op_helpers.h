#pragma once
// Pieces several op definitions share: same-shape domains, split maps, and
// the work of a GEMM layer.
#include <string>
#include <utility>
#include <vector>

#include "graphs/layer_work.h"
#include "graphs/node_context.h"
#include "graphs/vertex_model.h"

namespace pase::ops {

/// Tensor dimension i follows domain dimension i.
[[nodiscard]] SplitMap identity_map(size_t rank);

/// "abcd…" for a rank-`rank` domain.
[[nodiscard]] std::string generic_letters(size_t rank);

/// The model of an op whose domain is a tensor's shape: every dimension
/// splittable, every input and output split as the configuration.
[[nodiscard]] VertexModel shape_domain(OpKind kind, const Shape& shape, size_t input_count, size_t output_count);

/// Positions of `letters` in `domain`.
[[nodiscard]] std::vector<int> indices_of(const std::string& letters, const std::string& domain);

/// The tensor dimensions of `term` follow the domain letters of the same name.
[[nodiscard]] SplitMap letters_map(const std::string& term, const std::string& domain);

/// Per-device elements of the whole domain: Π d_i / c_i.
[[nodiscard]] double domain_elements(const VertexModel& model, const int32_t* config);

/// Work of one operation per element of the domain (a comparison, a write or
/// an addition each): argmax, cumsum, one_hot, scatter, scatter_nd, topk.
void describe_one_per_element(const VertexModel& model, const int32_t* config, LayerWork& work);

/// Work of a GEMM layer: its shape from model.work's roles.
void describe_gemm(const VertexModel& model, const int32_t* config, LayerWork& work);

/// The output height and width of a window op (conv2d, pool2d) over the
/// (b, c, h, w) input `x`; `field` names the window in errors.
[[nodiscard]] std::pair<int64_t, int64_t> window_output(const NodeContext& node, const std::string& field, const Shape& x,
                                                       const HeightWidth& window, const HeightWidth& padding,
                                                       const HeightWidth& stride);

/// The vertices a node becomes, moved into the list (a braced list would
/// copy each vertex, its inputs and names included).
[[nodiscard]] std::vector<Vertex> lowered_to(Vertex vertex);
[[nodiscard]] std::vector<Vertex> lowered_to(Vertex first, Vertex second);

/// The one input, unchanged: ops whose output has their input's shape.
[[nodiscard]] std::vector<Vertex> same_shape_output(Vertex vertex);

}  // namespace pase::ops
