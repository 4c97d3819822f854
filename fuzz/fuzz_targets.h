#pragma once
// What each fuzz harness runs on one input (docs/fuzzing.md), shared with
// tests/fuzz/fuzz_regressions_test.cc so that a finding is replayed through the
// very same calls. Each takes the bytes of a file and throws InputError or
// ResourceError when the input is bad or too large: the answers the contract
// allows. A broken round trip throws std::logic_error; anything else that
// escapes (or a sanitizer report) is a bug.
#include <string>

namespace pase::fuzz {

/// A pase-graph file: read, written and read back (the writer must be
/// idempotent), built (shape inference), priced at p = 4, solved within small
/// limits (a bounded solve past them), its memory priced, and the strategy
/// file written and read back to the same choice.
void graph_input(const std::string& text);

/// A pase-strategy file, matched against AlexNet (batch 8) priced at p = 4.
void strategy_input(const std::string& text);

/// The plan of a pase-strategy file (what `pase plan-check` and `pase export`
/// read, with no graph): read, exported to every framework and checked
/// (meshes of up to 4096 devices).
void plan_input(const std::string& text);

/// A pase-machine profile: read, written and read back, then used by the
/// calibrated model to price AlexNet (batch 8) at p = 4.
void machine_profile_input(const std::string& text);

/// The bytes of an ONNX model, imported with the default options (only in
/// builds with the ONNX importer).
void onnx_input(const std::string& bytes);

}  // namespace pase::fuzz
