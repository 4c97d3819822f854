#pragma once
// The paper's five benchmark graphs, built exactly as the PaSE evaluation models them.
#include <string>
#include <vector>

#include "graphs/graph_file.h"

namespace pase {

struct ZooEntry {
  std::string name;
  int64_t default_batch;  ///< the paper's batch size
  std::string summary;
};

/// alexnet, resnet101, inception3, rnnlm, transformer.
[[nodiscard]] const std::vector<ZooEntry>& zoo_entries();

/// Builds one zoo graph at a batch size; unknown names are an InputError.
[[nodiscard]] GraphFileV1 build_zoo_graph(const std::string& name, int64_t batch);

}  // namespace pase
