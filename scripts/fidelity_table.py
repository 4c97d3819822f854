#!/usr/bin/env python3
"""Prices the published measurements of tests/fixtures/published_throughputs.json
with the calibrated cost model and writes the table of docs/calibration.md.

    python3 scripts/fidelity_table.py [PASE] [--write]

PASE is the `pase` binary (default: build/pase). For each entry, at 1 and 8
GPUs, the graph command of the entry is run with --batch (batch per GPU x
GPUs), then `pase evaluate --baseline data-parallel --cost-model calibrated
--machine M --dtype D --optimizer O [--memory-format F] --json` prices the
data-parallel strategy (M, D, O, F: the entry's machine, dtype, optimizer and
memory_format). The table gives the predicted and measured step times and weak-scaling factors and the
errors the fidelity test bounds (|step error| <= 35%, |scaling error| <= 0.5).

Without --write the table is printed; with --write it replaces the part of
docs/calibration.md between the fidelity-table markers. Only the Python
standard library is used. Exit status: 0, or 1 when a run fails or an error
is outside its bound for an entry without a `known_gap` note.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "published_throughputs.json")
DOC = os.path.join(ROOT, "docs", "calibration.md")
BEGIN, END = "<!-- fidelity-table:begin -->", "<!-- fidelity-table:end -->"
STEP_BOUND, SCALING_BOUND = 0.35, 0.5


def run(pase, args):
    result = subprocess.run([pase] + args, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("error: pase " + " ".join(args) + ": " + result.stderr.strip())
    return result.stdout


def predicted_step(pase, entry, gpus, scratch):
    graph = os.path.join(scratch, "%s-%d.json" % (entry["id"], gpus))
    run(pase, entry["graph"].split() + ["--batch", str(entry["batch_per_gpu"] * gpus), "-o", graph])
    layout = ["--memory-format", entry["memory_format"]] if "memory_format" in entry else []
    out = run(pase, ["evaluate", graph, "--baseline", "data-parallel", "--devices", str(gpus), "--cost-model",
                     "calibrated", "--machine", entry["machine"], "--dtype", entry["dtype"], "--optimizer",
                     entry["optimizer"]] + layout + ["--json"])
    return json.loads(out)["total_cost"]


def rows(pase):
    with open(FIXTURE) as f:
        entries = json.load(f)["entries"]
    with tempfile.TemporaryDirectory() as scratch:
        for e in entries:
            samples = e["batch_per_gpu"] * e["items_per_sample"]
            measured = {g: samples / (e["throughput"][str(g)] / g) for g in (1, 8)}
            predicted = {g: predicted_step(pase, e, g, scratch) for g in (1, 8)}
            yield e, measured, predicted


def table(pase):
    lines = ["| entry | machine | dtype | batch/GPU | step 1 GPU: predicted / measured (error) "
             "| step 8 GPUs: predicted / measured (error) | scaling 1→8: predicted / measured (error) | bounds |",
             "|---|---|---|---|---|---|---|---|"]
    worst = 0.0
    for e, m, p in rows(pase):
        err = {g: p[g] / m[g] - 1 for g in (1, 8)}
        ps, ms = 8 * p[1] / p[8], 8 * m[1] / m[8]
        outside = []
        if abs(err[1]) > STEP_BOUND or abs(err[8]) > STEP_BOUND:
            outside.append("step")
        if abs(ps - ms) > SCALING_BOUND:
            outside.append("scaling")
        if not outside:
            verdict = "within"
        elif "known_gap" in e:
            verdict = "outside (%s; known gap)" % ", ".join(outside)
        else:
            verdict = "**OUTSIDE** (%s)" % ", ".join(outside)
            worst = max(worst, abs(err[1]) / STEP_BOUND, abs(err[8]) / STEP_BOUND, abs(ps - ms) / SCALING_BOUND)
        unit = "%d %s" % (e["batch_per_gpu"] * e["items_per_sample"],
                          {"tok/s": "tokens", "img/s": "images", "seq/s": "sequences"}[e["unit"]])
        cells = ["%.1f / %.1f ms (%+.0f%%)" % (1e3 * p[g], 1e3 * m[g], 100 * err[g]) for g in (1, 8)]
        lines.append("| `%s` | `%s` | %s | %s | %s | %s | %.2f / %.2f (%+.2f) | %s |" %
                     (e["id"], e["machine"], e["dtype"], unit, cells[0], cells[1], ps, ms, ps - ms, verdict))
    return "\n".join(lines) + "\n", worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pase", nargs="?", default=os.path.join(ROOT, "build", "pase"))
    parser.add_argument("--write", action="store_true", help="rewrite the table in docs/calibration.md")
    args = parser.parse_args()
    text, worst = table(os.path.abspath(args.pase))
    if args.write:
        with open(DOC) as f:
            doc = f.read()
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(DOC, "w") as f:
            f.write(head + BEGIN + "\n" + text + END + tail)
    else:
        sys.stdout.write(text)
    if worst > 1:
        print("error: an entry without a known gap is outside its bound (%.2f times the bound)" % worst, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
