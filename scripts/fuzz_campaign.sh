#!/usr/bin/env bash
# Runs one libFuzzer harness for a long time (a campaign, docs/fuzzing.md),
# niced so that it only takes idle CPU, and keeps going after findings.
#
#   scripts/fuzz_campaign.sh HARNESS SECONDS [FOLDER]
#
# FOLDER (default fuzz-campaign/HARNESS) gets a copy of the harness, the
# corpus (seeded from fuzz/corpus/HARNESS, grown by the run; a later run
# continues from it), crashes/ (every finding) and log. Build the harnesses
# first: cmake --preset fuzz && cmake --build --preset fuzz -j2
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
harness=${1:?usage: scripts/fuzz_campaign.sh HARNESS SECONDS [FOLDER]}
seconds=${2:?usage: scripts/fuzz_campaign.sh HARNESS SECONDS [FOLDER]}
folder=${3:-$root/fuzz-campaign/$harness}

mkdir -p "$folder/corpus" "$folder/crashes"
# A copy, so that rebuilding during the run changes nothing under it.
cp "$root/build-fuzz/fuzz/$harness" "$folder/$harness"
cp "$root/fuzz/json.dict" "$folder/json.dict"
cp -n "$root/fuzz/corpus/$harness/"* "$folder/corpus/" 2>/dev/null || true
cd "$folder"
exec nice -n 19 "./$harness" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
  -dict=json.dict -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
  -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix=crashes/ corpus >log 2>&1
