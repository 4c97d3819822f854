#!/usr/bin/env bash
# Builds the libFuzzer harnesses (preset `fuzz`: clang, ASan + UBSan, in
# build-fuzz/) and runs each for a bounded time from its seed corpus; fails
# if any harness finds a crash, a sanitizer report, a timeout or an
# out-of-memory. Skipped (exit 0) when clang++ is not installed.
# docs/fuzzing.md explains the harnesses and how to run a longer campaign.
#
#   scripts/fuzz_smoke.sh [SECONDS_PER_HARNESS [BUILD_DIR]]   (default 30; two at a time)
#
# With BUILD_DIR (CI passes build-asan, whose preset links the harnesses with
# PASE_FUZZ_SMOKE) it runs the harnesses built there instead of building the
# `fuzz` preset: the libraries then carry no coverage, so the inputs are the
# seeds and blind mutations of them, the same fixed sequence on every machine.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build_dir=${2:-}

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz smoke: skipped (no clang++; install Debian's clang to run it)"
  exit 0
fi

start=$(date +%s)
if [ -z "$build_dir" ]; then
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j2
  build_dir=build-fuzz
fi
built=$(date +%s)

artifacts=$build_dir/fuzz-artifacts
rm -rf "$artifacts" && mkdir -p "$artifacts"
# Run one harness: new inputs go to a scratch corpus (the seeds stay as they
# are), findings to $artifacts/HARNESS/, the log to $artifacts/HARNESS.log.
# A fixed seed and a fixed number of runs make the smoke the same sequence of
# inputs on every machine, so a CI gate does not turn red on a finding that
# another run happened to reach: a slower machine stops at the time limit, a
# prefix of the same sequence. The counts are about what 30 s reach on two
# busy cores; a campaign (scripts/fuzz_campaign.sh) is where new findings come from.
runs_for() {
  case $1 in
    fuzz_graph_reader) echo 40000 ;;
    fuzz_machine_profile) echo 400000 ;;
    fuzz_plan_reader) echo 80000 ;;
    fuzz_strategy_reader) echo 120000 ;;
    fuzz_onnx_import) echo 40000 ;;
    *) echo 20000 ;;
  esac
}
run_harness() {
  local name=$1
  mkdir -p "$artifacts/$name/corpus"
  "$build_dir"/fuzz/"$name" -seed=1 -runs="$(runs_for "$name")" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -dict=fuzz/json.dict -print_final_stats=1 -artifact_prefix="$artifacts/$name/" \
    "$artifacts/$name/corpus" "fuzz/corpus/$name" >"$artifacts/$name.log" 2>&1
}

harnesses=()
for path in "$build_dir"/fuzz/fuzz_*; do [ -x "$path" ] && harnesses+=("$(basename "$path")"); done
failed=()
# Two at a time (CI has two cores).
for ((i = 0; i < ${#harnesses[@]}; i += 2)); do
  pids=()
  for name in "${harnesses[@]:i:2}"; do
    run_harness "$name" &
    pids+=("$!:$name")
  done
  for entry in "${pids[@]}"; do
    name=${entry#*:}
    if wait "${entry%%:*}"; then
      echo "fuzz smoke: $name: $(grep -E '^#[0-9]+.*(DONE|cov:)' "$artifacts/$name.log" | tail -n 1)"
    else
      echo "fuzz smoke: $name FAILED; log $artifacts/$name.log:"
      grep -E 'ERROR|SUMMARY|Test unit written|uncaught|terminate|what\(\)' "$artifacts/$name.log" | head -n 20 || true
      # The finding itself, so a CI log alone reproduces it (base64 -d > FILE).
      for unit in "$artifacts/$name"/crash-* "$artifacts/$name"/timeout-* "$artifacts/$name"/oom-*; do
        [ -f "$unit" ] || continue
        if (($(stat -c %s "$unit") <= 16384)); then
          echo "fuzz smoke: $(basename "$unit") as base64:"
          base64 -w 120 "$unit"
        fi
      done
      failed+=("$name")
    fi
  done
done
end=$(date +%s)
echo "fuzz smoke: build $((built - start)) s, ${#harnesses[@]} harnesses x ${seconds} s in $((end - built)) s"
if ((${#failed[@]})); then
  echo "fuzz smoke: failed: ${failed[*]} (reproduce: $build_dir/fuzz/HARNESS FILE; docs/fuzzing.md)"
  exit 1
fi
