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

Graph graph_from_json(const std::string& text, const std::string& source) {
  return build_graph(parse_graph_file(text, source), source);
}

}  // namespace pase::test
