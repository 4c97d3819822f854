#include "graphs/pad_vocabulary.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/error.h"

namespace pase {
namespace {

[[noreturn]] void refuse(const std::string& source, const std::string& why) {
  throw OptionError({"pad_vocab", "the vocabulary padding", source + ": ", ": " + why});
}

// The nodes from a loss back to its head (the head first): the loss's input,
// then through nodes that keep the classes on their last axis.
std::vector<size_t> head_chain(const GraphFileV1& file, const std::map<std::string, size_t>& by_name, size_t loss,
                               const std::string& source) {
  std::vector<size_t> chain;
  const NodeV1* node = &file.nodes[loss];
  while (true) {
    if (node->inputs.size() != 1 || by_name.count(node->inputs[0]) == 0)
      refuse(source, "node '" + node->name + "' does not read one node's output on the way from loss '" +
                         file.nodes[loss].name + "' to its head");
    const size_t at = by_name.at(node->inputs[0]);
    chain.insert(chain.begin(), at);
    node = &file.nodes[at];
    if (node->op == "fc") return chain;
    if (node->op != "elementwise" && node->op != "softmax")
      refuse(source, "node '" + node->name + "' (op " + node->op + ") lies between loss '" + file.nodes[loss].name +
                         "' and an fc head");
  }
}

int64_t rounded_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// The vocabulary axis of a node on the head's chain: the last of each output and pointwise weight.
void pad_last_axes(NodeV1& node, int64_t from, int64_t to) {
  if (node.outputs)
    for (Shape& shape : *node.outputs)
      if (!shape.empty() && shape.back() == from) shape.back() = to;
  if (node.pointwise_weights)
    for (PointwiseWeightV1& weight : *node.pointwise_weights)
      if (!weight.axis && !weight.shape.empty() && weight.shape.back() == from) weight.shape.back() = to;
}

// The token embedding: the one whose table the head reads, else the one embedding of the vocabulary.
std::optional<size_t> token_embedding(const GraphFileV1& file, const NodeV1& head, int64_t vocab, const std::string& source) {
  std::vector<size_t> same_vocab;
  for (size_t i = 0; i < file.nodes.size(); ++i) {
    const NodeV1& node = file.nodes[i];
    if (node.op != "embedding") continue;
    if (head.weights && node.weights && !head.weights->empty() && !node.weights->empty() &&
        head.weights->front() == node.weights->front())
      return i;
    if (node.vocab == vocab) same_vocab.push_back(i);
  }
  if (same_vocab.size() > 1)
    refuse(source, "embeddings '" + file.nodes[same_vocab[0]].name + "' and '" + file.nodes[same_vocab[1]].name +
                       "' both have the head's " + std::to_string(vocab) + " entries and neither shares its weight");
  if (same_vocab.empty()) return std::nullopt;
  return same_vocab[0];
}

}  // namespace

PaddedVocabulary pad_vocabulary(GraphFileV1& file, int64_t multiple, const std::string& source) {
  if (multiple < 1)
    throw OptionError({"pad_vocab", "the vocabulary padding", "", ": expected a positive multiple, got " + std::to_string(multiple)});
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < file.nodes.size(); ++i) by_name[file.nodes[i].name] = i;
  std::set<size_t> padded;
  PaddedVocabulary result;
  for (size_t loss = 0; loss < file.nodes.size(); ++loss) {
    if (file.nodes[loss].op != "softmax_xent") continue;
    const std::vector<size_t> chain = head_chain(file, by_name, loss, source);
    NodeV1& head = file.nodes[chain.front()];
    const int64_t vocab = head.units.value_or(0);
    if (result.from != 0 && vocab != result.from && vocab != result.to)
      refuse(source, "heads of " + std::to_string(result.from) + " and " + std::to_string(vocab) + " classes");
    if (result.from == 0) result = {vocab, rounded_up(vocab, multiple), {}};
    if (result.from == result.to || padded.count(chain.front())) continue;
    head.units = result.to;
    for (size_t at : chain) {
      pad_last_axes(file.nodes[at], result.from, result.to);
      padded.insert(at);
    }
    if (const std::optional<size_t> embedding = token_embedding(file, head, result.from, source)) {
      NodeV1& table = file.nodes[*embedding];
      if (table.vocab == result.from) table.vocab = result.to;
      padded.insert(*embedding);
    }
  }
  if (result.from == 0) refuse(source, "no softmax_xent loss reads an fc head (import with a loss)");
  for (size_t at : padded) result.layers.push_back(file.nodes[at].name);
  return result;
}

}  // namespace pase
