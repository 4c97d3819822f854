#!/usr/bin/env python3
"""Interleaved A/B timing of two `pase` binaries on the same solves.

    bench/ab_bench.py --a OLD/pase --b build/pase [--repeats 15] [--devices 8,32] [--extra="--threads 1"]

For every zoo graph (data/graphs/) and device count, and for the GPT-3 13B
and LLaMA-2 70B presets at p = 64, runs the whole `pase solve` command with
A and with B in turn, alternating which goes first, so that both see the
same machine load; prints each one's median wall time and B / A. Run on
demand (never a test): a timing on a shared machine varies by several per
cent, which is why the runs interleave and the medians are compared.
Python standard library only.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = ("alexnet", "inception3", "resnet101", "rnnlm", "transformer")
PRESETS = (("gpt3-13b", 64), ("llama2-70b", 64))


def wall(cmd):
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit("error: `%s` failed: %s" % (" ".join(cmd), done.stderr.decode().strip()))
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="the baseline pase binary")
    parser.add_argument("--b", required=True, help="the pase binary to compare with it")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--devices", default="8,32")
    parser.add_argument("--extra", default="", help="more options for every solve")
    options = parser.parse_args()
    cases = [(os.path.join(ROOT, "data", "graphs", g + ".json"), g, int(p))
             for g in ZOO for p in options.devices.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        for preset, p in PRESETS:
            path = os.path.join(scratch, preset + ".json")
            subprocess.run([options.b, "models", "export", preset, "-o", path], check=True, stdout=subprocess.DEVNULL)
            cases.append((path, preset, p))
        print("%-12s %5s %12s %12s %8s" % ("graph", "p", "A median s", "B median s", "B / A"))
        ratios = []
        for path, name, p in cases:
            times = {"a": [], "b": []}
            for r in range(options.repeats + 1):  # the first round warms the caches and is dropped
                order = ("a", "b") if r % 2 == 0 else ("b", "a")
                for which in order:
                    binary = options.a if which == "a" else options.b
                    seconds = wall([binary, "solve", path, "--devices", str(p)] + options.extra.split())
                    if r > 0:
                        times[which].append(seconds)
            a, b = statistics.median(times["a"]), statistics.median(times["b"])
            ratios.append(b / a)
            print("%-12s %5d %12.4f %12.4f %8.3f" % (name, p, a, b, b / a))
        print("geometric mean of B / A: %.3f" % statistics.geometric_mean(ratios))


if __name__ == "__main__":
    main()
