// Command-line conventions: a bad flag value exits 2 with one `error:` line,
// misspelt commands, options, orders and cost models get a suggestion, a
// file of the wrong kind is named as such, --version and --help.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/byte_size.h"
#include "test_support.h"

namespace {

std::string alexnet() { return "\"" + pase::test::source_path("data/graphs/alexnet.json") + "\""; }

}  // namespace

TEST_CASE("bad flag values exit 2 with one line") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"solve " + alexnet() + " --devices 0", "--devices: expected a positive number of devices, got 0"},
      {"solve " + alexnet() + " -p 8 --order mindgree",
       "--order: unknown order 'mindgree' (did you mean 'mindegree'? choose generateseq, bfs, mindegree or minfill)"},
      {"solve " + alexnet() + " -p 8 --order zzz", "--order: unknown order 'zzz' (choose generateseq, bfs, mindegree or minfill)"},
      {"solve " + alexnet() + " -p 8 --cost-model calibrate",
       "--cost-model: unknown cost model 'calibrate' (did you mean 'calibrated'? choose pase or calibrated)"},
      {"solve " + alexnet() + " -p 8 --flops 0", "--flops: expected a positive TFLOP/s, got 0.000000"},
      {"solve " + alexnet() + " -p 8 --threads -2", "--threads: expected a non-negative count, got -2"},
      {"compare " + alexnet() + " --devices 4,0", "--devices: expected a positive number of devices, got 0"},
      {"evaluate " + alexnet() + " --baseline owt", "--devices: required with --baseline"},
      {"slove " + alexnet(), "unknown command 'slove' (did you mean 'solve'?) (pase --help lists them)"},
      {"solve " + alexnet() + " -p 8 --thread 2",
       "solve: unknown option '--thread' (did you mean '--threads'?) (pase solve --help lists them)"},
      {"batch " + alexnet() + " -p 8 --sumary=x.json",
       "batch: unknown option '--sumary' (did you mean '--summary'?) (pase batch --help lists them)"},
      // Named before CLI11 would report the required --devices missing.
      {"solve " + alexnet() + " --device 8",
       "solve: unknown option '--device' (did you mean '--devices'?) (pase solve --help lists them)"},
      {"models export gpt --layrs 2",
       "models export: unknown option '--layrs' (did you mean '--layers'?) (pase models export --help lists them)"},
      {"solve " + alexnet() + " --devices 8x", "--devices: expected a number, got '8x'"},
      {"solve " + alexnet() + " --devices 8.5", "--devices: expected a whole number, got '8.5'"},
      {"solve " + alexnet() + " -p 8 --bandwidth fast", "--bandwidth: expected a number, got 'fast'"},
      {"models export lama", "unknown model 'lama' (did you mean 'llama'?); `pase models` lists them"},
  };
  for (const auto& [args, message] : cases) {
    CAPTURE_BOUND(args);
    pase::test::CommandResult result = pase::test::run_pase(args);
    CHECK(result.status == 2);
    CHECK(result.error == "error: " + message + "\n");
    CHECK(result.output == "");
  }
}

TEST_CASE("a directory, an empty file or the wrong kind of file is named as such") {
  const std::string graphs = pase::test::source_path("data/graphs");
  const std::string empty = pase::test::write_temp_file("empty_graph.json", "");
  const std::string blank = pase::test::write_temp_file("blank_graph.json", " \n");
  const std::string machine = pase::test::source_path("data/machines/gtx1080ti-node.json");
  const std::string graph = pase::test::source_path("data/graphs/alexnet.json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"solve \"" + graphs + "\" -p 8", graphs + ": is a directory, not a file"},
      {"solve \"" + empty + "\" -p 8", empty + ": empty file"},
      {"solve \"" + blank + "\" -p 8", blank + ": empty file (only whitespace)"},
      {"solve \"" + machine + "\" -p 8",
       machine + ": field 'format': expected \"pase-graph\", got \"pase-machine\": this is a machine profile, not a graph file"},
      {"solve \"" + graph + "\" -p 8 --cost-model calibrated --machine \"" + graph + "\"",
       graph + ": field 'format': expected \"pase-machine\", got \"pase-graph\": this is a graph file, not a machine profile"},
      {"evaluate \"" + graph + "\" --strategy \"" + graph + "\"",
       graph + ": field 'format': expected \"pase-strategy\", got \"pase-graph\": this is a graph file, not a strategy file"},
  };
  for (const auto& [args, message] : cases) {
    CAPTURE_BOUND(args);
    pase::test::CommandResult result = pase::test::run_pase(args);
    CHECK(result.status == 1);
    CHECK(result.error == "error: " + message + "\n");
  }
}

TEST_CASE("pase --version and --help") {
  pase::test::CommandResult version = pase::test::run_pase("--version");
  CHECK(version.status == 0);
  CHECK(version.output == std::string("pase ") + PASE_VERSION + "\n");
  pase::test::CommandResult help = pase::test::run_pase("--help");
  CHECK(help.status == 0);
  CHECK(help.output.find("or an ONNX model (MODEL.onnx") != std::string::npos);
  CHECK(help.output.find("Exit status: 0 success, 1 bad input, 2 bad command line, 3 refused") != std::string::npos);
}

TEST_CASE("pase solve: with the pase model, costs also read as time on the modelled machine") {
  pase::test::CommandResult result =
      pase::test::run_pase("solve " + pase::test::source_path("data/graphs/alexnet.json") + " --devices 8 --no-plan");
  REQUIRE(result.status == 0);
  CHECK(result.output.find("devices        cost  share     time\n") != std::string::npos);
  // conv1: 5378788800 flop at 10 TFLOP/s; pool1: 1119744 flop.
  CHECK(result.output.find("5.38 GFLOP   5.5%   538 us\n") != std::string::npos);
  CHECK(result.output.find("1.12 MFLOP   0.0%   112 ns\n") != std::string::npos);
  CHECK(result.output.find("total cost 97098296512 flop (97.1 GFLOP; layers 94.5 GFLOP, redistribution 2.58 GFLOP), "
                           "9.71 ms a step at 10 TFLOP/s, solved in ") != std::string::npos);
  // At 20 TFLOP/s the same FLOP take half the time.
  pase::test::CommandResult faster =
      pase::test::run_pase("solve " + pase::test::source_path("data/graphs/alexnet.json") + " --devices 8 --no-plan --flops 20");
  CHECK(faster.output.find(" a step at 20 TFLOP/s, solved in ") != std::string::npos);
}

TEST_CASE("parse_count: digits or a decimal exponent, a whole number within 64 bits") {
  using pase::parse_count;
  CHECK(parse_count("2000000") == uint64_t{2000000});
  CHECK(parse_count("2e12") == uint64_t{2000000000000});
  CHECK(parse_count("1.5e9") == uint64_t{1500000000});
  CHECK(parse_count("2.50E3") == uint64_t{2500});
  CHECK(parse_count("0") == uint64_t{0});
  CHECK(parse_count("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(parse_count("18446744073709551616"));
  CHECK_FALSE(parse_count("2e19"));   // past 2^64 - 1
  CHECK_FALSE(parse_count("1.5"));    // not whole
  CHECK_FALSE(parse_count("2.55e1"));
  CHECK_FALSE(parse_count("-1"));
  CHECK_FALSE(parse_count("2e"));
  CHECK_FALSE(parse_count("e3"));
  CHECK_FALSE(parse_count("1e999"));
  CHECK_FALSE(parse_count("12 "));
}

TEST_CASE("pase solve: step and byte limits as the help writes them (2e12, 8GiB)") {
  const std::string alexnet = pase::test::source_path("data/graphs/alexnet.json");
  pase::test::CommandResult work = pase::test::run_pase("solve " + alexnet + " --devices 8 --no-plan --max-work 2.5e3 --exact");
  CHECK(work.status == 3);
  CHECK(work.error.find("above the limit of 2500 (--max-work;") != std::string::npos);
  pase::test::CommandResult bytes = pase::test::run_pase("solve " + alexnet + " --devices 8 --no-plan --max-table-bytes 8GiB");
  CHECK(bytes.status == 0);
  pase::test::CommandResult bad = pase::test::run_pase("solve " + alexnet + " --devices 8 --max-work 1.5");
  CHECK(bad.status == 2);
  CHECK(bad.error == "error: --max-work: expected a whole number such as 2000000 or 2e12, got '1.5'\n");
  pase::test::CommandResult bad_size = pase::test::run_pase("solve " + alexnet + " --devices 8 --max-table-bytes 8XB");
  CHECK(bad_size.status == 2);
  CHECK(bad_size.error ==
        "error: --max-table-bytes: expected a whole number such as 2000000 or 2e12 or a size such as 8GiB, got '8XB'\n");
}
