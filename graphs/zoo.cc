#include "graphs/zoo.h"

#include <functional>

#include "base/error.h"
#include "graphs/zoo_builder.h"
#include "base/closest_name.h"

namespace pase {
namespace {

// AlexNet's side after conv1 (11, stride 4) and pool1, conv2 and pool2, and
// pool5, each pool 3 with stride 2: the fc layers read 256 of these squared.
int64_t alexnet_pool5_side(int64_t image) {
  int64_t side = image < 11 ? 0 : (image - 11) / 4 + 1;
  for (int pool = 0; pool < 3; ++pool) side = side < 3 ? 0 : (side - 3) / 2 + 1;
  return side;
}

GraphFileV1 alexnet(int64_t b, int64_t image) {
  ZooBuilder z("alexnet", 4);
  std::string x = z.tensor("image", {b, 3, image, image});
  x = z.conv("conv1", x, {96, 3, 11, 11}, {4, 4}, {0, 0}, 1);
  x = z.pool("pool1", x, {3, 3}, {2, 2});
  x = z.conv("conv2", x, {256, 96, 5, 5}, {1, 1}, {2, 2}, 1);
  x = z.pool("pool2", x, {3, 3}, {2, 2});
  x = z.conv("conv3", x, {384, 256, 3, 3}, {1, 1}, {1, 1}, 1);
  x = z.conv("conv4", x, {384, 384, 3, 3}, {1, 1}, {1, 1}, 1);
  x = z.conv("conv5", x, {256, 384, 3, 3}, {1, 1}, {1, 1}, 1);
  x = z.pool("pool5", x, {3, 3}, {2, 2});
  NodeV1 flat = ZooBuilder::node("flat", "reshape", {x});
  const int64_t side = alexnet_pool5_side(image);
  flat.shape = Shape{b, 256 * side * side};  // 9216 at 227
  x = z.add(flat);
  x = z.fc("fc6", x, 4096, 1);
  x = z.fc("fc7", x, 4096, 1);
  x = z.fc("fc8", x, 1024);
  z.add(ZooBuilder::node("loss", "softmax_xent", {x}));
  return z.finish();
}

GraphFileV1 resnet101(int64_t b, int64_t image) {
  ZooBuilder z("resnet101", 4);
  std::string x = z.tensor("image", {b, 3, image, image});
  x = z.conv("conv1", x, {64, 3, 7, 7}, {2, 2}, {3, 3});
  x = z.batchnorm("bn1", x);
  x = z.pool("pool1", x, {3, 3}, {2, 2}, {1, 1});
  struct Stage {
    int64_t planes, blocks, stride;
  };
  const Stage stages[] = {{64, 3, 1}, {128, 4, 2}, {256, 23, 2}, {512, 3, 2}};
  int64_t inplanes = 64;
  for (int s = 0; s < 4; ++s) {
    for (int64_t blk = 0; blk < stages[s].blocks; ++blk) {
      std::string p = "layer" + std::to_string(s + 1) + "." + std::to_string(blk) + "/";
      int64_t planes = stages[s].planes;
      int64_t stride = blk == 0 ? stages[s].stride : 1;
      std::string y = z.conv(p + "conv1", x, {planes, inplanes, 1, 1});
      y = z.batchnorm(p + "bn1", y);
      y = z.conv(p + "conv2", y, {planes, planes, 3, 3}, {stride, stride}, {1, 1});
      y = z.batchnorm(p + "bn2", y);
      y = z.conv(p + "conv3", y, {4 * planes, planes, 1, 1});
      y = z.batchnorm(p + "bn3", y);
      std::string shortcut = x;
      if (stride != 1 || inplanes != 4 * planes) {
        shortcut = z.conv(p + "downsample/conv", x, {4 * planes, inplanes, 1, 1}, {stride, stride});
        shortcut = z.batchnorm(p + "downsample/bn", shortcut);
      }
      x = z.elementwise(p + "add", {y, shortcut}, 1);
      inplanes = 4 * planes;
    }
  }
  x = z.reduce_mean("avgpool", x, {2, 3});
  x = z.fc("fc", x, 1000);
  z.add(ZooBuilder::node("loss", "softmax_xent", {x}));
  return z.finish();
}

GraphFileV1 inception3(int64_t b, int64_t /*image: 299 only*/) {
  ZooBuilder z("inception3", 4);
  using HW = HeightWidth;
  std::string x = z.tensor("image", {b, 3, 299, 299});
  x = z.basic_conv("conv1a", x, 32, 3, {3, 3}, {2, 2});
  x = z.basic_conv("conv2a", x, 32, 32, {3, 3});
  x = z.basic_conv("conv2b", x, 64, 32, {3, 3}, {1, 1}, {1, 1});
  x = z.pool("pool1", x, {3, 3}, {2, 2});
  x = z.basic_conv("conv3b", x, 80, 64, {1, 1});
  x = z.basic_conv("conv4a", x, 192, 80, {3, 3});
  x = z.pool("pool2", x, {3, 3}, {2, 2});

  auto module_a = [&](const std::string& m, const std::string& in, int64_t c, int64_t pool_features) {
    std::string b0 = z.basic_conv(m + "/b0/1x1", in, 64, c, {1, 1});
    std::string b1 = z.basic_conv(m + "/b1/1x1", in, 48, c, {1, 1});
    b1 = z.basic_conv(m + "/b1/5x5", b1, 64, 48, {5, 5}, {1, 1}, {2, 2});
    std::string b2 = z.basic_conv(m + "/b2/1x1", in, 64, c, {1, 1});
    b2 = z.basic_conv(m + "/b2/3x3a", b2, 96, 64, {3, 3}, {1, 1}, {1, 1});
    b2 = z.basic_conv(m + "/b2/3x3b", b2, 96, 96, {3, 3}, {1, 1}, {1, 1});
    std::string b3 = z.pool(m + "/b3/pool", in, {3, 3}, {1, 1}, {1, 1});
    b3 = z.basic_conv(m + "/b3/1x1", b3, pool_features, c, {1, 1});
    return z.concat(m + "/concat", {b0, b1, b2, b3}, 1);
  };
  auto module_b = [&](const std::string& m, const std::string& in, int64_t c) {
    std::string b0 = z.basic_conv(m + "/b0/3x3", in, 384, c, {3, 3}, {2, 2});
    std::string b1 = z.basic_conv(m + "/b1/1x1", in, 64, c, {1, 1});
    b1 = z.basic_conv(m + "/b1/3x3a", b1, 96, 64, {3, 3}, {1, 1}, {1, 1});
    b1 = z.basic_conv(m + "/b1/3x3b", b1, 96, 96, {3, 3}, {2, 2});
    std::string b2 = z.pool(m + "/b2/pool", in, {3, 3}, {2, 2});
    return z.concat(m + "/concat", {b0, b1, b2}, 1);
  };
  auto module_c = [&](const std::string& m, const std::string& in, int64_t c, int64_t c7) {
    std::string b0 = z.basic_conv(m + "/b0/1x1", in, 192, c, {1, 1});
    std::string b1 = z.basic_conv(m + "/b1/1x1", in, c7, c, {1, 1});
    b1 = z.basic_conv(m + "/b1/1x7", b1, c7, c7, {1, 7}, {1, 1}, HW{0, 3});
    b1 = z.basic_conv(m + "/b1/7x1", b1, 192, c7, {7, 1}, {1, 1}, HW{3, 0});
    std::string b2 = z.basic_conv(m + "/b2/1x1", in, c7, c, {1, 1});
    b2 = z.basic_conv(m + "/b2/7x1a", b2, c7, c7, {7, 1}, {1, 1}, HW{3, 0});
    b2 = z.basic_conv(m + "/b2/1x7a", b2, c7, c7, {1, 7}, {1, 1}, HW{0, 3});
    b2 = z.basic_conv(m + "/b2/7x1b", b2, c7, c7, {7, 1}, {1, 1}, HW{3, 0});
    b2 = z.basic_conv(m + "/b2/1x7b", b2, 192, c7, {1, 7}, {1, 1}, HW{0, 3});
    std::string b3 = z.pool(m + "/b3/pool", in, {3, 3}, {1, 1}, {1, 1});
    b3 = z.basic_conv(m + "/b3/1x1", b3, 192, c, {1, 1});
    return z.concat(m + "/concat", {b0, b1, b2, b3}, 1);
  };
  auto module_d = [&](const std::string& m, const std::string& in, int64_t c) {
    std::string b0 = z.basic_conv(m + "/b0/1x1", in, 192, c, {1, 1});
    b0 = z.basic_conv(m + "/b0/3x3", b0, 320, 192, {3, 3}, {2, 2});
    std::string b1 = z.basic_conv(m + "/b1/1x1", in, 192, c, {1, 1});
    b1 = z.basic_conv(m + "/b1/1x7", b1, 192, 192, {1, 7}, {1, 1}, HW{0, 3});
    b1 = z.basic_conv(m + "/b1/7x1", b1, 192, 192, {7, 1}, {1, 1}, HW{3, 0});
    b1 = z.basic_conv(m + "/b1/3x3", b1, 192, 192, {3, 3}, {2, 2});
    std::string b2 = z.pool(m + "/b2/pool", in, {3, 3}, {2, 2});
    return z.concat(m + "/concat", {b0, b1, b2}, 1);
  };
  auto module_e = [&](const std::string& m, const std::string& in, int64_t c) {
    std::string b0 = z.basic_conv(m + "/b0/1x1", in, 320, c, {1, 1});
    std::string b1 = z.basic_conv(m + "/b1/1x1", in, 384, c, {1, 1});
    std::string b1a = z.basic_conv(m + "/b1/1x3", b1, 384, 384, {1, 3}, {1, 1}, HW{0, 1});
    std::string b1b = z.basic_conv(m + "/b1/3x1", b1, 384, 384, {3, 1}, {1, 1}, HW{1, 0});
    b1 = z.concat(m + "/b1/concat", {b1a, b1b}, 1);
    std::string b2 = z.basic_conv(m + "/b2/1x1", in, 448, c, {1, 1});
    b2 = z.basic_conv(m + "/b2/3x3", b2, 384, 448, {3, 3}, {1, 1}, {1, 1});
    std::string b2a = z.basic_conv(m + "/b2/1x3", b2, 384, 384, {1, 3}, {1, 1}, HW{0, 1});
    std::string b2b = z.basic_conv(m + "/b2/3x1", b2, 384, 384, {3, 1}, {1, 1}, HW{1, 0});
    b2 = z.concat(m + "/b2/concat", {b2a, b2b}, 1);
    std::string b3 = z.pool(m + "/b3/pool", in, {3, 3}, {1, 1}, {1, 1});
    b3 = z.basic_conv(m + "/b3/1x1", b3, 192, c, {1, 1});
    return z.concat(m + "/concat", {b0, b1, b2, b3}, 1);
  };

  x = module_a("mixed_5b", x, 192, 32);
  x = module_a("mixed_5c", x, 256, 64);
  x = module_a("mixed_5d", x, 288, 64);
  x = module_b("mixed_6a", x, 288);
  x = module_c("mixed_6b", x, 768, 128);
  x = module_c("mixed_6c", x, 768, 160);
  x = module_c("mixed_6d", x, 768, 160);
  x = module_c("mixed_6e", x, 768, 192);
  x = module_d("mixed_7a", x, 768);
  x = module_e("mixed_7b", x, 1280);
  x = module_e("mixed_7c", x, 2048);
  x = z.reduce_mean("avgpool", x, {2, 3});
  x = z.fc("fc", x, 1000);
  z.add(ZooBuilder::node("loss", "softmax_xent", {x}));
  return z.finish();
}

GraphFileV1 rnnlm(int64_t b) {
  ZooBuilder z("rnnlm", 1);
  std::string ids = z.tensor("ids", {b, 256});
  NodeV1 embed = ZooBuilder::owning_node("embedding", "embedding", {ids});
  embed.vocab = 100000;
  embed.dim = 2048;
  std::string x = z.add(embed);
  NodeV1 lstm = ZooBuilder::owning_node("lstm", "lstm", {x});
  lstm.units = 2048;
  lstm.layers = 2;
  x = z.add(lstm);
  x = z.fc("fc", x, 100000);
  z.add(ZooBuilder::node("loss", "softmax_xent", {x}));
  return z.finish();
}

GraphFileV1 transformer(int64_t b) {
  const int64_t seq = 256, vocab = 50000, model = 512, heads = 8, key = 64, ff = 2048, layers = 6;
  ZooBuilder z("transformer", 1);
  std::string enc_ids = z.tensor("enc_ids", {b, seq});
  std::string dec_ids = z.tensor("dec_ids", {b, seq});
  std::string pos = z.tensor("pos_enc", {b, seq, model});  // fixed sinusoids: data, not a parameter

  auto attention = [&](const std::string& p, const std::vector<std::string>& xs) {
    std::string wqkv = z.parameter(parameter_name(p, "w_qkv"), {3, heads, model, key});
    std::string qkv;
    if (xs.size() == 1) {
      qkv = z.einsum(p + "/qkv", "ble,shek->sbhlk", {xs[0], wqkv});
    } else {
      std::string stacked = z.add(ZooBuilder::node(p + "/stack", "stack", xs));
      qkv = z.einsum(p + "/qkv", "sble,shek->sbhlk", {stacked, wqkv});
    }
    std::string split = z.add(ZooBuilder::node(p + "/unstack", "unstack", {qkv}));
    std::string logits = z.einsum(p + "/logits", "bhlk,bhmk->bhlm", {split + ":0", split + ":1"});
    NodeV1 softmax = ZooBuilder::node(p + "/softmax", "softmax", {logits});
    softmax.axis = 3;
    std::string w = z.add(softmax);
    std::string s = z.einsum(p + "/context", "bhlm,bhmk->bhlk", {w, split + ":2"});
    std::string wo = z.parameter(parameter_name(p, "w_o"), {heads, model, key});
    std::string o = z.einsum(p + "/out", "bhlk,hek->ble", {s, wo});
    std::string sum = z.elementwise(p + "/residual", {xs[0], o});
    return z.add(ZooBuilder::node(p + "/norm", "norm", {sum}));
  };
  auto feedforward = [&](const std::string& p, const std::string& x) {
    std::string w1 = z.parameter(parameter_name(p, "w1"), {model, ff});
    std::string w2 = z.parameter(parameter_name(p, "w2"), {ff, model});
    std::string h = z.einsum(p + "/ff1", "ble,ef->blf", {x, w1}, 2);
    std::string y = z.einsum(p + "/ff2", "blf,fe->ble", {h, w2});
    std::string sum = z.elementwise(p + "/residual", {x, y});
    return z.add(ZooBuilder::node(p + "/norm", "norm", {sum}));
  };
  auto embedding = [&](const std::string& name, const std::string& ids) {
    NodeV1 n = ZooBuilder::owning_node(name, "embedding", {ids});
    n.vocab = vocab;
    n.dim = model;
    return z.add(n);
  };

  std::string enc = embedding("encoder/embedding", enc_ids);
  enc = z.elementwise("encoder/position", {enc, pos});
  for (int64_t l = 0; l < layers; ++l) {
    std::string p = "encoder/layer" + std::to_string(l);
    enc = feedforward(p + "/ff", attention(p + "/self", {enc}));
  }
  std::string dec = embedding("decoder/embedding", dec_ids);
  dec = z.elementwise("decoder/position", {dec, pos});
  for (int64_t l = 0; l < layers; ++l) {
    std::string p = "decoder/layer" + std::to_string(l);
    std::string self = attention(p + "/self", {dec});
    std::string cross = attention(p + "/cross", {self, enc, enc});
    dec = feedforward(p + "/ff", cross);
  }
  std::string w_out = z.parameter(parameter_name("decoder", "w_vocab"), {model, vocab});
  std::string logits = z.einsum("decoder/logits", "ble,ev->blv", {dec, w_out});
  z.add(ZooBuilder::node("loss", "softmax_xent", {logits}));
  return z.finish();
}

}  // namespace

const std::vector<ZooEntry>& zoo_entries() {
  static const std::vector<ZooEntry> entries = {
      {"alexnet", 128, "AlexNet: 5 conv, 3 pool, 3 fc (14 vertices), image 227x227", 227},
      {"resnet101", 128, "ResNet-101: bottleneck blocks (3, 4, 23, 3), image 227x227", 227},
      {"inception3", 128, "Inception-v3: modules A x3, B, C x4, D, E x2, image 299x299", 0},
      {"rnnlm", 64, "RNN language model: embedding, 2-layer LSTM 2048, vocabulary 100000 (4 vertices)", 0},
      {"transformer", 64, "Transformer: 6+6 layers, model 512, 8 heads, ff 2048, vocabulary 50000", 0},
  };
  return entries;
}

GraphFileV1 build_zoo_graph(const std::string& name, int64_t batch, int64_t image) {
  if (batch <= 0) throw OptionError({"batch", "batch size", "", ": expected a positive number, got " + std::to_string(batch)});
  using Builder = std::function<GraphFileV1(int64_t, int64_t)>;
  static const std::vector<std::pair<std::string, Builder>> builders = {
      {"alexnet", alexnet},
      {"resnet101", resnet101},
      {"inception3", inception3},
      {"rnnlm", [](int64_t b, int64_t) { return rnnlm(b); }},
      {"transformer", [](int64_t b, int64_t) { return transformer(b); }}};
  std::vector<std::string> names;
  for (size_t k = 0; k < builders.size(); ++k) {
    const auto& [n, build] = builders[k];
    names.push_back(n);
    if (n != name) continue;
    const int64_t paper_image = zoo_entries()[k].image;
    if (image == 0) return build(batch, paper_image);
    if (paper_image == 0)
      throw OptionError({"image", "the image size", "",
                         ": only alexnet and resnet101 take it, not '" + name + "'"});
    if (image < 0 || (name == "alexnet" && alexnet_pool5_side(image) == 0))
      throw OptionError({"image", "the image size", "",
                         " " + std::to_string(image) + ": " + name + " needs " +
                             (name == "alexnet" ? "at least 67 (below, pool5 has no pixels)" : "a positive size")});
    return build(batch, image);
  }
  std::string hint = closest_name(name, names);
  throw InputError("unknown model '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                   "; `pase models` lists them");
}

}  // namespace pase
