#include "costmodel/model_key.h"

#include <cstring>
#include <type_traits>

namespace pase {
namespace {

// Appends fixed-width values, and a length before every sequence, so that
// distinct models cannot produce the same bytes.
class KeyWriter {
 public:
  template <typename T>
  void value(T x) {
    static_assert(std::is_trivially_copyable_v<T>);
    char bytes[sizeof(T)];
    std::memcpy(bytes, &x, sizeof(T));
    key_.append(bytes, sizeof(T));
  }
  template <typename T>
  void sequence(const std::vector<T>& items) {
    value<uint64_t>(items.size());
    for (const T& item : items) value(item);
  }
  void text(const std::string& s) {
    value<uint64_t>(s.size());
    key_ += s;
  }
  void split_map(const SplitMap& map) {
    value<uint64_t>(map.size());
    for (const std::vector<int>& dims : map) sequence(dims);
  }
  void split_maps(const std::vector<SplitMap>& maps) {
    value<uint64_t>(maps.size());
    for (const SplitMap& map : maps) split_map(map);
  }
  std::string take() { return std::move(key_); }

 private:
  std::string key_;
};

}  // namespace

std::string model_key(const VertexModel& model) {
  KeyWriter w;
  w.value(model.kind);
  w.text(model.letters);
  w.sequence(model.domain);
  w.sequence(model.splittable);
  w.value(model.contiguous_only);
  w.split_maps(model.inputs);
  w.split_maps(model.outputs);
  w.value<uint64_t>(model.weights.size());
  for (const WeightTensor& weight : model.weights) {
    w.text(weight.role);
    w.sequence(weight.shape);
    w.split_map(weight.split);
  }
  const WorkParams& p = model.work;
  w.sequence(p.batch);
  w.sequence(p.m);
  w.sequence(p.n);
  w.sequence(p.k);
  w.value(p.n_scale);
  w.value(p.k_scale);
  w.value(p.pointwise);
  w.value(p.weight_operand);
  w.value(p.axis);
  w.sequence(p.axes);
  w.value(p.in_h);
  w.value(p.in_w);
  w.value(p.window_r);
  w.value(p.window_s);
  w.value(model.recompute);
  w.value(model.zero);
  w.value(model.fused_scores);
  w.value(static_cast<int>(model.sequence_parallel));
  return w.take();
}

}  // namespace pase
