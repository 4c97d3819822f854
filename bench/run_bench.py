#!/usr/bin/env python3
"""Benchmarks `pase solve` on the zoo (run on demand, not part of the tests).

For each zoo graph and device count it times the whole command (start-up,
reading the graph, pricing, solving, writing the strategy JSON) over repeats,
with all cores and with one thread, and prints: vertices, largest dependent
set, table entries, peak table memory, median seconds, speed-up over one
thread, and the ratio to the published PaSE tool where its time is known.
Peak RSS is the process's peak resident memory (from --stats, first run).
The last three columns are the solver alone (ordering and DP, the
`solver.seconds` of the strategy file): its median seconds on all cores and
on one thread, and its speed-up, which start-up, reading and pricing (all
serial) do not dilute.
Each configuration (all cores, one thread) starts with --warmup untimed runs,
then its timed runs back to back.
Cases the size check refuses are listed as refused, with the reason.

    bench/run_bench.py [--pase build/pase] [--devices 4,8,...] [--repeats 5]
                       [--warmup 1] [--graphs alexnet,...] [--orders] [--timeout 600]

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


def solve_command(pase, graph, p, threads, out):
    cmd = [pase, "solve", graph, "--devices", str(p), "--out", out, "--timings"]
    return cmd + ["--threads", str(threads)] if threads else cmd


def time_pair(pase, graph, p, repeats, warmup, out, timeout):
    """Medians (whole command, solver alone) on all cores and on one thread.

    Each configuration's runs go back to back, after `warmup` untimed ones:
    on virtual machines a core left idle between runs wakes slowly (about
    4 ms for the Transformer at p = 16 on the 2-core machine), which
    alternating one-thread and all-core runs would charge to the latter.
    The all-core runs write `out`; the one-thread runs write beside it.
    """
    outs = {0: out, 1: out + ".1-thread"}
    medians, solver_medians = {}, {}
    for threads, path in outs.items():
        cmd = solve_command(pase, graph, p, threads, path)
        for _ in range(warmup):
            run(cmd, timeout)
        times, solver_times = [], []
        for _ in range(repeats):
            seconds, proc = run(cmd, timeout)
            if proc.returncode != 0:
                sys.exit(f"error: {' '.join(cmd)} failed after succeeding: {proc.stderr.strip()}")
            times.append(seconds)
            with open(path) as f:
                solver_times.append(json.load(f)["solver"]["seconds"])
        medians[threads], solver_medians[threads] = statistics.median(times), statistics.median(solver_times)
    return medians, solver_medians


def human_bytes(n):
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"]:
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def bench(args):
    out = os.path.join(tempfile.mkdtemp(prefix="pase-bench-"), "strategy.json")
    print(f"{'graph':<12} {'p':>5} {'vertices':>8} {'max|D|':>6} {'table entries':>14} {'peak tables':>12} {'peak RSS':>10} "
          f"{'median s':>10} {'1-thread s':>10} {'speed-up':>8} {'vs published':>13} "
          f"{'solver s':>9} {'1-thread':>9} {'speed-up':>8}")
    for name in args.graphs:
        graph = os.path.join(ROOT, "data", "graphs", name + ".json")
        for p in args.devices:
            # A first, untimed run finds refusals and reports the process's
            # peak resident memory (from --stats).
            try:
                _, proc = run(solve_command(args.pase, graph, p, 0, out) + ["--stats"], args.timeout)
                if proc.returncode == 0:
                    medians, solver_medians = time_pair(args.pase, graph, p, args.repeats, args.warmup, out, args.timeout)
            except subprocess.TimeoutExpired:
                print(f"{name:<12} {p:>5}  timed out after {args.timeout} s")
                continue
            if proc.returncode != 0:
                reason = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
                print(f"{name:<12} {p:>5}  refused: {reason[:150]}")
                continue
            resident = [line for line in proc.stdout.splitlines() if line.startswith("peak resident memory ")]
            peak_rss = human_bytes(int(resident[0].split()[3])) if resident else "-"
            with open(out) as f:
                strategy = json.load(f)
            solver = strategy["solver"]
            median, single = medians[0], medians[1]
            solver_median, solver_single = solver_medians[0], solver_medians[1]
            speedup = single / median if single else float("nan")
            solver_speedup = solver_single / solver_median if solver_single else float("nan")
            ref = REFERENCE_SECONDS.get((name, p))
            ratio = f"{ref / median:>12.0f}x" if ref else f"{'':>13}"
            print(f"{name:<12} {p:>5} {len(strategy['layers']):>8} {solver['max_dependent_set']:>6} "
                  f"{solver['table_entries']:>14} {human_bytes(solver['peak_table_bytes']):>12} {peak_rss:>10} "
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
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before each configuration's timed ones")
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
