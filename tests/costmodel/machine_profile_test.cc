// The pase-machine reader (every kind of bad file, with its exact message),
// the writer's round trip, and the GEMM table interpolation.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "costmodel/machine_profile.h"
#include "base/error.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

json base_profile() { return json::parse(test::kTestMachineProfile); }

std::string error_of(const json& doc) {
  try {
    (void)parse_machine_profile(doc.dump(), "m.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("parse_machine_profile") {
  SUBCASE("a good file, in SI units") {
    MachineProfile result = parse_machine_profile(base_profile().dump(), "m.json");
    CHECK(result.name == "test-node");
    CHECK(result.device_name == "Test GPU");
    CHECK(result.peak_flops == doctest::Approx(10e12));
    CHECK(result.memory_bytes == doctest::Approx(8e9));
    CHECK(result.memory_bandwidth == doctest::Approx(500e9));
    CHECK(result.devices_per_node == 8);
    CHECK(result.intra_node.bandwidth == doctest::Approx(10e9));
    CHECK(result.intra_node.latency == doctest::Approx(5e-6));
    CHECK(result.inter_node.bandwidth == doctest::Approx(2e9));
    CHECK(result.inter_node.latency == doctest::Approx(20e-6));
    REQUIRE(result.gemm);
    CHECK(result.gemm->m == std::vector<double>{64, 256});
    CHECK(result.gemm->flops[static_cast<size_t>(GemmLayout::NN)].size() == 8);
    CHECK(result.gemm->flops[static_cast<size_t>(GemmLayout::NN)][6] == doctest::Approx(7e12));
    CHECK(!result.measured);
  }
  SUBCASE("the shipped public-specification profiles") {
    MachineProfile gtx = read_machine_profile(test::source_path("data/machines/gtx1080ti-node.json"));
    CHECK(gtx.source == "public specifications");
    CHECK(gtx.peak_flops == doctest::Approx(11.34e12));
    CHECK(gtx.memory_bytes == doctest::Approx(11e9));
    CHECK(gtx.devices_per_node == 8);
    CHECK(!gtx.gemm);
    MachineProfile rtx = read_machine_profile(test::source_path("data/machines/rtx2080ti-node.json"));
    CHECK(rtx.peak_flops == doctest::Approx(13.45e12));
    CHECK(rtx.inter_node.bandwidth == doctest::Approx(12e9));
    CHECK(!rtx.gemm);
  }
  SUBCASE("peak_tflops_by_dtype: optional, read in FLOP/s; absent dtypes stay 0") {
    json doc = base_profile();
    CHECK(parse_machine_profile(doc.dump(), "m.json").peak_by_dtype[static_cast<size_t>(Dtype::Bf16)] == 0);
    doc["device"]["peak_tflops_by_dtype"] = {{"tf32", 40}, {"bf16", 80}, {"fp32", 10}};
    MachineProfile result = parse_machine_profile(doc.dump(), "m.json");
    CHECK(result.peak_by_dtype[static_cast<size_t>(Dtype::Fp32)] == 10e12);
    CHECK(result.peak_by_dtype[static_cast<size_t>(Dtype::Tf32)] == 40e12);
    CHECK(result.peak_by_dtype[static_cast<size_t>(Dtype::Bf16)] == 80e12);
    CHECK(result.peak_by_dtype[static_cast<size_t>(Dtype::Fp16)] == 0);
    CHECK(peak_flops_for(result, Dtype::Fp32) == 10e12);
    CHECK(peak_flops_for(result, Dtype::Bf16) == 80e12);
    CHECK_THROWS_WITH_AS((void)peak_flops_for(result, Dtype::Fp16),
                         "machine 'test-node': no fp16 rate (field 'device.peak_tflops_by_dtype.fp16'): the device "
                         "lacks it or the profile does not give it",
                         InputError);
    // The writer keeps them.
    MachineProfile again = parse_machine_profile(write_machine_profile(result), "w.json");
    CHECK(again.peak_by_dtype == result.peak_by_dtype);
  }
  SUBCASE("peak_tflops_by_dtype: bad values, one line each") {
    json doc = base_profile();
    doc["device"]["peak_tflops_by_dtype"] = {{"bf61", 80}};
    CHECK(error_of(doc) == "m.json: field 'device.peak_tflops_by_dtype.bf61': unknown field (did you mean 'bf16'?)");
    doc["device"]["peak_tflops_by_dtype"] = {{"bf16", 0}};
    CHECK(error_of(doc) == "m.json: field 'device.peak_tflops_by_dtype.bf16': expected a positive number, got 0");
    doc["device"]["peak_tflops_by_dtype"] = {{"fp32", 20}};
    CHECK(error_of(doc) == "m.json: field 'device.peak_tflops_by_dtype.fp32': must equal device.peak_tflops (10), got 20");
    doc["device"]["peak_tflops_by_dtype"] = 312;
    CHECK(error_of(doc) == "m.json: field 'device.peak_tflops_by_dtype': expected an object of TFLOP/s by dtype, e.g. "
                           "{\"tf32\": 156, \"bf16\": 312}, got an integer");
  }
  SUBCASE("gemm_by_dtype: a table per tensor-core dtype, each needing its peak") {
    json doc = base_profile();
    doc["device"]["peak_tflops_by_dtype"] = {{"bf16", 80}};
    json table = doc["gemm"];
    table["nn_tflops"][1][1][1] = 70;
    doc["gemm_by_dtype"] = {{"bf16", table}};
    MachineProfile result = parse_machine_profile(doc.dump(), "m.json");
    REQUIRE(result.gemm_by_dtype[static_cast<size_t>(Dtype::Bf16)]);
    CHECK(!result.gemm_by_dtype[static_cast<size_t>(Dtype::Tf32)]);
    CHECK(gemm_table(result, Dtype::Fp32) == &*result.gemm);
    CHECK(gemm_table(result, Dtype::Tf32) == nullptr);
    const GemmTable* bf16 = gemm_table(result, Dtype::Bf16);
    REQUIRE(bf16);
    CHECK(interpolate_flops(*bf16, GemmLayout::NN, 256, 256, 256) == 70e12);
    CHECK(interpolate_flops(*result.gemm, GemmLayout::NN, 256, 256, 256) == 8e12);

    doc["gemm_by_dtype"] = {{"tf32", table}};
    CHECK(error_of(doc) == "m.json: field 'gemm_by_dtype.tf32': needs device.peak_tflops_by_dtype.tf32");
    doc["gemm_by_dtype"] = {{"fp32", table}};
    CHECK(error_of(doc) == "m.json: field 'gemm_by_dtype.fp32': the fp32 table is the top-level field 'gemm'");
    doc["gemm_by_dtype"] = {{"bf61", table}};
    CHECK(error_of(doc) == "m.json: field 'gemm_by_dtype.bf61': unknown field (did you mean 'bf16'?)");
    table["m"] = {256, 64};
    doc["gemm_by_dtype"] = {{"bf16", table}};
    CHECK(error_of(doc) == "m.json: field 'gemm_by_dtype.bf16.m': grid must be strictly increasing, got 64 after 256");
    doc["gemm_by_dtype"] = json::array();
    CHECK(error_of(doc) == "m.json: field 'gemm_by_dtype': expected an object of GEMM tables by dtype, e.g. "
                           "{\"bf16\": {\"m\": [...], ...}}, got an array");
  }
  SUBCASE("bad files: one line naming the file and the field") {
    json doc = base_profile();
    doc["devices_per_nod"] = 8;
    CHECK(error_of(doc) == "m.json: field 'devices_per_nod': unknown field (did you mean 'devices_per_node'?)");

    doc = base_profile();
    doc["device"]["colour"] = "green";
    CHECK(error_of(doc) == "m.json: field 'device.colour': unknown field");

    doc = base_profile();
    doc.erase("inter_node");
    CHECK(error_of(doc) == "m.json: field 'inter_node': missing");

    doc = base_profile();
    doc["device"].erase("memory_gb");
    CHECK(error_of(doc) == "m.json: field 'device.memory_gb': missing");

    doc = base_profile();
    doc["gemm"].erase("tn_tflops");
    CHECK(error_of(doc) == "m.json: field 'gemm.tn_tflops': missing");

    doc = base_profile();
    doc["intra_node"]["bandwidth_gbps"] = 0;
    CHECK(error_of(doc) == "m.json: field 'intra_node.bandwidth_gbps': expected a positive number, got 0");

    doc = base_profile();
    doc["inter_node"]["latency_us"] = -1.5;
    CHECK(error_of(doc) == "m.json: field 'inter_node.latency_us': expected a positive number, got -1.5");

    doc = base_profile();
    doc["device"]["peak_tflops"] = "fast";
    CHECK(error_of(doc) == "m.json: field 'device.peak_tflops': expected a positive number, got a string");

    doc = base_profile();
    doc["devices_per_node"] = 0;
    CHECK(error_of(doc) == "m.json: field 'devices_per_node': expected a positive integer, got 0");

    doc = base_profile();
    doc["gemm"]["k"] = {256, 64};
    CHECK(error_of(doc) == "m.json: field 'gemm.k': grid must be strictly increasing, got 64 after 256");

    doc = base_profile();
    doc["gemm"]["n"] = {64, 64};
    CHECK(error_of(doc) == "m.json: field 'gemm.n': grid must be strictly increasing, got 64 after 64");

    doc = base_profile();
    doc["gemm"]["m"] = {0, 64};
    CHECK(error_of(doc) == "m.json: field 'gemm.m[0]': expected a positive number, got 0");

    doc = base_profile();
    doc["gemm"]["nn_tflops"][0][1] = {3};
    CHECK(error_of(doc) == "m.json: field 'gemm.nn_tflops[0][1]': expected 2 numbers (one per k), got 1");

    doc = base_profile();
    doc["gemm"]["nt_tflops"][1] = json::array({json::array({2, 2})});
    CHECK(error_of(doc) == "m.json: field 'gemm.nt_tflops[1]': expected 2 rows (one per n), got 1");

    doc = base_profile();
    doc["gemm"]["nn_tflops"].erase(1);
    CHECK(error_of(doc) == "m.json: field 'gemm.nn_tflops': expected 2 planes (one per m), got 1");

    doc = base_profile();
    doc["gemm"]["tn_tflops"][1][0][1] = 0;
    CHECK(error_of(doc) == "m.json: field 'gemm.tn_tflops[1][0][1]': expected a positive number, got 0");

    doc = base_profile();
    doc["format"] = "pase-graph";
    CHECK(error_of(doc) == "m.json: field 'format': expected \"pase-machine\", got \"pase-graph\": this is a graph file, not a machine profile");

    doc = base_profile();
    doc["version"] = 2;
    CHECK(error_of(doc) == "m.json: field 'version': unsupported version 2 (this pase reads version 1)");

    doc = base_profile();
    doc["source"] = "measured";
    CHECK(error_of(doc) == "m.json: field 'measured': missing (required when source is \"measured\")");

    doc = base_profile();
    doc["measured"] = json::object();
    CHECK(error_of(doc) == "m.json: field 'measured': only allowed when source is \"measured\"");
  }
  SUBCASE("malformed JSON and missing files") {
    std::string result;
    try {
      (void)parse_machine_profile("{\"format\": ", "m.json");
    } catch (const InputError& error) {
      result = error.what();
    }
    CHECK(result.rfind("m.json: malformed JSON at line 1, column 12: ", 0) == 0);
    CHECK_THROWS_WITH_AS((void)read_machine_profile("/nonexistent/m.json"), "/nonexistent/m.json: cannot open file",
                         InputError);
  }
}

TEST_CASE("write_machine_profile") {
  SUBCASE("a measured profile reads back the same") {
    MachineProfile correct = parse_machine_profile(base_profile().dump(), "m.json");
    correct.source = "measured";
    MeasuredInfo info;
    info.date = "2025-01-01T00:00:00Z";
    info.gpu = "Test GPU";
    info.cuda_driver = "13.0";
    info.cuda_runtime = "13.0";
    info.cublas = "13.0.0";
    info.gpu_count = 2;
    info.warmup = 3;
    info.repeats = 10;
    info.host_to_device = 12e9;
    info.device_to_host = 13e9;
    info.device_to_device = 10e9;
    correct.measured = info;
    MachineProfile result = parse_machine_profile(write_machine_profile(correct), "w.json");
    CHECK(result.name == correct.name);
    CHECK(result.peak_flops == doctest::Approx(correct.peak_flops));
    CHECK(result.inter_node.latency == doctest::Approx(correct.inter_node.latency));
    REQUIRE(result.gemm);
    for (size_t layout = 0; layout < 3; ++layout)
      for (size_t i = 0; i < 8; ++i)
        CHECK(result.gemm->flops[layout][i] == doctest::Approx(correct.gemm->flops[layout][i]));
    CHECK(!result.gemm_by_dtype[static_cast<size_t>(Dtype::Bf16)]);
    REQUIRE(result.measured);
    CHECK(result.measured->cublas == "13.0.0");
    CHECK(result.measured->gpu_count == 2);
    REQUIRE(result.measured->device_to_device);
    CHECK(*result.measured->device_to_device == doctest::Approx(10e9));
  }
}

TEST_CASE("write_machine_profile: the tables by dtype read back") {
  MachineProfile correct = parse_machine_profile(base_profile().dump(), "m.json");
  correct.peak_by_dtype[static_cast<size_t>(Dtype::Tf32)] = 40e12;
  correct.peak_by_dtype[static_cast<size_t>(Dtype::Bf16)] = 80e12;
  GemmTable tf32 = *correct.gemm, bf16 = *correct.gemm;
  for (double& f : tf32.flops[0]) f *= 3;
  for (double& f : bf16.flops[2]) f *= 7;
  correct.gemm_by_dtype[static_cast<size_t>(Dtype::Tf32)] = tf32;
  correct.gemm_by_dtype[static_cast<size_t>(Dtype::Bf16)] = bf16;
  MachineProfile result = parse_machine_profile(write_machine_profile(correct), "w.json");
  for (Dtype d : {Dtype::Tf32, Dtype::Bf16}) {
    const GemmTable* want = gemm_table(correct, d);
    const GemmTable* got = gemm_table(result, d);
    REQUIRE(got);
    CHECK(got->k == want->k);
    for (size_t layout = 0; layout < 3; ++layout)
      for (size_t i = 0; i < 8; ++i) CHECK(got->flops[layout][i] == doctest::Approx(want->flops[layout][i]));
  }
  CHECK(!gemm_table(result, Dtype::Fp16));
}

TEST_CASE("achieved_flops") {
  MachineProfile profile = parse_machine_profile(base_profile().dump(), "m.json");
  SUBCASE("exact at grid points") {
    CHECK(achieved_flops(profile, GemmLayout::NN, 64, 64, 64) == 1e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 64, 64, 256) == 2e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 64, 256, 64) == 3e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 256, 64, 64) == 5e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 256, 256, 256) == 8e12);
    CHECK(achieved_flops(profile, GemmLayout::NT, 256, 64, 256) == 2e12);
    CHECK(achieved_flops(profile, GemmLayout::TN, 64, 256, 64) == 4e12);
  }
  SUBCASE("midpoints in log2 space") {
    // 128 lies halfway between 64 and 256 in log2.
    CHECK(achieved_flops(profile, GemmLayout::NN, 128, 64, 64) == 3e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 64, 128, 64) == 2e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 64, 64, 128) == 1.5e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 128, 128, 128) == 4.5e12);
    // A quarter of the way: 64·√2.
    CHECK(achieved_flops(profile, GemmLayout::NN, 64 * std::sqrt(2.0), 64, 64) == doctest::Approx(2e12).epsilon(1e-12));
  }
  SUBCASE("clamped at the grid edges") {
    CHECK(achieved_flops(profile, GemmLayout::NN, 1, 1, 1) == 1e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 1e6, 1e6, 1e6) == 8e12);
    CHECK(achieved_flops(profile, GemmLayout::NN, 16, 4096, 128) == 3.5e12);
  }
  SUBCASE("one-point axes are constant") {
    profile.gemm->m = {128};
    profile.gemm->n = {128};
    profile.gemm->k = {128};
    profile.gemm->flops[0] = {6e12};
    CHECK(achieved_flops(profile, GemmLayout::NN, 1, 128, 4096) == 6e12);
  }
  SUBCASE("no table: the peak") {
    profile.gemm.reset();
    CHECK(achieved_flops(profile, GemmLayout::TN, 100, 200, 300) == 10e12);
  }
}
