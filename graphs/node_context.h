#pragma once
// What an op's shape inference sees of one graph-file node, with the checks
// every op uses. Each check throws InputError naming file, node and field.
#include <optional>
#include <string>
#include <vector>

#include "graphs/graph_file.h"
#include "base/shape.h"

namespace pase {

/// One node under inference: its fields, its inputs' shapes, and the checks.
class NodeContext {
 public:
  NodeContext(const NodeV1& node, const std::vector<Shape>& input_shapes, const std::vector<bool>& input_is_external,
              const std::string& source)
      : node_(node), in_(input_shapes), external_(input_is_external), source_(source) {}

  [[nodiscard]] const NodeV1& node() const { return node_; }
  [[nodiscard]] const std::vector<Shape>& inputs() const { return in_; }
  [[nodiscard]] const Shape& input(size_t j) const { return in_[j]; }
  [[nodiscard]] bool input_is_external(size_t j) const { return external_[j]; }

  /// The value of a field the op lists as required (the reader checked it is present).
  template <typename T>
  [[nodiscard]] const T& required(const std::optional<T>& field, const char* field_name) const {
    if (!field) fail(field_name, "missing (required by op '" + node_.op + "')");
    return *field;
  }

  [[noreturn]] void fail(const std::string& field, const std::string& message) const;
  /// Axis in [-rank, rank) (or [-rank-1, rank] with allow_end) made non-negative.
  [[nodiscard]] int normalise_axis(const std::string& field, int64_t axis, size_t rank, bool allow_end = false) const;
  void expect_rank(size_t input, size_t rank, const std::string& what) const;
  /// All inputs from `from` on have input 0's shape.
  void expect_same_shapes(size_t from, const std::string& what) const;
  /// a + b, a − b and a · b on sizes from the file, or "FIELD: size arithmetic overflows 64 bits: a + b".
  [[nodiscard]] int64_t add(const std::string& field, int64_t a, int64_t b) const;
  [[nodiscard]] int64_t sub(const std::string& field, int64_t a, int64_t b) const;
  [[nodiscard]] int64_t mul(const std::string& field, int64_t a, int64_t b) const;
  /// Every size positive and the product within 2^63.
  [[nodiscard]] Shape checked(const std::string& field, const Shape& shape) const;
  /// A weight the op owns has at most 2^63 elements (its shape is computed, not read).
  void check_weight(const std::string& field, const Shape& weight) const;
  /// floor((in + 2·pad − window) / stride) + 1, refusing a window larger than the padded input;
  /// `field` names the window, overflow of the padded size is the padding's.
  [[nodiscard]] int64_t window_extent(const std::string& field, int64_t in, int64_t window, int64_t pad,
                                      int64_t stride) const;

 private:
  const NodeV1& node_;
  const std::vector<Shape>& in_;
  const std::vector<bool>& external_;
  const std::string& source_;
};

}  // namespace pase
