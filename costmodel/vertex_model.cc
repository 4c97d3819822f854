#include "costmodel/vertex_model.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "graphs/einsum.h"

namespace pase {
namespace {

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

// Same-shape ops: domain = the shape, tensors split as the configuration.
VertexModel shape_domain(const Shape& shape, size_t input_count, size_t output_count) {
  VertexModel m;
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

VertexModel einsum_model(const Vertex& v) {
  EinsumSpec spec = parse_einsum(v.equation);  // validated when the graph was built
  VertexModel m;
  m.letters = spec.domain;
  std::string operands[2] = {spec.lhs, spec.rhs};
  Shape shapes[2];
  if (v.kind == OpKind::Embedding) {
    shapes[0] = {v.inputs[0].shape[0], v.inputs[0].shape[1], v.vocab};  // one-hot ids
    shapes[1] = {v.vocab, v.dim};
  } else {
    shapes[0] = v.inputs[0].shape;
    shapes[1] = v.inputs[1].shape;
  }
  for (char c : spec.domain)
    for (int t = 0; t < 2; ++t) {
      auto at = operands[t].find(c);
      if (at != std::string::npos) {
        m.domain.push_back(shapes[t][at]);
        break;
      }
    }
  m.splittable.assign(m.domain.size(), 1);
  auto port = [&](const std::string& term) {
    SplitMap map;
    for (int index : indices_of(term, spec.domain)) map.push_back({index});
    return map;
  };
  if (v.kind == OpKind::Embedding) {
    m.inputs = {port(spec.lhs.substr(0, 2))};  // the ids are the one-hot's first two letters
  } else {
    m.inputs = {port(spec.lhs), port(spec.rhs)};
  }
  m.outputs = {port(spec.out)};
  m.cost.kind = LayerCostSpec::Kind::Gemm;
  m.cost.batch = indices_of(spec.batch, spec.domain);
  m.cost.m = indices_of(spec.m_letters, spec.domain);
  m.cost.n = indices_of(spec.n_letters, spec.domain);
  m.cost.k = indices_of(spec.reduction, spec.domain);
  m.cost.pointwise = static_cast<double>(v.kind == OpKind::Embedding ? 0 : v.pointwise);
  return m;
}

}  // namespace

VertexModel build_vertex_model(const Vertex& v) {
  const Shape& x = v.inputs.empty() ? v.outputs[0] : v.inputs[0].shape;
  switch (v.kind) {
    case OpKind::Fc: {
      size_t q = x.size();
      VertexModel m;
      m.domain.assign(x.begin(), x.end() - 1);
      m.domain.push_back(v.units);
      m.domain.push_back(x.back());
      static const std::string batch_letters = "bstuvwxyzacdefghij";
      for (size_t i = 0; i + 1 < q; ++i) m.letters += i < batch_letters.size() ? batch_letters[i] : '?';
      m.letters += "nk";
      m.splittable.assign(m.domain.size(), 1);
      SplitMap in, out;
      for (size_t i = 0; i + 1 < q; ++i) {
        in.push_back({static_cast<int>(i)});
        out.push_back({static_cast<int>(i)});
        m.cost.m.push_back(static_cast<int>(i));
      }
      in.push_back({static_cast<int>(q)});
      out.push_back({static_cast<int>(q - 1)});
      m.inputs = {in};
      m.outputs = {out};
      m.cost.kind = LayerCostSpec::Kind::Gemm;
      m.cost.n = {static_cast<int>(q - 1)};
      m.cost.k = {static_cast<int>(q)};
      m.cost.pointwise = static_cast<double>(v.pointwise);
      return m;
    }
    case OpKind::Einsum:
    case OpKind::Matmul:
    case OpKind::Embedding:
      return einsum_model(v);
    case OpKind::Conv2d: {
      VertexModel m;
      const Shape& y = v.outputs[0];
      m.letters = "bchwrsn";
      m.domain = {x[0], x[1], y[2], y[3], v.filter[2], v.filter[3], v.filter[0]};
      m.splittable = {1, 1, 0, 0, 1, 1, 1};
      m.inputs = {{{0}, {1}, {2}, {3}}};
      m.outputs = {{{0}, {6}, {2}, {3}}};
      m.cost.kind = LayerCostSpec::Kind::Gemm;
      m.cost.m = {0, 2, 3};
      m.cost.n = {6};
      m.cost.k = {1, 4, 5};
      m.cost.pointwise = static_cast<double>(v.pointwise);
      return m;
    }
    case OpKind::Pool2d: {
      VertexModel m = shape_domain(v.outputs[0], 1, 1);
      m.letters = "bchw";
      m.cost.kind = LayerCostSpec::Kind::Pool;
      m.cost.in_h = static_cast<double>(x[2]);
      m.cost.in_w = static_cast<double>(x[3]);
      m.cost.window_r = static_cast<double>(v.window.h);
      m.cost.window_s = static_cast<double>(v.window.w);
      return m;
    }
    case OpKind::Elementwise: {
      VertexModel m = shape_domain(x, v.inputs.size(), 1);
      m.cost.kind = LayerCostSpec::Kind::Elementwise;
      m.cost.pointwise = static_cast<double>(v.pointwise);
      return m;
    }
    case OpKind::Norm:
    case OpKind::Batchnorm:
    case OpKind::Softmax: {
      VertexModel m = shape_domain(x, 1, 1);
      m.cost.kind = v.kind == OpKind::Softmax ? LayerCostSpec::Kind::Softmax : LayerCostSpec::Kind::Norm;
      m.cost.axis = v.axis;
      return m;
    }
    case OpKind::SoftmaxXent: {
      VertexModel m = shape_domain(x, 1, 1);
      m.cost.kind = LayerCostSpec::Kind::SoftmaxXent;
      return m;
    }
    case OpKind::ReduceMean: {
      VertexModel m = shape_domain(x, 1, 1);
      SplitMap out;
      for (size_t d = 0; d < x.size(); ++d) {
        bool reduced = std::find(v.axes.begin(), v.axes.end(), static_cast<int>(d)) != v.axes.end();
        if (!reduced) out.push_back({static_cast<int>(d)});
        else if (v.keepdims) out.push_back({});
      }
      if (out.empty()) out.push_back({});
      m.outputs = {out};
      m.cost.kind = LayerCostSpec::Kind::ReduceMean;
      m.cost.axes = v.axes;
      return m;
    }
    case OpKind::Concat: {
      VertexModel m = shape_domain(x, v.inputs.size(), 1);
      m.splittable[v.axis] = 0;
      return m;
    }
    case OpKind::Split: {
      VertexModel m = shape_domain(x, 1, v.outputs.size());
      m.splittable[v.axis] = 0;
      return m;
    }
    case OpKind::Ravel: {
      VertexModel m = shape_domain(x, 1, 1);
      m.contiguous_only = true;
      std::vector<int> all(x.size());
      std::iota(all.begin(), all.end(), 0);
      m.outputs = {{all}};
      return m;
    }
    case OpKind::Unravel: {
      const Shape& y = v.outputs[0];
      VertexModel m = shape_domain(y, 1, 1);
      m.contiguous_only = true;
      std::vector<int> all(y.size());
      std::iota(all.begin(), all.end(), 0);
      m.inputs = {{all}};
      return m;
    }
    case OpKind::Transpose: {
      VertexModel m = shape_domain(x, 1, 1);
      SplitMap out;
      for (int p : v.perm) out.push_back({p});
      m.outputs = {out};
      return m;
    }
    case OpKind::Stack: {
      Shape domain = x;
      domain.insert(domain.begin() + v.axis, 1);
      VertexModel m = shape_domain(domain, v.inputs.size(), 1);
      SplitMap in;
      for (size_t d = 0; d < domain.size(); ++d)
        if (static_cast<int>(d) != v.axis) in.push_back({static_cast<int>(d)});
      m.inputs.assign(v.inputs.size(), in);
      return m;
    }
    case OpKind::Unstack: {
      VertexModel m = shape_domain(x, 1, v.outputs.size());
      m.splittable[v.axis] = 0;
      SplitMap out;
      for (size_t d = 0; d < x.size(); ++d)
        if (static_cast<int>(d) != v.axis) out.push_back({static_cast<int>(d)});
      m.outputs.assign(v.outputs.size(), out);
      return m;
    }
    case OpKind::Lstm: {
      VertexModel m;
      m.letters = "lsbnk";
      m.domain = {v.layers, x[1], x[0], v.units, v.units};
      m.splittable = {1, 0, 1, 1, 1};
      m.inputs = {{{2}, {1}, {4}}};
      m.outputs = {{{2}, {1}, {3}}};
      m.cost.kind = LayerCostSpec::Kind::Gemm;
      m.cost.batch = {0};
      m.cost.m = {1, 2};
      m.cost.n = {3};
      m.cost.k = {4};
      m.cost.n_scale = 4.0;
      m.cost.k_scale = 2.0;
      m.cost.pointwise = 3.0;
      m.cost.lstm_state_exchange = true;
      return m;
    }
  }
  return {};
}

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
  void split_maps(const std::vector<SplitMap>& maps) {
    value<uint64_t>(maps.size());
    for (const SplitMap& map : maps) {
      value<uint64_t>(map.size());
      for (const std::vector<int>& dims : map) sequence(dims);
    }
  }
  std::string take() { return std::move(key_); }

 private:
  std::string key_;
};

}  // namespace

std::string model_key(const VertexModel& model) {
  KeyWriter w;
  w.text(model.letters);
  w.sequence(model.domain);
  w.sequence(model.splittable);
  w.value(model.contiguous_only);
  w.split_maps(model.inputs);
  w.split_maps(model.outputs);
  const LayerCostSpec& c = model.cost;
  w.value(c.kind);
  w.sequence(c.batch);
  w.sequence(c.m);
  w.sequence(c.n);
  w.sequence(c.k);
  w.value(c.n_scale);
  w.value(c.k_scale);
  w.value(c.pointwise);
  w.value(c.lstm_state_exchange);
  w.value(c.axis);
  w.sequence(c.axes);
  w.value(c.in_h);
  w.value(c.in_w);
  w.value(c.window_r);
  w.value(c.window_s);
  return w.take();
}

}  // namespace pase
