#include "test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

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

Graph graph_from_json(const std::string& text, const std::string& source) {
  return build_graph(parse_graph_file(text, source), source);
}

}  // namespace pase::test
