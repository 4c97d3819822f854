#include "cli/onnx_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <mutex>

#include "base/error.h"
#include "onnximport/onnx_plugin.h"

namespace pase {
namespace {

std::string executable_dir() {
  char buffer[4096];
  ssize_t length = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (length <= 0) return ".";
  std::string path(buffer, static_cast<size_t>(length));
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

PaseOnnxImportFunction load_plugin(const std::string& model_path) {
  static std::once_flag once;
  static PaseOnnxImportFunction entry = nullptr;
  static std::string problem;
  std::call_once(once, [] {
    // Next to the executable first (build tree, install), then the loader's search path.
    void* handle = dlopen((executable_dir() + "/" PASE_ONNX_PLUGIN_FILE).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) handle = dlopen(PASE_ONNX_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* error = dlerror();
      problem = std::string("this pase has no ONNX support (") + (error ? error : PASE_ONNX_PLUGIN_FILE " not found") +
                "); rebuild with libonnx-dev installed";
      return;
    }
    entry = reinterpret_cast<PaseOnnxImportFunction>(dlsym(handle, PASE_ONNX_PLUGIN_ENTRY));
    if (!entry) problem = std::string(PASE_ONNX_PLUGIN_FILE " has no entry point " PASE_ONNX_PLUGIN_ENTRY);
  });
  if (!entry) throw InputError(model_path + ": " + problem);
  return entry;
}

}  // namespace

bool is_onnx_file(const std::string& path) {
  if (path.size() < 5) return false;
  std::string tail = path.substr(path.size() - 5);
  for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".onnx";
}

OnnxImport import_onnx_model(const std::string& path, const OnnxImportOptions& options) {
  OnnxImport result;
  load_plugin(path)(path.c_str(), &options, &result);
  return result;
}

}  // namespace pase
