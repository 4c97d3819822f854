#include "costmodel/machine_profile.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_document.h"
#include "base/json_reader.h"
#include "base/text_file.h"

namespace pase {
namespace {

using json = nlohmann::json;

// File units to SI.
constexpr double kTera = 1e12, kGiga = 1e9, kMicro = 1e-6;

const std::vector<std::string> kTopFields = {"format", "version",    "name",       "source",     "notes", "device",
                                             "devices_per_node", "intra_node", "inter_node", "gemm", "gemm_by_dtype", "measured"};
const std::vector<std::string> kDeviceFields = {"name", "peak_tflops", "peak_tflops_by_dtype", "memory_gb",
                                                "memory_bandwidth_gbps"};
const std::vector<std::string> kDtypeFields = {"fp32", "tf32", "bf16", "fp16"};
const std::vector<std::string> kLinkFields = {"bandwidth_gbps", "latency_us"};
const std::vector<std::string> kGemmFields = {"m", "n", "k", "nn_tflops", "nt_tflops", "tn_tflops"};
const std::vector<std::string> kMeasuredFields = {
    "date",    "gpu",     "cuda_driver",         "cuda_runtime",        "cublas",
    "gpu_count", "warmup", "repeats", "host_to_device_gbps", "device_to_host_gbps", "device_to_device_gbps"};

// A link object: bandwidth in GB/s and latency in µs.
LinkSpec read_link(const JsonReader& object) {
  object.check_known_fields(kLinkFields);
  return {object.required("bandwidth_gbps").as_positive_number() * kGiga,
          object.required("latency_us").as_positive_number() * kMicro};
}

// A non-empty, strictly increasing list of positive sizes.
std::vector<double> read_grid(const JsonReader& field) {
  const json& value = field.value();
  if (!value.is_array() || value.empty())
    field.fail("expected a non-empty array of sizes, got " + json_excerpt(value));
  std::vector<double> points;
  for (const JsonReader& point : field.items()) {
    double v = point.as_positive_number();
    if (!points.empty() && !(v > points.back()))
      field.fail("grid must be strictly increasing, got " + json_excerpt(point.value()) + " after " +
                 json_excerpt(value[points.size() - 1]));
    points.push_back(v);
  }
  return points;
}

// `field` is an array of `expected` entries, or fails "expected N WHAT, got M".
std::vector<JsonReader> sized_items(const JsonReader& field, size_t expected, const char* what) {
  const json& value = field.value();
  if (!value.is_array() || value.size() != expected)
    field.fail("expected " + std::to_string(expected) + " " + what + ", got " +
               (value.is_array() ? std::to_string(value.size()) : json_type_phrase(value)));
  return field.items();
}

// A [|m|][|n|][|k|] array of TFLOP/s, flattened m-major.
std::vector<double> read_cube(const JsonReader& field, const GemmTable& t) {
  std::vector<double> flops;
  for (const JsonReader& plane : sized_items(field, t.m.size(), "planes (one per m)"))
    for (const JsonReader& row : sized_items(plane, t.n.size(), "rows (one per n)"))
      for (const JsonReader& value : sized_items(row, t.k.size(), "numbers (one per k)"))
        flops.push_back(value.as_positive_number() * kTera);
  return flops;
}

GemmTable read_gemm(const JsonReader& object) {
  object.check_known_fields(kGemmFields);
  GemmTable table;
  table.m = read_grid(object.required("m"));
  table.n = read_grid(object.required("n"));
  table.k = read_grid(object.required("k"));
  for (GemmLayout layout : {GemmLayout::NN, GemmLayout::NT, GemmLayout::TN})
    table.flops[static_cast<size_t>(layout)] = read_cube(object.required(std::string(layout_name(layout)) + "_tflops"), table);
  return table;
}

// {"tf32": table, "bf16": table, "fp16": table}: each needs its dtype's peak, which prices what the table cannot.
void read_gemm_by_dtype(const JsonReader& object, MachineProfile& p) {
  object.expect_object("an object of GEMM tables by dtype, e.g. {\"bf16\": {\"m\": [...], ...}}");
  object.check_known_fields(kDtypeFields);
  if (auto f = object.optional("fp32")) f->fail("the fp32 table is the top-level field 'gemm'");
  for (Dtype d : {Dtype::Tf32, Dtype::Bf16, Dtype::Fp16}) {
    std::optional<JsonReader> table = object.optional(dtype_name(d));
    if (!table) continue;
    if (!(p.peak_by_dtype[static_cast<size_t>(d)] > 0))
      table->fail(std::string("needs device.peak_tflops_by_dtype.") + dtype_name(d));
    p.gemm_by_dtype[static_cast<size_t>(d)] = read_gemm(*table);
  }
}

MeasuredInfo read_measured(const JsonReader& object) {
  object.check_known_fields(kMeasuredFields);
  MeasuredInfo info;
  info.date = object.required("date").as_string();
  info.gpu = object.required("gpu").as_string();
  info.cuda_driver = object.required("cuda_driver").as_string();
  info.cuda_runtime = object.required("cuda_runtime").as_string();
  info.cublas = object.required("cublas").as_string();
  info.gpu_count = object.required("gpu_count").as_positive("integer");
  info.warmup = object.required("warmup").as_positive("integer");
  info.repeats = object.required("repeats").as_positive("integer");
  info.host_to_device = object.required("host_to_device_gbps").as_positive_number() * kGiga;
  info.device_to_host = object.required("device_to_host_gbps").as_positive_number() * kGiga;
  if (auto f = object.optional("device_to_device_gbps")) info.device_to_device = f->as_positive_number() * kGiga;
  return info;
}

// A table in the file's units: TFLOP/s in [m][n][k] arrays, one per layout.
nlohmann::ordered_json gemm_json(const GemmTable& t) {
  using ojson = nlohmann::ordered_json;
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
  return gemm;
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
  json document = parse_json_document(text, source);
  JsonReader root(document, source);
  root.expect_object("a JSON object at the top level");
  root.check_header("pase-machine", 1);  // first: another kind of file is named as such
  root.check_known_fields(kTopFields);

  MachineProfile p;
  p.name = root.required("name").as_string();
  p.source = root.required("source").as_string();
  if (auto f = root.optional("notes")) p.notes = f->as_string();
  JsonReader device = root.required("device");
  device.check_known_fields(kDeviceFields);
  p.device_name = device.required("name").as_string();
  p.peak_flops = device.required("peak_tflops").as_positive_number() * kTera;
  p.peak_by_dtype[static_cast<size_t>(Dtype::Fp32)] = p.peak_flops;
  if (auto rates = device.optional("peak_tflops_by_dtype")) {
    rates->expect_object("an object of TFLOP/s by dtype, e.g. {\"tf32\": 156, \"bf16\": 312}");
    rates->check_known_fields(kDtypeFields);
    for (Dtype d : {Dtype::Tf32, Dtype::Bf16, Dtype::Fp16})
      if (auto f = rates->optional(dtype_name(d))) p.peak_by_dtype[static_cast<size_t>(d)] = f->as_positive_number() * kTera;
    // fp32 may be repeated here for completeness; it must then agree with peak_tflops.
    if (auto f = rates->optional("fp32")) {
      const double fp32 = f->as_positive_number();
      if (fp32 * kTera != p.peak_flops)
        f->fail("must equal device.peak_tflops (" + json_excerpt(device.required("peak_tflops").value()) + "), got " +
                json_excerpt(f->value()));
    }
  }
  p.memory_bytes = device.required("memory_gb").as_positive_number() * kGiga;
  p.memory_bandwidth = device.required("memory_bandwidth_gbps").as_positive_number() * kGiga;
  p.devices_per_node = root.required("devices_per_node").as_positive("integer");
  p.intra_node = read_link(root.required("intra_node"));
  p.inter_node = read_link(root.required("inter_node"));
  if (auto f = root.optional("gemm")) p.gemm = read_gemm(*f);
  if (auto f = root.optional("gemm_by_dtype")) read_gemm_by_dtype(*f, p);
  const bool measured = p.source == "measured";
  std::optional<JsonReader> info = root.optional("measured");
  if (measured && !info) (void)root.required("measured", "required when source is \"measured\"");
  if (!measured && info) info->fail("only allowed when source is \"measured\"");
  if (info) p.measured = read_measured(*info);
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
  doc["device"] = {{"name", p.device_name}, {"peak_tflops", p.peak_flops / kTera}};
  ojson rates = ojson::object();
  for (Dtype d : {Dtype::Tf32, Dtype::Bf16, Dtype::Fp16})
    if (double r = p.peak_by_dtype[static_cast<size_t>(d)]; r > 0) rates[dtype_name(d)] = r / kTera;
  if (!rates.empty()) doc["device"]["peak_tflops_by_dtype"] = rates;
  doc["device"]["memory_gb"] = p.memory_bytes / kGiga;
  doc["device"]["memory_bandwidth_gbps"] = p.memory_bandwidth / kGiga;
  doc["devices_per_node"] = p.devices_per_node;
  auto link = [](const LinkSpec& l) {
    return ojson{{"bandwidth_gbps", l.bandwidth / kGiga}, {"latency_us", l.latency / kMicro}};
  };
  doc["intra_node"] = link(p.intra_node);
  doc["inter_node"] = link(p.inter_node);
  if (p.gemm) doc["gemm"] = gemm_json(*p.gemm);
  ojson tables = ojson::object();
  for (Dtype d : {Dtype::Tf32, Dtype::Bf16, Dtype::Fp16})
    if (const auto& t = p.gemm_by_dtype[static_cast<size_t>(d)]) tables[dtype_name(d)] = gemm_json(*t);
  if (!tables.empty()) doc["gemm_by_dtype"] = tables;
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

double peak_flops_for(const MachineProfile& profile, Dtype dtype) {
  if (dtype == Dtype::Fp32) return profile.peak_flops;
  const double rate = profile.peak_by_dtype[static_cast<size_t>(dtype)];
  if (rate > 0) return rate;
  throw InputError("machine '" + profile.name + "': no " + dtype_name(dtype) + " rate (field 'device.peak_tflops_by_dtype." +
                   dtype_name(dtype) + "'): the device lacks it or the profile does not give it");
}

const GemmTable* gemm_table(const MachineProfile& profile, Dtype dtype) {
  const std::optional<GemmTable>& table =
      dtype == Dtype::Fp32 ? profile.gemm : profile.gemm_by_dtype[static_cast<size_t>(dtype)];
  return table ? &*table : nullptr;
}

double achieved_flops(const MachineProfile& profile, GemmLayout layout, double m, double n, double k) {
  return profile.gemm ? interpolate_flops(*profile.gemm, layout, m, n, k) : profile.peak_flops;
}

double interpolate_flops(const GemmTable& t, GemmLayout layout, double m, double n, double k) {
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
