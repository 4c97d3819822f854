#include "onnximport/constant_value.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "base/checked_math.h"
#include "onnximport/onnx_model.h"

namespace pase {
namespace {

using Tensor = onnx::TensorProto;

bool is_float_type(int32_t type) {
  return type == Tensor::FLOAT || type == Tensor::DOUBLE || type == Tensor::FLOAT16 || type == Tensor::BFLOAT16;
}

// The number of elements, or kMaxConstantElements + 1 for anything bigger
// (or with a negative size). Sizes of 0 count as 1 on the way, so every
// partial product the evaluator forms (strides, outer and inner counts) is
// also bounded when the result is.
int64_t element_count(const Shape& dims) {
  int64_t bound = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return kMaxConstantElements + 1;
    empty = empty || d == 0;
    std::optional<int64_t> next = checked_mul(bound, std::max<int64_t>(d, 1));
    if (!next || *next > kMaxConstantElements) return kMaxConstantElements + 1;
    bound = *next;
  }
  return empty ? 0 : bound;
}

// Its dims within the limit and its data one value per element: what every
// computation below assumes of its operands.
bool well_formed(const ConstantValue& v) {
  const int64_t count = element_count(v.dims);
  return count <= kMaxConstantElements && static_cast<int64_t>(v.data.size()) == count;
}

[[noreturn]] void invalid(const std::string& message) { throw InvalidConstantNode(message); }

// A double as a float or an int32 without undefined behaviour: out of range saturates.
float to_float(double value) {
  if (value > FLT_MAX) return std::numeric_limits<float>::infinity();
  if (value < -FLT_MAX) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(value);
}

int32_t to_int32(double value) {
  if (!(value == value)) return 0;  // NaN
  return static_cast<int32_t>(std::clamp(value, -2147483648.0, 2147483647.0));
}

// Rounds a computed value to what the element type can hold (ints truncate toward zero).
double to_type(double value, int32_t type) {
  if (type == Tensor::BOOL) return value != 0 ? 1 : 0;
  if (is_float_type(type)) return type == Tensor::FLOAT ? static_cast<double>(to_float(value)) : value;
  if (!std::isfinite(value)) return value > 0 ? 9.2e18 : -9.2e18;
  return std::trunc(value);
}

template <typename T>
void append_raw(const std::string& raw, std::vector<double>& out) {
  size_t n = raw.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T item;
    std::memcpy(&item, raw.data() + i * sizeof(T), sizeof(T));
    out.push_back(static_cast<double>(item));
  }
}

ConstantValue make(int32_t type, Shape dims) {
  ConstantValue value;
  value.type = type;
  value.dims = std::move(dims);
  return value;
}

ConstantValue scalar_or_vector(int32_t type, const std::vector<double>& data, bool scalar) {
  ConstantValue value = make(type, scalar ? Shape{} : Shape{static_cast<int64_t>(data.size())});
  value.data = data;
  return value;
}

std::vector<int64_t> strides_of(const Shape& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// Numpy broadcasting of several operands to one output shape.
std::optional<Shape> broadcast_dims(const std::vector<const ConstantValue*>& operands) {
  size_t rank = 0;
  for (const ConstantValue* v : operands) rank = std::max(rank, v->dims.size());
  Shape out(rank, 1);
  for (const ConstantValue* v : operands) {
    size_t offset = rank - v->dims.size();
    for (size_t d = 0; d < v->dims.size(); ++d) {
      int64_t size = v->dims[d];
      if (size == out[offset + d] || size == 1) continue;
      if (out[offset + d] != 1) return std::nullopt;
      out[offset + d] = size;
    }
  }
  return out;
}

// Flat index into `v` of the element that broadcasts to flat output index `flat`.
int64_t broadcast_index(const ConstantValue& v, const Shape& out_dims, const std::vector<int64_t>& out_strides, int64_t flat) {
  size_t offset = out_dims.size() - v.dims.size();
  int64_t index = 0, stride = 1;
  for (size_t d = v.dims.size(); d-- > 0;) {
    int64_t coordinate = (flat / out_strides[offset + d]) % out_dims[offset + d];
    if (v.dims[d] != 1) index += coordinate * stride;
    stride *= v.dims[d];
  }
  return index;
}

std::optional<ConstantValue> elementwise(const std::vector<const ConstantValue*>& operands, int32_t type,
                                         const std::function<double(const std::vector<double>&)>& f) {
  std::optional<Shape> dims = broadcast_dims(operands);
  if (!dims || element_count(*dims) > kMaxConstantElements) return std::nullopt;
  ConstantValue out = make(type, *dims);
  std::vector<int64_t> strides = strides_of(*dims);
  int64_t count = element_count(*dims);
  std::vector<double> args(operands.size());
  for (int64_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < operands.size(); ++k) args[k] = operands[k]->data[broadcast_index(*operands[k], *dims, strides, i)];
    out.data.push_back(to_type(f(args), type));
  }
  return out;
}

// Normalises an axis for rank `rank`; nullopt when out of range.
std::optional<int64_t> axis_in(int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return std::nullopt;
  return axis;
}

// Saturating; NaN (no integer at all) reads as 0, which no caller takes for a real size.
int64_t to_int64(double x) {
  if (!(x == x)) return 0;
  return x >= 9.2e18 ? std::numeric_limits<int64_t>::max() : x <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                                                                          : static_cast<int64_t>(x);
}

std::vector<int64_t> as_ints(const ConstantValue& v) {
  std::vector<int64_t> out;
  out.reserve(v.data.size());
  for (double x : v.data) out.push_back(to_int64(x));
  return out;
}

std::optional<ConstantValue> slice(const ConstantValue& data, std::vector<int64_t> starts, std::vector<int64_t> ends,
                                   std::vector<int64_t> axes, std::vector<int64_t> steps) {
  size_t rank = data.dims.size();
  if (axes.empty())
    for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size()) return std::nullopt;
  std::vector<int64_t> begin(rank, 0), step(rank, 1);
  Shape out_dims = data.dims;
  for (size_t k = 0; k < axes.size(); ++k) {
    std::optional<int64_t> axis = axis_in(axes[k], rank);
    if (!axis || steps[k] == 0) return std::nullopt;
    int64_t size = data.dims[*axis], s = starts[k], e = ends[k];
    // A step longer than the axis takes one element either way; clamping it
    // keeps every index below within the (small) element count.
    int64_t st = std::clamp<int64_t>(steps[k], -size - 1, size + 1);
    if (s < 0) s += size;
    if (e < 0) e += size;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, size);
      e = std::clamp<int64_t>(e, 0, size);
      out_dims[*axis] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, size - 1);
      e = std::clamp<int64_t>(e, -1, size - 1);
      out_dims[*axis] = s > e ? (s - e - st - 1) / -st : 0;
    }
    begin[*axis] = s;
    step[*axis] = st;
  }
  ConstantValue out = make(data.type, out_dims);
  std::vector<int64_t> in_strides = strides_of(data.dims), out_strides = strides_of(out_dims);
  int64_t count = element_count(out_dims);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = 0;
    for (size_t d = 0; d < rank; ++d) index += (begin[d] + ((i / out_strides[d]) % out_dims[d]) * step[d]) * in_strides[d];
    out.data.push_back(data.data[index]);
  }
  return out;
}

// Output dims of Reshape (allowzero = 0: a 0 copies the input's size).
std::optional<Shape> reshape_dims(const Shape& in, const std::vector<int64_t>& target) {
  Shape out;
  int unknown = -1;
  int64_t known = 1;
  const int64_t total = element_count(in);  // `in` is well formed
  for (size_t d = 0; d < target.size(); ++d) {
    int64_t size = target[d];
    if (size == 0 && d < in.size()) size = in[d];
    if (size == -1) {
      if (unknown >= 0) return std::nullopt;
      unknown = static_cast<int>(d);
    } else {
      if (size < 0) return std::nullopt;
      std::optional<int64_t> next = checked_mul(known, size);
      if (!next) return std::nullopt;  // more than `total` whatever the rest
      known = *next;
    }
    out.push_back(size);
  }
  if (unknown >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    out[unknown] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return out;
}

std::optional<ConstantValue> attribute_value(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "value") return constant_from_tensor(a.t());
    if (a.name() == "value_int") return scalar_or_vector(Tensor::INT64, {static_cast<double>(a.i())}, true);
    if (a.name() == "value_float") return scalar_or_vector(Tensor::FLOAT, {static_cast<double>(a.f())}, true);
    if (a.name() == "value_ints") {
      std::vector<double> data(a.ints().begin(), a.ints().end());
      return scalar_or_vector(Tensor::INT64, data, false);
    }
    if (a.name() == "value_floats") {
      std::vector<double> data(a.floats().begin(), a.floats().end());
      return scalar_or_vector(Tensor::FLOAT, data, false);
    }
  }
  return std::nullopt;
}

double binary(const std::string& op, double a, double b, bool integer) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return b == 0 ? 0 : (integer ? std::trunc(a / b) : a / b);
  if (op == "Mod") return b == 0 ? 0 : a - std::floor(a / b) * b;
  if (op == "Pow") return std::pow(a, b);
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "Equal") return a == b;
  if (op == "Less") return a < b;
  if (op == "LessOrEqual") return a <= b;
  if (op == "Greater") return a > b;
  if (op == "GreaterOrEqual") return a >= b;
  if (op == "And") return (a != 0) && (b != 0);
  if (op == "Or") return (a != 0) || (b != 0);
  return 0;
}

double unary(const std::string& op, double a) {
  if (op == "Neg") return -a;
  if (op == "Abs") return std::fabs(a);
  if (op == "Sqrt") return std::sqrt(a);
  if (op == "Floor") return std::floor(a);
  if (op == "Ceil") return std::ceil(a);
  if (op == "Not") return a == 0;
  if (op == "Reciprocal") return a == 0 ? 0 : 1 / a;
  if (op == "Relu") return std::max(a, 0.0);
  return a;  // Identity
}

}  // namespace

std::optional<ConstantValue> constant_from_tensor(const onnx::TensorProto& tensor) {
  if (tensor.data_location() == Tensor::EXTERNAL) return std::nullopt;
  ConstantValue value = make(tensor.data_type(), Shape(tensor.dims().begin(), tensor.dims().end()));
  int64_t count = element_count(value.dims);
  if (count > kMaxConstantElements) return std::nullopt;
  const std::string& raw = tensor.raw_data();
  switch (tensor.data_type()) {
    case Tensor::FLOAT:
      if (!raw.empty()) append_raw<float>(raw, value.data);
      for (float x : tensor.float_data()) value.data.push_back(x);
      break;
    case Tensor::DOUBLE:
      if (!raw.empty()) append_raw<double>(raw, value.data);
      for (double x : tensor.double_data()) value.data.push_back(x);
      break;
    case Tensor::INT64:
      if (!raw.empty()) append_raw<int64_t>(raw, value.data);
      for (int64_t x : tensor.int64_data()) value.data.push_back(static_cast<double>(x));
      break;
    case Tensor::INT32:
    case Tensor::INT16:
    case Tensor::INT8:
    case Tensor::UINT8:
    case Tensor::UINT16:
    case Tensor::BOOL:
      if (!raw.empty()) {
        if (tensor.data_type() == Tensor::INT32) append_raw<int32_t>(raw, value.data);
        else if (tensor.data_type() == Tensor::INT16) append_raw<int16_t>(raw, value.data);
        else if (tensor.data_type() == Tensor::UINT16) append_raw<uint16_t>(raw, value.data);
        else if (tensor.data_type() == Tensor::INT8) append_raw<int8_t>(raw, value.data);
        else append_raw<uint8_t>(raw, value.data);
      }
      for (int32_t x : tensor.int32_data()) value.data.push_back(x);
      break;
    default:
      return std::nullopt;
  }
  if (static_cast<int64_t>(value.data.size()) != count) return std::nullopt;
  return value;
}

onnx::TensorProto constant_to_tensor(const ConstantValue& value, const std::string& name) {
  Tensor tensor;
  tensor.set_name(name);
  for (int64_t d : value.dims) tensor.add_dims(d);
  switch (value.type) {
    case Tensor::FLOAT:
      tensor.set_data_type(Tensor::FLOAT);
      for (double x : value.data) tensor.add_float_data(to_float(x));
      break;
    case Tensor::DOUBLE:
      tensor.set_data_type(Tensor::DOUBLE);
      for (double x : value.data) tensor.add_double_data(x);
      break;
    case Tensor::INT32:
    case Tensor::INT16:
    case Tensor::INT8:
    case Tensor::UINT8:
    case Tensor::UINT16:
    case Tensor::BOOL:
      tensor.set_data_type(value.type);
      for (double x : value.data) tensor.add_int32_data(to_int32(x));
      break;
    default:
      tensor.set_data_type(Tensor::INT64);
      for (int64_t x : as_ints(value)) tensor.add_int64_data(x);
      break;
  }
  return tensor;
}

namespace {

// The values of a node's inputs, all known (an empty input name: null).
struct KnownInputs {
  const onnx::NodeProto& node;
  std::vector<const ConstantValue*> in;
  int64_t opset;

  [[nodiscard]] std::optional<std::vector<int64_t>> ints(size_t k) const {
    if (k >= in.size() || !in[k]) return std::nullopt;
    return as_ints(*in[k]);
  }
};

using Result = std::optional<std::vector<ConstantValue>>;
using Evaluator = Result (*)(const KnownInputs&);

Result one(std::optional<ConstantValue> v) {
  if (!v) return std::nullopt;
  return std::vector<ConstantValue>{std::move(*v)};
}

// Shape and Size need only the input's shape.
Result shape_or_size(const onnx::NodeProto& node, const ConstantLookup& lookup) {
  const Shape* shape = node.input_size() ? lookup.shape(node.input(0)) : nullptr;
  if (!shape) return std::nullopt;
  if (node.op_type() == "Size") {
    double total = 1;
    for (int64_t d : *shape) total *= static_cast<double>(d);
    return one(scalar_or_vector(Tensor::INT64, {total}, true));
  }
  int64_t rank = static_cast<int64_t>(shape->size());
  int64_t start = int_attribute(node, "start", 0), end = int_attribute(node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<double> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(static_cast<double>((*shape)[d]));
  return one(scalar_or_vector(Tensor::INT64, dims, false));
}

Result unary_op(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const std::string& op = known.node.op_type();
  return one(elementwise({&x}, x.type, [&](const std::vector<double>& a) { return unary(op, a[0]); }));
}

Result cast(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const onnx::NodeProto& node = known.node;
  auto type = static_cast<int32_t>(int_attribute(node, "to", Tensor::INT64));
  return one(elementwise({&x}, type, [](const std::vector<double>& a) { return a[0]; }));
}

Result binary_op(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const std::vector<const ConstantValue*>& in = known.in;
  const std::string& op = known.node.op_type();
  if (in.size() != 2 || !in[1]) return std::nullopt;
  bool compare = op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" || op == "GreaterOrEqual" ||
                 op == "And" || op == "Or";
  bool integer = !is_float_type(x.type);
  return one(elementwise(in, compare ? Tensor::BOOL : x.type,
                         [&](const std::vector<double>& a) { return binary(op, a[0], a[1], integer); }));
}

Result extremum(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const std::vector<const ConstantValue*>& in = known.in;
  const std::string& op = known.node.op_type();
  for (const ConstantValue* v : in)
    if (!v) return std::nullopt;
  return one(elementwise(in, x.type, [&](const std::vector<double>& a) {
    double r = a[0];
    for (double v : a) r = binary(op, r, v, false);
    return r;
  }));
}

Result where(const KnownInputs& known) {
  const std::vector<const ConstantValue*>& in = known.in;
  if (in.size() != 3 || !in[1] || !in[2]) return std::nullopt;
  return one(elementwise(in, in[1]->type, [](const std::vector<double>& a) { return a[0] != 0 ? a[1] : a[2]; }));
}

Result gather(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const std::vector<const ConstantValue*>& in = known.in;
  const onnx::NodeProto& node = known.node;
  if (in.size() != 2 || !in[1]) return std::nullopt;
  const int64_t written_axis = int_attribute(node, "axis", 0);
  std::optional<int64_t> axis = axis_in(written_axis, x.dims.size());
  if (!axis) invalid("Gather axis " + std::to_string(written_axis) + " is out of range for rank " + std::to_string(x.dims.size()));
  std::vector<int64_t> indices = as_ints(*in[1]);
  Shape out_dims(x.dims.begin(), x.dims.begin() + *axis);
  out_dims.insert(out_dims.end(), in[1]->dims.begin(), in[1]->dims.end());
  out_dims.insert(out_dims.end(), x.dims.begin() + *axis + 1, x.dims.end());
  if (element_count(out_dims) > kMaxConstantElements) return std::nullopt;
  int64_t outer = 1, inner = 1, extent = x.dims[*axis];
  for (int64_t d = 0; d < *axis; ++d) outer *= x.dims[d];
  for (size_t d = *axis + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
  ConstantValue out = make(x.type, out_dims);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : indices) {
      const int64_t written = index;
      if (index < 0) index += extent;
      if (index < 0 || index >= extent)
        invalid("Gather index " + std::to_string(written) + " is out of range for an axis of size " + std::to_string(extent));
      for (int64_t i = 0; i < inner; ++i) out.data.push_back(x.data[(o * extent + index) * inner + i]);
    }
  return one(out);
}

Result squeeze_or_unsqueeze(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const onnx::NodeProto& node = known.node;
  const int64_t opset = known.opset;
  const std::string& op = known.node.op_type();
  std::optional<std::vector<int64_t>> axes = opset >= 13 ? known.ints(1) : ints_attribute(node, "axes");
  ConstantValue out = x;
  if (op == "Unsqueeze") {
    if (!axes) return std::nullopt;
    size_t rank = x.dims.size() + axes->size();
    std::vector<bool> inserted(rank, false);
    for (int64_t a : *axes) {
      std::optional<int64_t> axis = axis_in(a, rank);
      if (!axis) invalid("Unsqueeze axis " + std::to_string(a) + " is out of range for output rank " + std::to_string(rank));
      if (inserted[*axis]) invalid("Unsqueeze axis " + std::to_string(a) + " is listed twice");
      inserted[*axis] = true;
    }
    out.dims.clear();
    size_t next = 0;
    for (size_t d = 0; d < rank; ++d) out.dims.push_back(inserted[d] ? 1 : x.dims[next++]);
  } else {
    std::vector<bool> removed(x.dims.size(), false);
    if (axes) {
      for (int64_t a : *axes) {
        std::optional<int64_t> axis = axis_in(a, x.dims.size());
        if (!axis) invalid("Squeeze axis " + std::to_string(a) + " is out of range for rank " + std::to_string(x.dims.size()));
        if (removed[*axis]) invalid("Squeeze axis " + std::to_string(a) + " is listed twice");
        if (x.dims[*axis] != 1)
          invalid("Squeeze axis " + std::to_string(a) + " has size " + std::to_string(x.dims[*axis]) + ", not 1");
        removed[*axis] = true;
      }
    } else {
      for (size_t d = 0; d < x.dims.size(); ++d) removed[d] = x.dims[d] == 1;
    }
    out.dims.clear();
    for (size_t d = 0; d < x.dims.size(); ++d)
      if (!removed[d]) out.dims.push_back(x.dims[d]);
  }
  return one(out);
}

Result reshape(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  std::optional<std::vector<int64_t>> target = known.ints(1);
  if (!target) return std::nullopt;
  std::optional<Shape> dims = reshape_dims(x.dims, *target);
  if (!dims) return std::nullopt;
  ConstantValue out = x;
  out.dims = *dims;
  return one(out);
}

Result flatten(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const onnx::NodeProto& node = known.node;
  const int64_t written = int_attribute(node, "axis", 1);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const int64_t axis = written < 0 ? written + rank : written;
  if (axis < 0 || axis > rank)
    invalid("Flatten axis " + std::to_string(written) + " is out of range for rank " + std::to_string(rank));
  int64_t rows = 1, cols = 1;  // bounded by the element count (x is well formed)
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= x.dims[d];
  ConstantValue out = x;
  out.dims = {rows, cols};
  return one(out);
}

Result concat(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const std::vector<const ConstantValue*>& in = known.in;
  const onnx::NodeProto& node = known.node;
  const int64_t written_axis = int_attribute(node, "axis", 0);
  std::optional<int64_t> axis = axis_in(written_axis, x.dims.size());
  if (!axis) invalid("Concat axis " + std::to_string(written_axis) + " is out of range for rank " + std::to_string(x.dims.size()));
  Shape out_dims = x.dims;
  out_dims[*axis] = 0;
  for (const ConstantValue* v : in) {
    if (!v) return std::nullopt;
    bool fits = v->dims.size() == x.dims.size();
    for (size_t d = 0; fits && d < x.dims.size(); ++d) fits = static_cast<int64_t>(d) == *axis || v->dims[d] == x.dims[d];
    if (!fits)
      invalid("Concat inputs of shapes " + shape_to_string(x.dims) + " and " + shape_to_string(v->dims) +
              " differ off axis " + std::to_string(*axis));
    out_dims[*axis] += v->dims[*axis];  // each at most kMaxConstantElements: no overflow
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < *axis; ++d) outer *= x.dims[d];
  ConstantValue out = make(x.type, out_dims);
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstantValue* v : in) {
      int64_t block = static_cast<int64_t>(v->data.size()) / std::max<int64_t>(outer, 1);
      for (int64_t i = 0; i < block; ++i) out.data.push_back(v->data[o * block + i]);
    }
  return one(out);
}

Result slice_op(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const onnx::NodeProto& node = known.node;
  const int64_t opset = known.opset;
  if (opset < 10) {
    std::optional<std::vector<int64_t>> starts = ints_attribute(node, "starts"), ends = ints_attribute(node, "ends");
    if (!starts || !ends) return std::nullopt;
    return one(slice(x, *starts, *ends, ints_attribute(node, "axes").value_or(std::vector<int64_t>{}), {}));
  }
  std::optional<std::vector<int64_t>> starts = known.ints(1), ends = known.ints(2);
  if (!starts || !ends) return std::nullopt;
  return one(slice(x, *starts, *ends, known.ints(3).value_or(std::vector<int64_t>{}),
                   known.ints(4).value_or(std::vector<int64_t>{})));
}

Result split(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const onnx::NodeProto& node = known.node;
  const int64_t opset = known.opset;
  const int64_t written_axis = int_attribute(node, "axis", 0);
  std::optional<int64_t> axis = axis_in(written_axis, x.dims.size());
  if (!axis) invalid("Split axis " + std::to_string(written_axis) + " is out of range for rank " + std::to_string(x.dims.size()));
  const int64_t extent = x.dims[static_cast<size_t>(*axis)];
  const auto outputs = static_cast<int64_t>(node.output_size());
  std::vector<int64_t> sizes = opset >= 13 ? known.ints(1).value_or(std::vector<int64_t>{})
                                           : ints_attribute(node, "split").value_or(std::vector<int64_t>{});
  if (sizes.empty()) {
    if (outputs < 1 || extent % outputs != 0)
      invalid("Split of " + std::to_string(extent) + " entries into " + std::to_string(outputs) + " equal parts");
    sizes.assign(static_cast<size_t>(outputs), extent / outputs);
  }
  int64_t total = 0;
  bool sane = static_cast<int64_t>(sizes.size()) == outputs;
  for (int64_t size : sizes) {
    sane = sane && size >= 0 && size <= extent;
    total += sane ? size : 0;  // each at most the extent: no overflow
  }
  if (!sane || total != extent)
    invalid("Split sizes " + shape_to_string(sizes) + " do not cut " + std::to_string(extent) + " entries into " +
            std::to_string(outputs) + " outputs");
  std::vector<ConstantValue> parts;
  int64_t begin = 0;
  for (int64_t size : sizes) {
    std::optional<ConstantValue> part = slice(x, {begin}, {begin + size}, {*axis}, {});
    if (!part) return std::nullopt;
    parts.push_back(std::move(*part));
    begin += size;
  }
  return parts;
}

Result tile(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  std::optional<std::vector<int64_t>> repeats = known.ints(1);
  if (!repeats) return std::nullopt;
  if (repeats->size() != x.dims.size())
    invalid("Tile repeats " + shape_to_string(*repeats) + " do not match rank " + std::to_string(x.dims.size()));
  Shape out_dims = x.dims;
  double elements = 1;
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if ((*repeats)[d] < 0) invalid("Tile repeats " + shape_to_string(*repeats) + " has a negative entry");
    const double extent = static_cast<double>(x.dims[d]) * static_cast<double>((*repeats)[d]);
    elements *= extent;
    // Each extent too: beside an empty dimension the product stays 0.
    if (elements > static_cast<double>(kMaxConstantElements) || extent > static_cast<double>(kMaxConstantElements))
      return std::nullopt;
    out_dims[d] = x.dims[d] * (*repeats)[d];
  }
  std::vector<int64_t> in_strides = strides_of(x.dims), out_strides = strides_of(out_dims);
  ConstantValue out = make(x.type, out_dims);
  const int64_t count = element_count(out_dims);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = 0;
    for (size_t d = 0; d < out_dims.size(); ++d) index += ((i / out_strides[d]) % out_dims[d]) % x.dims[d] * in_strides[d];
    out.data.push_back(x.data[static_cast<size_t>(index)]);
  }
  return one(out);
}

Result constant_of_shape(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const onnx::NodeProto& node = known.node;
  std::vector<int64_t> dims = as_ints(x);
  if (element_count(dims) > kMaxConstantElements) return std::nullopt;
  ConstantValue fill = make(Tensor::FLOAT, {});
  fill.data = {0};
  if (const onnx::AttributeProto* a = find_attribute(node, "value")) {
    std::optional<ConstantValue> v = constant_from_tensor(a->t());
    if (!v || v->data.size() != 1) return std::nullopt;
    fill = *v;
  }
  ConstantValue out = make(fill.type, dims);
  out.data.assign(static_cast<size_t>(element_count(dims)), fill.data[0]);
  return one(out);
}

Result range(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const std::vector<const ConstantValue*>& in = known.in;
  if (in.size() != 3 || !in[1] || !in[2] || x.data.size() != 1 || in[1]->data.size() != 1 || in[2]->data.size() != 1)
    return std::nullopt;
  double start = x.data[0], limit = in[1]->data[0], delta = in[2]->data[0];
  if (delta == 0) return std::nullopt;
  double steps = std::max(0.0, std::ceil((limit - start) / delta));
  if (steps > static_cast<double>(kMaxConstantElements)) return std::nullopt;
  ConstantValue out = make(x.type, {static_cast<int64_t>(steps)});
  for (int64_t i = 0; i < static_cast<int64_t>(steps); ++i) out.data.push_back(start + static_cast<double>(i) * delta);
  return one(out);
}

Result expand(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  std::optional<std::vector<int64_t>> dims = known.ints(1);
  if (!dims) return std::nullopt;
  ConstantValue shape_only = make(x.type, *dims);
  shape_only.data.assign(static_cast<size_t>(std::min(element_count(*dims), kMaxConstantElements + 1)), 0);
  if (element_count(*dims) > kMaxConstantElements) return std::nullopt;
  return one(elementwise({&x, &shape_only}, x.type, [](const std::vector<double>& a) { return a[0]; }));
}

Result transpose(const KnownInputs& known) {
  const ConstantValue& x = *known.in[0];
  const onnx::NodeProto& node = known.node;
  size_t rank = x.dims.size();
  std::vector<int64_t> perm = ints_attribute(node, "perm").value_or(std::vector<int64_t>{});
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  std::vector<bool> seen(rank, false);
  bool is_permutation = perm.size() == rank;
  for (size_t d = 0; is_permutation && d < rank; ++d) {
    is_permutation = perm[d] >= 0 && perm[d] < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(perm[d])];
    if (is_permutation) seen[static_cast<size_t>(perm[d])] = true;
  }
  if (!is_permutation) invalid("Transpose perm " + shape_to_string(perm) + " is not a permutation of 0.." +
                               std::to_string(static_cast<int64_t>(rank) - 1));
  Shape out_dims;
  for (int64_t p : perm) out_dims.push_back(x.dims[p]);
  std::vector<int64_t> in_strides = strides_of(x.dims), out_strides = strides_of(out_dims);
  ConstantValue out = make(x.type, out_dims);
  int64_t count = element_count(out_dims);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = 0;
    for (size_t d = 0; d < rank; ++d) index += ((i / out_strides[d]) % out_dims[d]) * in_strides[perm[d]];
    out.data.push_back(x.data[index]);
  }
  return one(out);
}

// The ops whose outputs are computed from known inputs, one evaluator each.
const std::map<std::string, Evaluator>& evaluators() {
  static const std::map<std::string, Evaluator> table = {
      {"Identity", unary_op},
      {"Neg", unary_op},
      {"Abs", unary_op},
      {"Sqrt", unary_op},
      {"Floor", unary_op},
      {"Ceil", unary_op},
      {"Not", unary_op},
      {"Reciprocal", unary_op},
      {"Relu", unary_op},
      {"Cast", cast},
      {"Add", binary_op},
      {"Sub", binary_op},
      {"Mul", binary_op},
      {"Div", binary_op},
      {"Mod", binary_op},
      {"Pow", binary_op},
      {"Equal", binary_op},
      {"Less", binary_op},
      {"LessOrEqual", binary_op},
      {"Greater", binary_op},
      {"GreaterOrEqual", binary_op},
      {"And", binary_op},
      {"Or", binary_op},
      {"Max", extremum},
      {"Min", extremum},
      {"Where", where},
      {"Gather", gather},
      {"Unsqueeze", squeeze_or_unsqueeze},
      {"Squeeze", squeeze_or_unsqueeze},
      {"Reshape", reshape},
      {"Flatten", flatten},
      {"Concat", concat},
      {"Slice", slice_op},
      {"Split", split},
      {"Tile", tile},
      {"ConstantOfShape", constant_of_shape},
      {"Range", range},
      {"Expand", expand},
      {"Transpose", transpose}};
  return table;
}

std::optional<std::vector<ConstantValue>> evaluate(const onnx::NodeProto& node, const ConstantLookup& lookup, int64_t opset) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  if (op == "Constant") return one(attribute_value(node));
  if (op == "Shape" || op == "Size") return shape_or_size(node, lookup);
  if (op == "CastLike") {  // the value of input 0; input 1 (often the data) gives only its type
    const ConstantValue* v = node.input_size() == 2 ? lookup.value(node.input(0)) : nullptr;
    if (!v || !well_formed(*v)) return std::nullopt;
    ConstantValue out = *v;
    if (const ConstantValue* like = lookup.value(node.input(1))) out.type = like->type;
    return one(out);
  }
  const auto evaluator = evaluators().find(op);
  if (evaluator == evaluators().end()) return std::nullopt;
  // Every other op needs the values of its (non-empty) inputs.
  KnownInputs inputs{node, {}, opset};
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      inputs.in.push_back(nullptr);
      continue;
    }
    const ConstantValue* v = lookup.value(name);
    if (!v || !well_formed(*v)) return std::nullopt;
    inputs.in.push_back(v);
  }
  if (inputs.in.empty() || !inputs.in[0]) return std::nullopt;
  return evaluator->second(inputs);
}

}  // namespace

std::optional<std::vector<ConstantValue>> evaluate_constant_node(const onnx::NodeProto& node, const ConstantLookup& lookup,
                                                                int64_t opset) {
  std::optional<std::vector<ConstantValue>> outputs = evaluate(node, lookup, opset);
  // A result bigger than the limit (a Reshape to a huge shape of nothing) is
  // not shape arithmetic; it stays unevaluated.
  if (outputs)
    for (const ConstantValue& value : *outputs)
      if (!well_formed(value)) return std::nullopt;
  return outputs;
}

}  // namespace pase
