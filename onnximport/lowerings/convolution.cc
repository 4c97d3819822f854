// Convolutions and pooling: Conv (2-D, and 1-D as a 2-D one), MaxPool,
// AveragePool, their global forms, and Pad, which folds into the Conv or
// Pool it feeds.
#include "onnximport/lowerings/lowerings.h"

#include <algorithm>
#include "onnximport/lowering_helpers.h"
#include "onnximport/onnx_model.h"

namespace pase {

std::optional<int64_t> Lowerer::fit_padding(int64_t in, int64_t window, int64_t stride, int64_t out, int64_t begin,
                                                   int64_t end) {
  auto gives = [&](int64_t pad) { return in + 2 * pad >= window && (in + 2 * pad - window) / stride + 1 == out; };
  if (begin == end && gives(begin)) return begin;
  for (int64_t pad = std::min(begin, end); pad <= std::max(begin, end) + window; ++pad)
    if (gives(pad)) return pad;
  return std::nullopt;
}

std::optional<std::string> Lowerer::window_geometry(const onnx::NodeProto& node, const Shape& in, const Shape& out,
                                                    const Shape& window, const HeightWidth& extra, HeightWidth& stride,
                                                    HeightWidth& padding, HeightWidth* dilation) const {
  if (in.size() != 4 || out.size() != 4 || window.size() != 2) return "only 2-D windows are supported";
  std::vector<int64_t> dilations = ints_attribute(node, "dilations").value_or(std::vector<int64_t>{1, 1});
  if (dilations.size() != 2) return "expected 2 dilations";
  for (int64_t d : dilations)
    if (d != 1 && (!dilation || d < 1 || d > (int64_t{1} << 24))) return "dilation " + std::to_string(d);
  if (dilation) *dilation = {dilations[0], dilations[1]};
  // A dilated window reaches (k − 1)·d + 1 (both at most 2^24: no overflow).
  Shape kernel = window;
  for (size_t k = 0; k < 2; ++k)
    if (kernel[k] >= 1 && kernel[k] <= (int64_t{1} << 24)) kernel[k] = (kernel[k] - 1) * dilations[k] + 1;
  std::vector<int64_t> strides = ints_attribute(node, "strides").value_or(std::vector<int64_t>{1, 1});
  std::vector<int64_t> pads = ints_attribute(node, "pads").value_or(std::vector<int64_t>{0, 0, 0, 0});
  if (strides.size() != 2 || pads.size() != 4) return "expected 2 strides and 4 pads";
  // Far beyond any real window; within it the padding search below neither
  // overflows nor runs long. A stride of 0 would divide by zero.
  constexpr int64_t kLimit = int64_t{1} << 24;
  auto within = [&](int64_t v, int64_t low) { return v >= low && v <= kLimit; };
  bool sane = within(extra.h, 0) && within(extra.w, 0) && within(kernel[0], 1) && within(kernel[1], 1) &&
              in[2] <= (int64_t{1} << 40) && in[3] <= (int64_t{1} << 40);
  for (int64_t v : strides) sane = sane && within(v, 1);
  for (int64_t v : pads) sane = sane && within(v, 0);
  if (!sane)
    return "window, stride or padding out of range (kernel " + join_shape(kernel) + ", strides " + join_shape(strides) +
           ", pads " + join_shape(pads) + ")";
  // A folded Pad: `in` is the padded tensor, the padding goes back into the window op.
  const int64_t h = in[2] - 2 * extra.h, w = in[3] - 2 * extra.w;
  std::optional<int64_t> ph = fit_padding(h, kernel[0], strides[0], out[2], pads[0] + extra.h, pads[2] + extra.h);
  std::optional<int64_t> pw = fit_padding(w, kernel[1], strides[1], out[3], pads[1] + extra.w, pads[3] + extra.w);
  if (!ph || !pw) return "padding " + join_shape(pads) + " has no symmetric equivalent";
  stride = {strides[0], strides[1]};
  padding = {*ph, *pw};
  return std::nullopt;
}

void Lowerer::lower_conv(const onnx::NodeProto& node, const std::vector<int>& slots) {
  if (slots.size() != 1 || slots[0] != 0) return unsupported(node, "its weight is computed from the data");
  const int64_t group = int_attribute(node, "group", 1);
  const Shape& in = shape_of(node, node.input(0));
  if (group < 1 || in.size() < 2 || in[1] % group != 0)
    return unsupported(node, "group " + std::to_string(group) + " does not divide the input channels");
  Ref x = ref_of(node, node.input(0));
  const Shape& weight = shape_of(node, node.input(1));
  if (weight.size() == 3 && in.size() == 3) return lower_conv1d(node, x, weight, group);
  if (weight.size() != 4) return unsupported(node, "only 1-D and 2-D convolution are supported");
  HeightWidth stride, padding, dilation;
  if (std::optional<std::string> why = window_geometry(node, in, shape_of(node, node.output(0)), {weight[2], weight[3]},
                                                       x.pad, stride, padding, &dilation))
    return unsupported(node, *why);
  NodeV1& n = emit(node, "conv2d", {x.ref}, {node.output(0)});
  n.filter = weight;
  if (stride != HeightWidth{1, 1}) n.stride = stride;
  if (padding != HeightWidth{0, 0}) n.padding = padding;
  if (dilation != HeightWidth{1, 1}) n.dilation = dilation;
  if (group != 1) n.groups = group;
  name_weight(n, node.input(1));
  if (node.input_size() > 2 && !node.input(2).empty()) add_pointwise_weight(last_node(), node.input(2), 1);
}

void Lowerer::lower_conv1d(const onnx::NodeProto& node, const Ref& x, const Shape& weight, int64_t group) {
  const Shape& in = shape_of(node, node.input(0));
  const Shape& out = shape_of(node, node.output(0));
  const int64_t stride = ints_attribute(node, "strides").value_or(std::vector<int64_t>{1}).at(0);
  const int64_t dilation = ints_attribute(node, "dilations").value_or(std::vector<int64_t>{1}).at(0);
  const std::vector<int64_t> pads = ints_attribute(node, "pads").value_or(std::vector<int64_t>{0, 0});
  constexpr int64_t kLimit = int64_t{1} << 24;  // as window_geometry: no overflow, a short padding search
  if (out.size() != 3 || pads.size() != 2 || x.pad != HeightWidth{0, 0} || stride < 1 || stride > kLimit ||
      dilation < 1 || dilation > kLimit || weight[2] < 1 || weight[2] > kLimit || pads[0] < 0 || pads[0] > kLimit ||
      pads[1] < 0 || pads[1] > kLimit || in[2] > (int64_t{1} << 40))
    return unsupported(node, "1-D window, stride, dilation or padding out of range");
  std::optional<int64_t> pad = fit_padding(in[2], (weight[2] - 1) * dilation + 1, stride, out[2], pads[0], pads[1]);
  if (!pad) return unsupported(node, "padding " + join_shape(pads) + " has no symmetric equivalent");
  NodeV1& lifted = push_helper(node.name() + "/in", "reshape", x.ref, {in[0], in[1], in[2], 1});
  lifted.shape = Shape{in[0], in[1], in[2], 1};
  std::string lifted_name = lifted.name;
  NodeV1 n;
  n.name = claim_name(node);
  n.op = "conv2d";
  n.inputs = {lifted_name};
  n.filter = Shape{weight[0], weight[1], weight[2], 1};
  if (stride != 1) n.stride = HeightWidth{stride, 1};
  if (*pad != 0) n.padding = HeightWidth{*pad, 0};
  if (dilation != 1) n.dilation = HeightWidth{dilation, 1};
  if (group != 1) n.groups = group;
  n.outputs = std::vector<Shape>{{out[0], out[1], out[2], 1}};
  // The filter is the weight [N, C/G, R] with a unit width, listed as held.
  name_weight(n, node.input(1));
  if (n.weights) n.weight_layout = "ncr";
  std::string conv = n.name;
  result_.graph.nodes.push_back(std::move(n));
  const int conv_index = last_node();
  if (node.input_size() > 2 && !node.input(2).empty()) add_pointwise_weight(conv_index, node.input(2), 1);
  NodeV1& flat = push_helper(conv + "/out", "reshape", conv, out);
  flat.shape = out;
  refs_[node.output(0)] = Ref{flat.name, last_node(), {}};
}

void Lowerer::lower_pool(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  if (node.output_size() > 1 && is_used(node.output(1))) return unsupported(node, "its indices output is used");
  Ref x = ref_of(node, node.input(0));
  std::vector<int64_t> kernel = ints_attribute(node, "kernel_shape").value_or(std::vector<int64_t>{});
  HeightWidth stride, padding;
  if (std::optional<std::string> why = window_geometry(node, shape_of(node, node.input(0)), shape_of(node, node.output(0)),
                                                       kernel, x.pad, stride, padding))
    return unsupported(node, *why);
  // A 1x1 window with stride 1 (AdaptiveAvgPool on an input already that size) is the identity.
  if (kernel == std::vector<int64_t>{1, 1} && stride == HeightWidth{1, 1} && padding == HeightWidth{0, 0})
    return alias(node.output(0), Ref{x.ref, x.node, {}});
  NodeV1& n = emit(node, "pool2d", {x.ref}, {node.output(0)});
  n.window = HeightWidth{kernel[0], kernel[1]};
  if (stride != HeightWidth{1, 1}) n.stride = stride;
  if (padding != HeightWidth{0, 0}) n.padding = padding;
}

void Lowerer::lower_global_pool(const onnx::NodeProto& node, const std::vector<int>& slots) {
  const std::string& x = node.input(slots[0]);
  Shape in = shape_of(node, x);
  std::vector<int64_t> axes;
  for (size_t d = 2; d < in.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  NodeV1& n = emit(node, "reduce_mean", {ref_of(node, x).ref}, {node.output(0)});
  n.axes = axes;
  n.keepdims = true;
}

void Lowerer::lower_pad(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  std::string mode = string_attribute(node, "mode", "constant");
  std::optional<std::vector<int64_t>> pads = opset_ >= 11 ? input_ints(node, 1) : ints_attribute(node, "pads");
  const Shape& in = shape_of(node, node.input(0));
  // No padding at all (Swin pads its windows to a multiple of 7, often by 0): the identity.
  if (pads && std::all_of(pads->begin(), pads->end(), [](int64_t p) { return p == 0; }))
    return alias(node.output(0), ref_of(node, node.input(0)));
  if (mode != "constant" || !pads || pads->size() != 2 * in.size() || in.size() != 4)
    return unsupported(node, "only constant padding of the last two axes of a 4-D tensor");
  const std::vector<int64_t>& p = *pads;
  if (p[0] || p[1] || p[4] || p[5] || p[2] != p[6] || p[3] != p[7] || p[2] < 0 || p[3] < 0)
    return unsupported(node, "only symmetric padding of height and width");
  for (int user : consumers_[node.output(0)])
    if (!is_one_of(graph_.node(user).op_type(), {"Conv", "MaxPool", "AveragePool"}))
      return unsupported(node, "it feeds " + graph_.node(user).op_type() + " '" + graph_.node(user).name() +
                                   "', not a Conv or Pool");
  Ref x = ref_of(node, node.input(0));
  x.pad.h += p[2];
  x.pad.w += p[3];
  x.node = -1;
  alias(node.output(0), x);
}

std::vector<LoweringEntry> convolution_lowerings() {
  return {
      {"Conv", &Lowerer::lower_conv},
      {"MaxPool", &Lowerer::lower_pool},
      {"AveragePool", &Lowerer::lower_pool},
      {"GlobalAveragePool", &Lowerer::lower_global_pool},
      {"GlobalMaxPool", &Lowerer::lower_global_pool},
      {"Pad", &Lowerer::lower_pad}};
}

}  // namespace pase
