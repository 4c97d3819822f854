#!/usr/bin/env python3
"""The memory cap's proven gap across the zoo and GPT-style graphs, on
demand (not part of the tests): the measuring stick for the capped search.

For each graph and device count it solves once without a cap (the
uncapped need: that optimum's memory per device) and once with a cap of 1
byte (refused, with the least memory any strategy needs), then solves under
caps spread over [least, need] (fractions of the way, --fractions) and
prints each case's gap, wall time, DP runs and branch-and-bound nodes
(from `pase solve --stats`), then the largest gap per graph and p.

    bench/cap_gaps.py [--pase build/pase] [--graphs alexnet,...,gpt2-xl]
                      [--devices 8,16,32,64] [--fractions 0,0.1,0.3,0.5,0.7,0.9]
                      [--extra "--cap-work 2e10"] [--timeout 600]
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPHS = "alexnet,resnet101,inception3,rnnlm,transformer,gpt2-xl,gpt3-13b"


def run(cmd, timeout):
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return time.perf_counter() - start, result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pase", default=os.path.join(ROOT, "build", "pase"))
    parser.add_argument("--graphs", default=GRAPHS)
    parser.add_argument("--devices", default="8,16,32,64")
    parser.add_argument("--fractions", default="0,0.1,0.3,0.5,0.7,0.9")
    parser.add_argument("--extra", default="", help="more options for every capped solve")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    fractions = [float(x) for x in args.fractions.split(",")]
    print(f"{'graph':12s} {'p':>3s} {'frac':>5s} {'cap bytes':>13s} {'gap %':>9s} {'s':>7s} {'dp runs':>8s} {'nodes':>6s}")
    worst = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.graphs.split(","):
            graph = os.path.join(tmp, name + ".json")
            subprocess.run([args.pase, "models", "export", name, "-o", graph], check=True)
            for p in [int(x) for x in args.devices.split(",")]:
                base = [args.pase, "solve", graph, "--devices", str(p), "--no-plan", "--json"]
                _, free = run(base, args.timeout)
                need = json.loads(free.stdout)["memory"]["per_device_bytes"]
                _, refused = run(base + ["--memory-per-device", "1"], args.timeout)
                least = int(re.search(r"needs is (\d+) bytes", refused.stderr).group(1))
                gaps, seconds = [], []
                for f in fractions:
                    cap = least + int(round(f * (need - least)))
                    cmd = base + ["--stats", "--memory-per-device", str(cap)] + shlex.split(args.extra)
                    try:
                        elapsed, result = run(cmd, args.timeout)
                    except subprocess.TimeoutExpired:
                        print(f"{name:12s} {p:3d} {f:5.2f} {cap:13d}  over the {args.timeout:.0f} s timeout")
                        continue
                    if result.returncode != 0:
                        raise RuntimeError(" ".join(cmd) + ": " + result.stderr.strip())
                    doc = json.loads(result.stdout)
                    if doc["memory"]["per_device_bytes"] > cap:
                        raise RuntimeError(" ".join(cmd) + ": the answer exceeds the cap")
                    gap = 100.0 * doc["memory"]["gap"]
                    m = re.search(r"capped search: (\d+) DP runs, (\d+) nodes", result.stderr)
                    runs, nodes = (m.group(1), m.group(2)) if m else ("-", "-")
                    gaps.append(gap)
                    seconds.append(elapsed)
                    print(f"{name:12s} {p:3d} {f:5.2f} {cap:13d} {gap:9.4f} {elapsed:7.2f} {runs:>8s} {nodes:>6s}", flush=True)
                if gaps:
                    worst.append((name, p, max(gaps), max(seconds)))
    print("\nlargest gap per graph and p (and the slowest case's seconds)")
    for name, p, gap, secs in worst:
        print(f"{name:12s} {p:3d} {gap:9.4f} % {secs:7.2f} s")


if __name__ == "__main__":
    main()
