#!/usr/bin/env python3
"""Folding of repeated blocks, on demand (not part of the tests): the whole
`pase solve` command with folding and with --no-fold, side by side.

For each language-model preset and device count it exports the graph
(`pase models export PRESET`), then times `pase solve GRAPH --devices P
--no-plan` with and without --no-fold (median of --repeats runs, alternating),
checks that both give the same total cost (relative 1e-9), and prints the
folded blocks, the two times and their ratio. Cases over --timeout are
printed as such.

Then the depth check: the first preset with --depth layers (100 and 1000 by
default) at --depth-devices, folded, printing the seconds spent pricing the
graph, the table bytes the solve held at its peak and the process's peak
resident memory (`--stats`). Folded, the tables are one block's plus a few
bytes per block, and identical blocks share their priced tables (priced
once), so what grows with depth is the graph itself (names, shapes) and a
few bytes per vertex.

    bench/fold_bench.py [--pase build/pase] [--presets gpt3-175b,llama2-70b]
                        [--devices 8,64,256,1024] [--repeats 3] [--timeout 600]
                        [--depth 100,1000] [--depth-devices 256]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, timeout):
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip())
    return elapsed, json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pase", default=os.path.join(ROOT, "build", "pase"))
    parser.add_argument("--presets", default="gpt3-175b,llama2-70b")
    parser.add_argument("--devices", default="8,64,256,1024")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--depth", default="100,1000")
    parser.add_argument("--depth-devices", type=int, default=256)
    args = parser.parse_args()
    print(f"{'model':12s} {'p':>5s} {'folded blocks':>14s} {'fold s':>9s} {'no-fold s':>10s} {'speed-up':>9s}")
    with tempfile.TemporaryDirectory() as tmp:
        for preset in args.presets.split(","):
            graph = os.path.join(tmp, preset + ".json")
            subprocess.run([args.pase, "models", "export", preset, "-o", graph], check=True)
            for p in [int(x) for x in args.devices.split(",")]:
                base = [args.pase, "solve", graph, "--devices", str(p), "--no-plan", "--json"]
                times = {"fold": [], "no-fold": []}
                costs = {}
                over = set()
                for r in range(args.repeats):
                    for kind in (("fold", "no-fold") if r % 2 == 0 else ("no-fold", "fold")):
                        if kind in over:
                            continue
                        try:
                            seconds, doc = timed(base + (["--no-fold"] if kind == "no-fold" else []), args.timeout)
                        except subprocess.TimeoutExpired:
                            over.add(kind)
                            continue
                        times[kind].append(seconds)
                        costs[kind] = doc["total_cost"]
                stats = subprocess.run(base[:-1] + ["--plan-only", "--stats"], capture_output=True, text=True).stdout
                line = next((l for l in stats.splitlines() if l.startswith("folded:")), "folded: ?")
                folded = line.split(":")[1].split("repeated")[0].replace(" of ", "/").strip()
                if over:
                    # A side past the timeout: the other's time, and a speed-up of at least timeout / time.
                    a = f"{statistics.median(times['fold']):9.2f}" if times["fold"] else f"{'>' + str(int(args.timeout)):>9s}"
                    b = f"{statistics.median(times['no-fold']):10.2f}" if times["no-fold"] else f"{'>' + str(int(args.timeout)):>10s}"
                    ratio = f"{'>' + format(args.timeout / statistics.median(times['fold']), '.0f') + 'x':>9s}" if times["fold"] else f"{'?':>9s}"
                    print(f"{preset:12s} {p:5d} {folded:>14s} {a} {b} {ratio}", flush=True)
                    continue
                if abs(costs["fold"] - costs["no-fold"]) > 1e-9 * abs(costs["no-fold"]):
                    raise SystemExit(f"{preset} p={p}: folded cost {costs['fold']} != unfolded {costs['no-fold']}")
                a, b = statistics.median(times["fold"]), statistics.median(times["no-fold"])
                print(f"{preset:12s} {p:5d} {folded:>14s} {a:9.2f} {b:10.2f} {b / a:8.1f}x", flush=True)
        depth(args, tmp)


def field(text, before, after=""):
    """The integer after `before` in `text` (up to `after`), or None."""
    at = text.find(before)
    if at < 0:
        return None
    rest = text[at + len(before):].split(after or None, 1)[0] if after else text[at + len(before):].split()[0]
    return int(rest.strip().rstrip(","))


def depth(args, tmp):
    preset = args.presets.split(",")[0]
    print(f"\n{preset} by depth at p={args.depth_devices} (folded): {'layers':>6s} {'solve s':>8s} {'price s':>8s} "
          f"{'peak table bytes':>17s} {'peak RSS bytes':>15s}")
    for layers in [int(x) for x in args.depth.split(",")]:
        graph = os.path.join(tmp, f"{preset}-{layers}.json")
        subprocess.run([args.pase, "models", "export", preset, "--layers", str(layers), "-o", graph], check=True)
        start = time.perf_counter()
        out = subprocess.run([args.pase, "solve", graph, "--devices", str(args.depth_devices), "--no-plan", "--stats"],
                             capture_output=True, text=True, timeout=args.timeout, check=True).stdout
        seconds = time.perf_counter() - start
        tables = field(out, "peak table bytes ", ",")
        rss = field(out, "peak resident memory ")
        price = float(out.split("phases:", 1)[1].split(" price ", 1)[1].split()[0])
        print(f"{'':{len(preset) + 30}s} {layers:6d} {seconds:8.2f} {price:8.3f} {tables:17d} {rss:15d}", flush=True)


if __name__ == "__main__":
    main()
