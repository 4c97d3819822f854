#include "costmodel/machine_profile.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "graphs/error.h"
#include "graphs/json_document.h"
#include "graphs/graph_file.h"

namespace pase {
namespace {

using json = nlohmann::json;

// File units to SI.
constexpr double kTera = 1e12, kGiga = 1e9, kMicro = 1e-6;

const std::vector<std::string> kTopFields = {"format", "version",    "name",       "source",     "notes", "device",
                                             "devices_per_node", "intra_node", "inter_node", "gemm", "measured"};
const std::vector<std::string> kDeviceFields = {"name", "peak_tflops", "memory_gb", "memory_bandwidth_gbps"};
const std::vector<std::string> kLinkFields = {"bandwidth_gbps", "latency_us"};
const std::vector<std::string> kGemmFields = {"m", "n", "k", "nn_tflops", "nt_tflops", "tn_tflops"};
const std::vector<std::string> kMeasuredFields = {
    "date",    "gpu",     "cuda_driver",         "cuda_runtime",        "cublas",
    "gpu_count", "warmup", "repeats", "host_to_device_gbps", "device_to_host_gbps", "device_to_device_gbps"};

// Every check names the file and the dotted JSON path of the field.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw InputError(source_ + ": field '" + path + "': " + message);
  }

  void check_fields(const json& object, const std::vector<std::string>& allowed, const std::string& path) const {
    if (!object.is_object()) fail(path, "expected an object, got " + kind(object));
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
      std::string hint = closest_name(it.key(), allowed);
      fail(join(path, it.key()), std::string("unknown field") + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  }

  const json& need(const json& object, const std::string& path, const std::string& key) const {
    if (!object.contains(key)) fail(join(path, key), "missing");
    return object[key];
  }

  std::string string(const json& object, const std::string& path, const std::string& key) const {
    const json& value = need(object, path, key);
    if (!value.is_string()) fail(join(path, key), "expected a string, got " + kind(value));
    return value.get<std::string>();
  }

  double positive(const json& value, const std::string& path) const {
    if (!value.is_number()) fail(path, "expected a positive number, got " + kind(value));
    double v = value.get<double>();
    if (!(v > 0) || !std::isfinite(v)) fail(path, "expected a positive number, got " + value.dump());
    return v;
  }

  double positive(const json& object, const std::string& path, const std::string& key) const {
    return positive(need(object, path, key), join(path, key));
  }

  int64_t count(const json& object, const std::string& path, const std::string& key) const {
    const json& value = need(object, path, key);
    if (!value.is_number_integer() || value.get<int64_t>() <= 0)
      fail(join(path, key), "expected a positive integer, got " + value.dump());
    return value.get<int64_t>();
  }

  LinkSpec link(const json& root, const std::string& key) const {
    const json& object = need(root, "", key);
    check_fields(object, kLinkFields, key);
    return {positive(object, key, "bandwidth_gbps") * kGiga, positive(object, key, "latency_us") * kMicro};
  }

  std::vector<double> grid(const json& object, const std::string& path, const std::string& key) const {
    const json& value = need(object, path, key);
    std::string where = join(path, key);
    if (!value.is_array() || value.empty()) fail(where, "expected a non-empty array of sizes, got " + value.dump());
    std::vector<double> points;
    for (size_t i = 0; i < value.size(); ++i) {
      double v = positive(value[i], where + "[" + std::to_string(i) + "]");
      if (!points.empty() && !(v > points.back()))
        fail(where, "grid must be strictly increasing, got " + value[i].dump() + " after " + value[i - 1].dump());
      points.push_back(v);
    }
    return points;
  }

  // A [|m|][|n|][|k|] array of TFLOP/s, flattened m-major.
  std::vector<double> cube(const json& object, const std::string& key, const GemmTable& t) const {
    const std::string where = "gemm." + key;
    const json& planes = need(object, "gemm", key);
    auto check_size = [&](const json& value, size_t expected, const std::string& path, const char* what) {
      if (!value.is_array() || value.size() != expected)
        fail(path, "expected " + std::to_string(expected) + " " + what + ", got " +
                       (value.is_array() ? std::to_string(value.size()) : kind(value)));
    };
    std::vector<double> flops;
    check_size(planes, t.m.size(), where, "planes (one per m)");
    for (size_t i = 0; i < planes.size(); ++i) {
      std::string plane_path = where + "[" + std::to_string(i) + "]";
      check_size(planes[i], t.n.size(), plane_path, "rows (one per n)");
      for (size_t j = 0; j < planes[i].size(); ++j) {
        std::string row_path = plane_path + "[" + std::to_string(j) + "]";
        check_size(planes[i][j], t.k.size(), row_path, "numbers (one per k)");
        for (size_t l = 0; l < planes[i][j].size(); ++l)
          flops.push_back(positive(planes[i][j][l], row_path + "[" + std::to_string(l) + "]") * kTera);
      }
    }
    return flops;
  }

 private:
  static std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
  static std::string kind(const json& value) {
    if (value.is_number()) return "a number " + value.dump();
    return std::string("a") + (value.is_array() || value.is_object() ? "n " : " ") + value.type_name();
  }

  std::string source_;
};

GemmTable read_gemm(const Reader& r, const json& object) {
  r.check_fields(object, kGemmFields, "gemm");
  GemmTable table;
  table.m = r.grid(object, "gemm", "m");
  table.n = r.grid(object, "gemm", "n");
  table.k = r.grid(object, "gemm", "k");
  for (GemmLayout layout : {GemmLayout::NN, GemmLayout::NT, GemmLayout::TN})
    table.flops[static_cast<size_t>(layout)] = r.cube(object, std::string(layout_name(layout)) + "_tflops", table);
  return table;
}

MeasuredInfo read_measured(const Reader& r, const json& object) {
  const std::string path = "measured";
  r.check_fields(object, kMeasuredFields, path);
  MeasuredInfo info;
  info.date = r.string(object, path, "date");
  info.gpu = r.string(object, path, "gpu");
  info.cuda_driver = r.string(object, path, "cuda_driver");
  info.cuda_runtime = r.string(object, path, "cuda_runtime");
  info.cublas = r.string(object, path, "cublas");
  info.gpu_count = r.count(object, path, "gpu_count");
  info.warmup = r.count(object, path, "warmup");
  info.repeats = r.count(object, path, "repeats");
  info.host_to_device = r.positive(object, path, "host_to_device_gbps") * kGiga;
  info.device_to_host = r.positive(object, path, "device_to_host_gbps") * kGiga;
  if (object.contains("device_to_device_gbps"))
    info.device_to_device = r.positive(object, path, "device_to_device_gbps") * kGiga;
  return info;
}

// Position of x between grid points: index i and weight t of point i+1, in log2 space, clamped.
void bracket(const std::vector<double>& grid, double x, size_t& i, double& t) {
  if (grid.size() == 1 || x <= grid.front()) {
    i = 0, t = 0;
    return;
  }
  if (x >= grid.back()) {
    i = grid.size() - 2, t = 1;
    return;
  }
  i = static_cast<size_t>(std::upper_bound(grid.begin(), grid.end(), x) - grid.begin()) - 1;
  t = (std::log2(x) - std::log2(grid[i])) / (std::log2(grid[i + 1]) - std::log2(grid[i]));
}

}  // namespace

const char* layout_name(GemmLayout layout) {
  switch (layout) {
    case GemmLayout::NN: return "nn";
    case GemmLayout::NT: return "nt";
    case GemmLayout::TN: return "tn";
  }
  return "?";
}

MachineProfile parse_machine_profile(const std::string& text, const std::string& source) {
  json root = parse_json_document(text, source);
  if (!root.is_object()) throw InputError(source + ": expected a JSON object at the top level");
  Reader r(source);
  r.check_fields(root, kTopFields, "");
  if (r.string(root, "", "format") != "pase-machine")
    r.fail("format", "expected \"pase-machine\", got " + root["format"].dump());
  if (r.count(root, "", "version") != 1)
    r.fail("version", "unsupported version " + root["version"].dump() + " (this pase reads version 1)");

  MachineProfile p;
  p.name = r.string(root, "", "name");
  p.source = r.string(root, "", "source");
  if (root.contains("notes")) p.notes = r.string(root, "", "notes");
  const json& device = r.need(root, "", "device");
  r.check_fields(device, kDeviceFields, "device");
  p.device_name = r.string(device, "device", "name");
  p.peak_flops = r.positive(device, "device", "peak_tflops") * kTera;
  p.memory_bytes = r.positive(device, "device", "memory_gb") * kGiga;
  p.memory_bandwidth = r.positive(device, "device", "memory_bandwidth_gbps") * kGiga;
  p.devices_per_node = r.count(root, "", "devices_per_node");
  p.intra_node = r.link(root, "intra_node");
  p.inter_node = r.link(root, "inter_node");
  if (root.contains("gemm")) p.gemm = read_gemm(r, root["gemm"]);
  bool measured = p.source == "measured";
  if (measured && !root.contains("measured")) r.fail("measured", "missing (required when source is \"measured\")");
  if (!measured && root.contains("measured")) r.fail("measured", "only allowed when source is \"measured\"");
  if (measured) p.measured = read_measured(r, root["measured"]);
  return p;
}

MachineProfile read_machine_profile(const std::string& path) { return parse_machine_profile(read_text_file(path), path); }

std::string write_machine_profile(const MachineProfile& p) {
  using ojson = nlohmann::ordered_json;
  ojson doc;
  doc["format"] = "pase-machine";
  doc["version"] = 1;
  doc["name"] = p.name;
  doc["source"] = p.source;
  if (!p.notes.empty()) doc["notes"] = p.notes;
  doc["device"] = {{"name", p.device_name},
                   {"peak_tflops", p.peak_flops / kTera},
                   {"memory_gb", p.memory_bytes / kGiga},
                   {"memory_bandwidth_gbps", p.memory_bandwidth / kGiga}};
  doc["devices_per_node"] = p.devices_per_node;
  auto link = [](const LinkSpec& l) {
    return ojson{{"bandwidth_gbps", l.bandwidth / kGiga}, {"latency_us", l.latency / kMicro}};
  };
  doc["intra_node"] = link(p.intra_node);
  doc["inter_node"] = link(p.inter_node);
  if (p.gemm) {
    const GemmTable& t = *p.gemm;
    ojson gemm = {{"m", t.m}, {"n", t.n}, {"k", t.k}};
    for (GemmLayout layout : {GemmLayout::NN, GemmLayout::NT, GemmLayout::TN}) {
      const std::vector<double>& flops = t.flops[static_cast<size_t>(layout)];
      ojson planes = ojson::array();
      for (size_t i = 0; i < t.m.size(); ++i) {
        ojson rows = ojson::array();
        for (size_t j = 0; j < t.n.size(); ++j) {
          ojson row = ojson::array();
          for (size_t l = 0; l < t.k.size(); ++l) row.push_back(flops[(i * t.n.size() + j) * t.k.size() + l] / kTera);
          rows.push_back(row);
        }
        planes.push_back(rows);
      }
      gemm[std::string(layout_name(layout)) + "_tflops"] = planes;
    }
    doc["gemm"] = gemm;
  }
  if (p.measured) {
    const MeasuredInfo& m = *p.measured;
    ojson info = {{"date", m.date},
                  {"gpu", m.gpu},
                  {"cuda_driver", m.cuda_driver},
                  {"cuda_runtime", m.cuda_runtime},
                  {"cublas", m.cublas},
                  {"gpu_count", m.gpu_count},
                  {"warmup", m.warmup},
                  {"repeats", m.repeats},
                  {"host_to_device_gbps", m.host_to_device / kGiga},
                  {"device_to_host_gbps", m.device_to_host / kGiga}};
    if (m.device_to_device) info["device_to_device_gbps"] = *m.device_to_device / kGiga;
    doc["measured"] = info;
  }
  return doc.dump(2) + "\n";
}

double achieved_flops(const MachineProfile& profile, GemmLayout layout, double m, double n, double k) {
  if (!profile.gemm) return profile.peak_flops;
  const GemmTable& t = *profile.gemm;
  const std::vector<double>& f = t.flops[static_cast<size_t>(layout)];
  size_t i, j, l;
  double ti, tj, tl;
  bracket(t.m, m, i, ti);
  bracket(t.n, n, j, tj);
  bracket(t.k, k, l, tl);
  // A one-point axis has weight 0 on the (absent) next point; clamp its index.
  auto at = [&](size_t a, size_t b, size_t c) {
    a = std::min(a, t.m.size() - 1), b = std::min(b, t.n.size() - 1), c = std::min(c, t.k.size() - 1);
    return f[(a * t.n.size() + b) * t.k.size() + c];
  };
  double result = 0;
  for (size_t di = 0; di < 2; ++di)
    for (size_t dj = 0; dj < 2; ++dj)
      for (size_t dl = 0; dl < 2; ++dl) {
        double w = (di ? ti : 1 - ti) * (dj ? tj : 1 - tj) * (dl ? tl : 1 - tl);
        if (w != 0) result += w * at(i + di, j + dj, l + dl);
      }
  return result;
}

}  // namespace pase
