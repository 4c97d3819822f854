#include "graphs/ops/op_helpers.h"

namespace pase::ops {

SplitMap identity_map(size_t rank) {
  SplitMap map(rank);
  for (size_t i = 0; i < rank; ++i) map[i] = {static_cast<int>(i)};
  return map;
}

std::string generic_letters(size_t rank) {
  static const std::string alphabet = "abcdefghijklmnopqrstuvwxyz";
  std::string letters;
  for (size_t i = 0; i < rank; ++i) letters += i < alphabet.size() ? alphabet[i] : '?';
  return letters;
}

VertexModel shape_domain(OpKind kind, const Shape& shape, size_t input_count, size_t output_count) {
  VertexModel m;
  m.kind = kind;
  m.domain = shape;
  m.letters = generic_letters(shape.size());
  m.splittable.assign(shape.size(), 1);
  m.inputs.assign(input_count, identity_map(shape.size()));
  m.outputs.assign(output_count, identity_map(shape.size()));
  return m;
}

std::vector<int> indices_of(const std::string& letters, const std::string& domain) {
  std::vector<int> out;
  for (char c : letters) out.push_back(static_cast<int>(domain.find(c)));
  return out;
}

SplitMap letters_map(const std::string& term, const std::string& domain) {
  SplitMap map;
  for (int index : indices_of(term, domain)) map.push_back({index});
  return map;
}

double domain_elements(const VertexModel& model, const int32_t* config) {
  double elements = 1;
  for (int d = 0; d < static_cast<int>(model.domain.size()); ++d) elements *= per_device(model, config, d);
  return elements;
}

void describe_one_per_element(const VertexModel& model, const int32_t* config, LayerWork& work) {
  work.pointwise = domain_elements(model, config);
}

void describe_gemm(const VertexModel& model, const int32_t* config, LayerWork& work) {
  work.has_gemm = true;
  work.gemm = gemm_shape(model, config);
}

std::pair<int64_t, int64_t> window_output(const NodeContext& node, const std::string& field, const Shape& x,
                                          const HeightWidth& window, const HeightWidth& padding, const HeightWidth& stride) {
  return {node.window_extent(field, x[2], window.h, padding.h, stride.h),
          node.window_extent(field, x[3], window.w, padding.w, stride.w)};
}

std::vector<Vertex> lowered_to(Vertex vertex) {
  std::vector<Vertex> list;
  list.push_back(std::move(vertex));
  return list;
}

std::vector<Vertex> lowered_to(Vertex first, Vertex second) {
  std::vector<Vertex> list;
  list.reserve(2);
  list.push_back(std::move(first));
  list.push_back(std::move(second));
  return list;
}

std::vector<Vertex> same_shape_output(Vertex vertex) {
  vertex.outputs = {vertex.inputs[0].shape};
  return lowered_to(std::move(vertex));
}

}  // namespace pase::ops
