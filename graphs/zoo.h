#pragma once
// The paper's five benchmark graphs, built exactly as the PaSE evaluation models them.
// Weights have PyTorch-style names: a conv2d, fc, embedding or lstm node's
// own weight is its path with '.' for '/' plus ".weight" ("layer1.0.conv1.weight"),
// and the Transformer's weight tensors, listed under "parameters", are named
// the same way ("encoder.layer0.self.w_qkv", "decoder.w_vocab").
#include <string>
#include <vector>

#include "graphs/graph_file.h"

namespace pase {

struct ZooEntry {
  std::string name;
  int64_t default_batch;  ///< the paper's batch size
  std::string summary;
  int64_t image = 0;  ///< the image's height and width a CNN can be built at (the paper's); 0: fixed or none
};

/// alexnet, resnet101, inception3, rnnlm, transformer.
[[nodiscard]] const std::vector<ZooEntry>& zoo_entries();

/// Builds one zoo graph at a batch size and, for alexnet and resnet101, an
/// image size (0: the paper's, 227); unknown names are an InputError, a bad
/// size an OptionError ("batch", "image").
[[nodiscard]] GraphFileV1 build_zoo_graph(const std::string& name, int64_t batch, int64_t image = 0);

}  // namespace pase
