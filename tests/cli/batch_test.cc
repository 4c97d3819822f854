// `pase batch`: a zoo in one command, a summary file, and --expect for CI.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/layer_table.h"
#include "test_support.h"
#include "base/text_file.h"

using json = nlohmann::json;

namespace {

std::string quoted(const std::string& relative) { return "\"" + pase::test::source_path(relative) + "\""; }

// A result line of the table up to its cost (the golden optimum), as `pase batch` prints it.
std::string result_line(const std::string& graph, int64_t devices) {
  // The golden optimum in units; the summary JSON keeps it exact.
  char line[128];
  std::snprintf(line, sizeof line, "%-14s p=%-6lld %11s", graph.c_str(), static_cast<long long>(devices),
                pase::format_flop(pase::test::zoo_optimum(graph, devices)).c_str());
  return line;
}

}  // namespace

TEST_CASE("pase batch: summary and expectations") {
  std::string summary = pase::test::write_temp_file("batch_summary.json", "");
  std::string files = quoted("data/graphs/alexnet.json") + " " + quoted("data/graphs/rnnlm.json");
  pase::test::CommandResult result = pase::test::run_pase("batch " + files + " --devices 8,16 --summary \"" + summary + "\"");
  REQUIRE(result.status == 0);
  CHECK(result.error == "");  // no progress: stderr is not a terminal
  CHECK(result.output.find(result_line("alexnet", 8)) == 0);
  CHECK(result.output.find("\n" + result_line("rnnlm", 16)) != std::string::npos);
  CHECK(result.output.find("\nbatch: 4 ok, 0 failed, 0 mismatched\n") != std::string::npos);

  json doc = json::parse(pase::read_text_file(summary));
  CHECK(doc["format"] == "pase-batch-summary");
  REQUIRE(doc["results"].size() == 4);
  CHECK(doc["results"][0]["graph"] == "alexnet");
  CHECK(doc["results"][0]["devices"] == 8);
  CHECK(doc["results"][0]["status"] == "ok");
  CHECK(doc["results"][0]["cost"] == pase::test::zoo_optimum("alexnet", 8));
  CHECK(doc["results"][3]["cost"] == pase::test::zoo_optimum("rnnlm", 16));

  SUBCASE("the summary fed back as --expect passes") {
    pase::test::CommandResult again =
        pase::test::run_pase("batch " + files + " --devices 8,16 --expect \"" + summary + "\"");
    CHECK(again.status == 0);
    CHECK(again.output.find("batch: 4 ok, 0 failed, 0 mismatched (4 of 4 expected optima checked); 0 missing, 0 dropped, 0 new\n") !=
          std::string::npos);
  }
  SUBCASE("a moved optimum fails") {
    CHECK(doc["results"][1]["graph"] == "alexnet");
    CHECK(doc["results"][1]["devices"] == 16);
    doc["results"][1]["cost"] = pase::test::zoo_optimum("alexnet", 16) * (1 + 1e-6);
    doc["results"][0]["cost"] = pase::test::zoo_optimum("alexnet", 8) * (1 + 1e-12);  // within the tolerance
    std::string edited = pase::test::write_temp_file("batch_expect.json", doc.dump());
    pase::test::CommandResult again =
        pase::test::run_pase("batch " + files + " --devices 8,16 --expect \"" + edited + "\"");
    CHECK(again.status == 1);
    CHECK(again.output.find(result_line("alexnet", 8)) == 0);
    CHECK(again.output.find("  mismatch: expected ") != std::string::npos);
    CHECK(again.output.find("batch: 3 ok, 0 failed, 1 mismatched (4 of 4 expected optima checked); 0 missing, 0 dropped, 0 new\n") !=
          std::string::npos);
  }
  SUBCASE("expectations recorded on another machine are refused") {
    pase::test::CommandResult again =
        pase::test::run_pase("batch " + files + " --devices 8 --flops 20 --expect \"" + summary + "\"");
    CHECK(again.status == 1);
    CHECK(again.error == "error: " + summary +
                             ": field 'machine': recorded with {\"bandwidth_gbps\":16.0,\"flops_tflops\":10.0}, this run "
                             "uses {\"flops_tflops\":20.0,\"bandwidth_gbps\":16.0}\n");
  }
}

TEST_CASE("pase batch: keeps going after a failure") {
  std::string broken = pase::test::write_temp_file("broken.json", "{\"format\": \"pase-graph\", \"version\": 1, \"nodes\": [}");
  std::string summary = pase::test::write_temp_file("batch_summary.csv", "");
  pase::test::CommandResult result = pase::test::run_pase("batch \"" + broken + "\" " + quoted("data/graphs/alexnet.json") +
                                                          " --devices 8 --summary \"" + summary + "\"");
  CHECK(result.status == 1);
  CHECK(result.output.find("broken         p=8 ") == 0);
  CHECK(result.output.find("  error: " + broken + ": malformed JSON at line 1, column 50:") != std::string::npos);
  CHECK(result.output.find("\n" + result_line("alexnet", 8)) != std::string::npos);
  CHECK(result.output.find("\nbatch: 1 ok, 1 failed, 0 mismatched\n") != std::string::npos);
  std::string csv = pase::read_text_file(summary);
  CHECK(csv.find("graph,file,devices,status,cost,seconds,message,per_device_bytes,gap\n") == 0);
  CHECK(csv.find("\nbroken,") != std::string::npos);
  CHECK(csv.find(",8,error,,") != std::string::npos);
  CHECK(csv.find(",8,ok," + pase::test::flop_text(pase::test::zoo_optimum("alexnet", 8)) + ",") != std::string::npos);
}

TEST_CASE("pase batch: a whole directory") {
  pase::test::CommandResult result = pase::test::run_pase("batch " + quoted("data/graphs") + " --devices 4");
  CHECK(result.status == 0);
  for (const char* name : {"alexnet ", "inception3 ", "resnet101 ", "rnnlm ", "transformer "})
    CHECK(result.output.find(std::string("\n") + name) + result.output.find(name) != 2 * std::string::npos);
  CHECK(result.output.find("batch: 5 ok, 0 failed, 0 mismatched\n") != std::string::npos);
}

TEST_CASE("pase batch: bad options") {
  std::string alexnet = quoted("data/graphs/alexnet.json");
  pase::test::CommandResult summary = pase::test::run_pase("batch " + alexnet + " --devices 8 --summary out.txt");
  CHECK(summary.status == 2);
  CHECK(summary.error == "error: --summary: expected a file name ending in .json or .csv, or -, got 'out.txt'\n");
  std::string notsummary = pase::test::write_temp_file("not_summary.json", "{\"format\": \"pase-strategy\"}");
  pase::test::CommandResult expect = pase::test::run_pase("batch " + alexnet + " --devices 8 --expect \"" + notsummary + "\"");
  CHECK(expect.status == 1);
  CHECK(expect.error == "error: " + notsummary + ": field 'format': expected \"pase-batch-summary\"\n");
}

namespace {

// A zoo in a fresh directory: a.json and b.json are both AlexNet (one graph
// name, two files), c.json is the RNNLM.
std::string small_zoo(const std::string& name) {
  namespace fs = std::filesystem;
  const std::string dir = pase::test::write_temp_file(name, "");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string alexnet = pase::read_text_file(pase::test::source_path("data/graphs/alexnet.json"));
  pase::write_text_file(dir + "/a.json", alexnet);
  pase::write_text_file(dir + "/b.json", alexnet);
  pase::write_text_file(dir + "/c.json", pase::read_text_file(pase::test::source_path("data/graphs/rnnlm.json")));
  return dir;
}

// The last line of `text` (without its newline).
std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  const size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

}  // namespace

TEST_CASE("pase batch --expect: keyed by file and p, coverage losses fail") {
  const std::string zoo = small_zoo("expect_zoo");
  const std::string record = pase::test::write_temp_file("expect_zoo.json", "");
  REQUIRE(pase::test::run_pase("batch \"" + zoo + "\" -p 8,16 --summary \"" + record + "\"").status == 0);

  SUBCASE("the same folder checked against its own record passes, two graphs sharing a name included") {
    pase::test::CommandResult again = pase::test::run_pase("batch \"" + zoo + "\" -p 8,16 --expect \"" + record + "\"");
    CHECK(again.status == 0);
    CHECK(again.output.find(result_line("alexnet", 8)) == 0);
    CHECK(last_line(again.output) ==
          "batch: 6 ok, 0 failed, 0 mismatched (6 of 6 expected optima checked); 0 missing, 0 dropped, 0 new");
  }
  SUBCASE("a recorded graph that was not given fails") {
    pase::test::CommandResult again =
        pase::test::run_pase("batch \"" + zoo + "/a.json\" \"" + zoo + "/c.json\" -p 8,16 --expect \"" + record + "\"");
    CHECK(again.status == 1);
    CHECK(again.output.find("\nmissing: " + zoo + "/b.json p=8 is recorded in " + record + " but the file was not given\n"
                            "missing: " + zoo + "/b.json p=16 is recorded in " + record + " but the file was not given\n") !=
          std::string::npos);
    CHECK(last_line(again.output) ==
          "batch: 4 ok, 0 failed, 0 mismatched (4 of 4 expected optima checked); 2 missing, 0 dropped, 0 new");
  }
  SUBCASE("a dropped device count fails") {
    pase::test::CommandResult again = pase::test::run_pase("batch \"" + zoo + "\" -p 8 --expect \"" + record + "\"");
    CHECK(again.status == 1);
    CHECK(again.output.find("\ndropped: " + zoo + "/a.json p=16 is recorded in " + record +
                            " but p=16 was not run (--devices 8)\n") != std::string::npos);
    CHECK(last_line(again.output) ==
          "batch: 3 ok, 0 failed, 0 mismatched (3 of 6 expected optima checked); 0 missing, 3 dropped, 0 new");
  }
  SUBCASE("a new graph without a record fails") {
    pase::write_text_file(zoo + "/d.json", pase::read_text_file(pase::test::source_path("data/graphs/alexnet.json")));
    pase::test::CommandResult again = pase::test::run_pase("batch \"" + zoo + "\" -p 8,16 --expect \"" + record + "\"");
    std::filesystem::remove(zoo + "/d.json");
    CHECK(again.status == 1);
    CHECK(again.output.find("\nnew: " + zoo + "/d.json p=8 has no record in " + record + "\nnew: " + zoo + "/d.json p=16 has no record in " +
                            record + "\n") != std::string::npos);
    CHECK(last_line(again.output) ==
          "batch: 8 ok, 0 failed, 0 mismatched (6 of 6 expected optima checked); 0 missing, 0 dropped, 2 new");
  }
  SUBCASE("shards split the files and each passes against the whole record") {
    pase::test::CommandResult first = pase::test::run_pase("batch \"" + zoo + "\" -p 8,16 --shard 1/2 --expect \"" + record + "\"");
    CHECK(first.status == 0);
    CHECK(last_line(first.output) ==
          "batch: 4 ok, 0 failed, 0 mismatched (4 of 4 expected optima checked); 0 missing, 0 dropped, 0 new");
    CHECK(first.output.find(result_line("rnnlm", 16)) != std::string::npos);  // a.json and c.json
    pase::test::CommandResult second = pase::test::run_pase("batch \"" + zoo + "\" -p 8,16 --shard 2/2 --expect \"" + record + "\"");
    CHECK(second.status == 0);
    CHECK(last_line(second.output) ==
          "batch: 2 ok, 0 failed, 0 mismatched (2 of 2 expected optima checked); 0 missing, 0 dropped, 0 new");
    CHECK(second.output.find("rnnlm") == std::string::npos);  // b.json only
  }
  SUBCASE("a file recorded twice is refused") {
    json doc = json::parse(pase::read_text_file(record));
    doc["results"].push_back(doc["results"][0]);
    const std::string twice = pase::test::write_temp_file("expect_twice.json", doc.dump());
    pase::test::CommandResult again = pase::test::run_pase("batch \"" + zoo + "\" -p 8 --expect \"" + twice + "\"");
    CHECK(again.status == 1);
    CHECK(again.error == "error: " + twice + ": results[6]: field 'file': '" + zoo + "/a.json' at p=8 is recorded twice\n");
  }
}

TEST_CASE("pase batch: jobs, limits, timeout, summary on stdout") {
  const std::string zoo = small_zoo("jobs_zoo");
  SUBCASE("--jobs 2 prints and records in input order") {
    const std::string one = pase::test::write_temp_file("jobs1.json", ""), two = pase::test::write_temp_file("jobs2.json", "");
    pase::test::CommandResult serial = pase::test::run_pase("batch \"" + zoo + "\" -p 8,16 --summary \"" + one + "\"");
    pase::test::CommandResult parallel = pase::test::run_pase("batch \"" + zoo + "\" -p 8,16 --jobs 2 --summary \"" + two + "\"");
    CHECK(serial.status == 0);
    CHECK(parallel.status == 0);
    json a = json::parse(pase::read_text_file(one)), b = json::parse(pase::read_text_file(two));
    REQUIRE(a["results"].size() == 6);
    REQUIRE(b["results"].size() == 6);
    for (size_t i = 0; i < 6; ++i) {
      CHECK(a["results"][i]["file"] == b["results"][i]["file"]);
      CHECK(a["results"][i]["devices"] == b["results"][i]["devices"]);
      CHECK(a["results"][i]["cost"] == b["results"][i]["cost"]);
    }
    CHECK(b["results"][5]["file"] == zoo + "/c.json");
  }
  SUBCASE("--max-work refuses with the flag's name, --threads solves the same") {
    pase::test::CommandResult refused = pase::test::run_pase("batch \"" + zoo + "/a.json\" -p 4 --max-work 1");
    CHECK(refused.status == 1);
    CHECK(refused.output.find("  refused: the DP would take 965 steps (table entries x configurations), above the limit of 1 "
                              "(--max-work;") != std::string::npos);
    pase::test::CommandResult threads = pase::test::run_pase("batch \"" + zoo + "/a.json\" -p 8 --threads 2");
    CHECK(threads.status == 0);
    CHECK(threads.output.find(result_line("alexnet", 8)) == 0);
  }
  SUBCASE("--timeout stops a solve") {
    pase::test::CommandResult result = pase::test::run_pase("batch \"" + zoo + "/c.json\" -p 8 --timeout 0.000001");
    CHECK(result.status == 1);
    CHECK(result.output.find("  timeout: stopped after --timeout 1e-06 s\n") != std::string::npos);
    CHECK(last_line(result.output) == "batch: 0 ok, 1 failed, 0 mismatched");
  }
  SUBCASE("--summary - writes the JSON alone to stdout") {
    pase::test::CommandResult result = pase::test::run_pase("batch \"" + zoo + "/a.json\" -p 8 --summary -");
    CHECK(result.status == 0);
    json doc = json::parse(result.output);
    CHECK(doc["results"][0]["cost"] == pase::test::zoo_optimum("alexnet", 8));
    CHECK(result.error.find(result_line("alexnet", 8)) == 0);
    CHECK(last_line(result.error) == "batch: 1 ok, 0 failed, 0 mismatched");
  }
  SUBCASE("bad values are usage errors") {
    const std::string a = "batch \"" + zoo + "/a.json\" -p 8 ";
    for (const auto& [flag, message] : std::vector<std::pair<std::string, std::string>>{
             {"--shard 3/2", "--shard: expected I/N with 1 <= I <= N (2/4: the second of four jobs), got '3/2'"},
             {"--shard 1", "--shard: expected I/N with 1 <= I <= N (2/4: the second of four jobs), got '1'"},
             {"--jobs 0", "--jobs: expected a positive count, got 0"},
             {"--threads -1", "--threads: expected a non-negative count, got -1"},
             {"--timeout -1", "--timeout: expected a number of seconds of at least 0, got -1"},
             {"--max-work 0", "--max-work: expected a positive number of steps, got 0"},
             {"--max-table-bytes 0", "--max-table-bytes: expected a positive number of bytes, got 0"}}) {
      CAPTURE_BOUND(flag);
      pase::test::CommandResult result = pase::test::run_pase(a + flag);
      CHECK(result.status == 2);
      CHECK(result.error == "error: " + message + "\n");
    }
  }
}

// batch once solved with an 8 GiB table limit of its own and no bounded
// solve, and refused what `pase solve` answers; it now takes the same request
// (solve/solve_request.h): the same limits, and past them a bounded solve.
TEST_CASE("pase batch: past the DP's limits a bounded solve answers, as pase solve does; --exact refuses") {
  const std::string transformer = quoted("data/graphs/transformer.json");
  pase::test::CommandResult solved = pase::test::run_pase("solve " + transformer + " -p 8 --max-work 100000 --no-plan --json");
  REQUIRE(solved.status == 0);
  const json strategy = json::parse(solved.output);
  pase::test::CommandResult batch = pase::test::run_pase("batch " + transformer + " -p 8 --max-work 100000 --summary -");
  CHECK(batch.status == 0);
  const json doc = json::parse(batch.output);
  REQUIRE(doc["results"].size() == 1);
  const json& result = doc["results"][0];
  CHECK(result["status"] == "ok");
  CHECK(result["cost"] == strategy["total_cost"]);
  CHECK(result["gap"] == strategy["gap"]);
  CHECK(result["message"].get<std::string>().rfind("bounded solve, ", 0) == 0);

  pase::test::CommandResult exact = pase::test::run_pase("batch " + transformer + " -p 8 --max-work 100000 --exact");
  CHECK(exact.status == 1);
  CHECK(exact.output.find("  refused: the DP would take ") != std::string::npos);
  CHECK(last_line(exact.output) == "batch: 0 ok, 1 failed, 0 mismatched");
#ifdef PASE_HAVE_ONNX
  // DenseNet-121's dense blocks are past any table limit: solve and batch both answer it bounded.
  const std::string densenet = quoted("data/onnx/densenet121.onnx");
  pase::test::CommandResult densenet_solve = pase::test::run_pase("solve " + densenet + " -p 32 --no-plan --json");
  pase::test::CommandResult densenet_batch = pase::test::run_pase("batch " + densenet + " -p 32 --summary -");
  REQUIRE(densenet_solve.status == 0);
  CHECK(densenet_batch.status == 0);
  CHECK(json::parse(densenet_batch.output)["results"][0]["cost"] == json::parse(densenet_solve.output)["total_cost"]);
#endif
}

TEST_CASE("batch --expect replayed from another folder and directory: records matched by file name, then graph") {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(pase::test::write_temp_file("batch_replay_marker", "")).parent_path() / "batch_replay";
  fs::remove_all(root);
  const fs::path recorded = root / "checkout-a" / "zoo", replayed = root / "elsewhere" / "models";
  fs::create_directories(recorded);
  fs::create_directories(replayed);
  auto exported = [](const fs::path& to, const std::string& arguments) {
    REQUIRE(pase::test::run_pase("models export " + arguments + " -o \"" + to.string() + "\"").status == 0);
  };
  exported(recorded / "gpt.json", "gpt --layers 2 --d-model 64 --heads 4 --seq 16 --vocab 256 --batch 8");
  exported(recorded / "llama.json", "llama --layers 2 --d-model 64 --heads 4 --kv-heads 2 --ff 128 --seq 16 --vocab 256 --batch 8");
  const std::string summary = (root / "summary.json").string();
  REQUIRE(pase::test::run_pase("batch \"" + recorded.string() + "\" --devices 4 --summary \"" + summary + "\"").status == 0);
  // The replay: another folder, another parent; gpt regressed (wider), llama renamed.
  exported(replayed / "gpt.json", "gpt --layers 2 --d-model 128 --heads 4 --seq 16 --vocab 256 --batch 8");
  exported(replayed / "llama-renamed.json", "llama --layers 2 --d-model 64 --heads 4 --kv-heads 2 --ff 128 --seq 16 --vocab 256 --batch 8");
  const pase::test::CommandResult replay =
      pase::test::run_pase("batch \"" + replayed.string() + "\" --devices 4 --expect \"" + summary + "\"");
  CHECK(replay.status == 1);  // a mismatch fails the run
  const json recorded_summary = json::parse(pase::read_text_file(summary));
  const double gpt_optimum = recorded_summary["results"][0]["cost"];
  char expected[64];
  std::snprintf(expected, sizeof expected, "mismatch: expected %.17g", gpt_optimum);
  CHECK(replay.output.find(expected) != std::string::npos);
  CHECK(replay.output.find(
            "batch: 1 ok, 0 failed, 1 mismatched (2 of 2 expected optima checked); 0 missing, 0 dropped, 0 new\n") !=
        std::string::npos);
  // Unchanged, the same replay passes.
  exported(replayed / "gpt.json", "gpt --layers 2 --d-model 64 --heads 4 --seq 16 --vocab 256 --batch 8");
  const pase::test::CommandResult passed =
      pase::test::run_pase("batch \"" + replayed.string() + "\" --devices 4 --expect \"" + summary + "\"");
  CHECK(passed.status == 0);
  CHECK(passed.output.find("batch: 2 ok, 0 failed, 0 mismatched (2 of 2 expected optima checked); 0 missing, 0 "
                           "dropped, 0 new\n") != std::string::npos);
  fs::remove_all(root);
}
