#include "test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "costmodel/cost_model.h"

namespace pase::test {
namespace {

std::string temp_dir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/pase-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    const char* made = mkdtemp(buffer.data());
    return std::string(made ? made : "/tmp");
  }();
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CommandResult run_pase(const std::string& args) {
  static int counter = 0;
  std::string stem = temp_dir() + "/run" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  std::string command = std::string("\"") + PASE_EXE + "\" " + args + " >" + stem + ".out 2>" + stem + ".err </dev/null";
  int raw = std::system(command.c_str());
  CommandResult result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
  result.output = slurp(stem + ".out");
  result.error = slurp(stem + ".err");
  return result;
}

std::string write_temp_file(const std::string& name, const std::string& text) {
  std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const std::string& exported_model(const std::string& arguments) {
  static std::map<std::string, std::string> made;
  auto it = made.find(arguments);
  if (it != made.end()) return it->second;
  const CommandResult exported = run_pase("models export " + arguments);
  if (exported.status != 0) throw std::runtime_error("pase models export " + arguments + ": " + exported.error);
  const std::string path = write_temp_file("exported_" + std::to_string(made.size()) + ".json", exported.output);
  return made.emplace(arguments, path).first->second;
}

std::string source_path(const std::string& relative) { return std::string(PASE_SOURCE_DIR) + "/" + relative; }

const char* const kTestMachineProfile = R"({
  "format": "pase-machine", "version": 1, "name": "test-node", "source": "test",
  "device": {"name": "Test GPU", "peak_tflops": 10, "memory_gb": 8, "memory_bandwidth_gbps": 500},
  "devices_per_node": 8,
  "intra_node": {"bandwidth_gbps": 10, "latency_us": 5},
  "inter_node": {"bandwidth_gbps": 2, "latency_us": 20},
  "gemm": {
    "m": [64, 256], "n": [64, 256], "k": [64, 256],
    "nn_tflops": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
    "nt_tflops": [[[2, 2], [2, 2]], [[2, 2], [2, 2]]],
    "tn_tflops": [[[4, 4], [4, 4]], [[4, 4], [4, 4]]]
  }
})";

Graph two_layer_mlp(int64_t batch, int64_t features, int64_t units1, int64_t units2) {
  return graph_from_json(R"({"format": "pase-graph", "version": 1, "name": "mlp", "tensors": {"x": [)" +
                         std::to_string(batch) + ", " + std::to_string(features) + R"(]},
   "nodes": [{"name": "fc1", "op": "fc", "inputs": ["x"], "units": )" + std::to_string(units1) + R"(},
             {"name": "fc2", "op": "fc", "inputs": ["fc1"], "units": )" + std::to_string(units2) + R"(},
             {"name": "loss", "op": "softmax_xent", "inputs": ["fc2"]}]})");
}

Graph residual_block() {
  return graph_from_json(R"({"format": "pase-graph", "version": 1, "name": "residual", "cutoff": 1,
   "tensors": {"x": [8, 6]},
   "nodes": [{"name": "fc1", "op": "fc", "inputs": ["x"], "units": 4},
             {"name": "a", "op": "elementwise", "inputs": ["fc1"]},
             {"name": "b", "op": "elementwise", "inputs": ["a"]},
             {"name": "res", "op": "elementwise", "inputs": ["fc1", "b"]},
             {"name": "fc2", "op": "fc", "inputs": ["res"], "units": 3}]})");
}

Graph graph_from_json(const std::string& text, const std::string& source) {
  return build_graph(parse_graph_file(text, source), source);
}

const std::vector<Golden>& goldens(const std::string& kind) {
  static std::map<std::string, std::vector<Golden>> cache;
  auto found = cache.find(kind);
  if (found != cache.end()) return found->second;
  const std::string path = source_path("tests/expected/" + kind + ".json");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the golden file");
  nlohmann::json document;
  try {
    in >> document;
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(path + ": " + error.what());
  }
  if (document.value("format", "") != "pase-test-goldens" || document.value("kind", "") != kind)
    throw std::runtime_error(path + ": expected a pase-test-goldens file of kind " + kind);
  std::vector<Golden> entries;
  try {
    for (const nlohmann::json& item : document.at("entries")) {
      Golden g;
      g.graph = item.at("graph").get<std::string>();
      g.file = item.at("file").get<std::string>();
      g.batch = item.at("batch").get<int64_t>();
      g.devices = item.at("devices").get<int64_t>();
      g.strategy = item.at("strategy").get<std::string>();
      g.cost_model = item.at("cost_model").get<std::string>();
      g.flops_tflops = item.at("machine").at("flops_tflops").get<double>();
      g.bandwidth_gbps = item.at("machine").at("bandwidth_gbps").get<double>();
      g.total_cost = item.at("total_cost").get<double>();
      if (item.contains("layers"))
        for (const nlohmann::json& layer : item.at("layers"))
          g.layers.emplace_back(layer.at("name").get<std::string>(), layer.at("config").get<std::vector<int32_t>>());
      entries.push_back(std::move(g));
    }
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(path + ": " + error.what() + " (regenerate it with scripts/regen_goldens.py)");
  }
  return cache.emplace(kind, std::move(entries)).first->second;
}

const Golden& golden(const std::string& kind, const std::string& graph, int64_t devices, const std::string& strategy) {
  const Machine defaults;
  for (const Golden& g : goldens(kind))
    if (g.graph == graph && g.devices == devices && g.strategy == strategy && g.cost_model == "pase" &&
        g.flops_tflops == defaults.flops_tflops && g.bandwidth_gbps == defaults.bandwidth_gbps)
      return g;
  throw std::runtime_error("tests/expected/" + kind + ".json: no entry for " + graph + " at p = " +
                           std::to_string(devices) + " with strategy " + strategy + " on the default machine");
}

double zoo_optimum(const std::string& graph, int64_t devices) { return golden("zoo_optima", graph, devices).total_cost; }

double baseline_cost(const std::string& strategy, const std::string& graph, int64_t devices) {
  return golden("baseline_costs", graph, devices, strategy).total_cost;
}

std::string flop_text(double cost) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.0f", cost);
  return buffer;
}

void each_partition(int positions, int parts, const std::function<void(const std::vector<int>&)>& visit) {
  std::vector<int> bounds = {0};
  std::function<void(int)> extend = [&](int k) {
    if (k == parts) {
      if (bounds.back() == positions) visit(bounds);
      return;
    }
    for (int j = bounds.back() + 1; j <= positions - (parts - k - 1); ++j) {
      bounds.push_back(j);
      extend(k + 1);
      bounds.pop_back();
    }
  };
  extend(0);
}

}  // namespace pase::test
