#!/usr/bin/env python3
"""Benchmarks `pase solve` on the zoo (run on demand, not part of the tests).

For each zoo graph and device count it times the whole command (start-up,
reading the graph, pricing, solving, writing the strategy JSON) over repeats,
with all cores and with one thread, and prints: vertices, largest dependent
set, table entries, peak table memory, median seconds, speed-up over one
thread, and the ratio to the published PaSE tool where its time is known.
The last three columns are the solver alone (ordering and DP, the
`solver.seconds` of the strategy file): its median seconds on all cores and
on one thread, and its speed-up, which start-up, reading and pricing (all
serial) do not dilute.
Cases the size check refuses are listed as refused, with the reason.

    bench/run_bench.py [--pase build/pase] [--devices 4,8,...] [--repeats 5]
                       [--graphs alexnet,...] [--orders] [--timeout 600]

--orders instead reports, for each graph and p, the largest table each
vertex order needs (from `pase solve --plan-only`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = ["alexnet", "resnet101", "inception3", "rnnlm", "transformer"]
ORDERS = ["generateseq", "mindegree", "minfill", "bfs"]
# Published tool (Python/pandas, one core): seconds, as the issue and the paper report them.
REFERENCE_SECONDS = {
    ("inception3", 32): 38.0,
    ("transformer", 8): 27.0,
    ("inception3", 64): 180.0,   # paper: 3 minutes
    ("transformer", 64): 1860.0, # paper: 31 minutes
}


def run(cmd, timeout):
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return time.perf_counter() - start, proc


def solve_times(pase, graph, p, threads, repeats, out, timeout):
    cmd = [pase, "solve", graph, "--devices", str(p), "--out", out]
    if threads:
        cmd += ["--threads", str(threads)]
    times, solver_times, proc = [], [], None
    for _ in range(repeats):
        seconds, proc = run(cmd, timeout)
        if proc.returncode != 0:
            return None, None, proc
        times.append(seconds)
        with open(out) as f:
            solver_times.append(json.load(f)["solver"]["seconds"])
    return statistics.median(times), statistics.median(solver_times), proc


def human_bytes(n):
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"]:
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def bench(args):
    out = os.path.join(tempfile.mkdtemp(prefix="pase-bench-"), "strategy.json")
    print(f"{'graph':<12} {'p':>5} {'vertices':>8} {'max|D|':>6} {'table entries':>14} {'peak tables':>12} "
          f"{'median s':>10} {'1-thread s':>10} {'speed-up':>8} {'vs published':>13} "
          f"{'solver s':>9} {'1-thread':>9} {'speed-up':>8}")
    for name in args.graphs:
        graph = os.path.join(ROOT, "data", "graphs", name + ".json")
        for p in args.devices:
            try:
                median, solver_median, proc = solve_times(args.pase, graph, p, 0, args.repeats, out, args.timeout)
            except subprocess.TimeoutExpired:
                print(f"{name:<12} {p:>5}  timed out after {args.timeout} s")
                continue
            if median is None:
                reason = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
                print(f"{name:<12} {p:>5}  refused: {reason[:150]}")
                continue
            with open(out) as f:
                strategy = json.load(f)
            solver = strategy["solver"]
            single, solver_single, _ = solve_times(args.pase, graph, p, 1, args.repeats, out, args.timeout)
            speedup = single / median if single else float("nan")
            solver_speedup = solver_single / solver_median if solver_single else float("nan")
            ref = REFERENCE_SECONDS.get((name, p))
            ratio = f"{ref / median:>12.0f}x" if ref else f"{'':>13}"
            print(f"{name:<12} {p:>5} {len(strategy['layers']):>8} {solver['max_dependent_set']:>6} "
                  f"{solver['table_entries']:>14} {human_bytes(solver['peak_table_bytes']):>12} "
                  f"{median:>10.4f} {single:>10.4f} {speedup:>8.2f} {ratio} "
                  f"{solver_median:>9.4f} {solver_single:>9.4f} {solver_speedup:>8.2f}", flush=True)


def orders(args):
    print(f"{'graph':<12} {'p':>5} " + " ".join(f"{o:>14}" for o in ORDERS) + "   (largest table, entries)")
    for name in args.graphs:
        graph = os.path.join(ROOT, "data", "graphs", name + ".json")
        for p in args.devices:
            cells = []
            for order in ORDERS:
                _, proc = run([args.pase, "solve", graph, "--devices", str(p), "--order", order, "--plan-only", "--json"],
                              args.timeout)
                cells.append(str(json.loads(proc.stdout)["largest_table_entries"]) if proc.returncode == 0 else "error")
            print(f"{name:<12} {p:>5} " + " ".join(f"{c:>14}" for c in cells), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pase", default=os.path.join(ROOT, "build", "pase"))
    parser.add_argument("--devices", default="4,8,16,32,64,128,256")
    parser.add_argument("--graphs", default=",".join(ZOO))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--orders", action="store_true", help="report table sizes per vertex order instead")
    args = parser.parse_args()
    args.devices = [int(p) for p in args.devices.split(",")]
    args.graphs = args.graphs.split(",")
    if not os.access(args.pase, os.X_OK):
        sys.exit(f"error: {args.pase}: not an executable (build first, or pass --pase)")
    (orders if args.orders else bench)(args)


if __name__ == "__main__":
    main()
