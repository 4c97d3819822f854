#!/usr/bin/env python3
"""Measures the calibrated model against one GPU: its profile, the GEMMs of
three networks' strategies, and real training steps (docs/calibration.md,
"Measured on an H100").

    python3 scripts/gpu_calibration.py prepare DIR [--pase build/pase]
    python3 scripts/gpu_calibration.py measure DIR --calibrate build/pase-calibrate   # on the GPU host
    python3 scripts/gpu_calibration.py report DIR [--pase build/pase] [--machine NAME] [--write]

prepare writes, with `pase`, the graphs and strategy files the GPU host needs
(so that host needs only pase-calibrate, Python and PyTorch). measure runs
there: `pase-calibrate --out DIR/measured.json` (GEMM tables in fp32, tf32
and bf16, copy bandwidths), `pase-calibrate --validate` of every strategy in
fp32 and bf16 against that profile (DIR/validate-*.txt), and
scripts/torch_step.py (DIR/steps.json, and the kernels of each step in
DIR/kernels.json). report reads those back, prices the same layers and steps
with the public-spec profile (--machine, default dgx-h100) and with the
measured one (--profile, default DIR/measured.json), and prints three tables
(GEMMs, steps, kernels by op kind); --write puts them into
docs/calibration.md between their markers. The three steps may run
on one host or, as here, on two. Only the standard library is used, beside
PyTorch in measure.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "calibration.md")

# Graphs whose GEMMs are validated: name -> the pase command that writes it (-o FILE appended).
VALIDATION_GRAPHS = {
    "alexnet": ["models", "export", "alexnet"],
    "transformer": ["models", "export", "transformer"],
    "gpt3-13b-block": ["models", "export", "gpt3-13b", "--layers", "1", "--batch", "8"],
}
VALIDATION_DEVICES = (1, 8)
VALIDATION_DTYPES = ("fp32", "bf16")
# Strategies are what a solve for an 8-GPU H100 node picks.
SOLVE_MACHINE = "dgx-h100"

# Step graphs: the models scripts/torch_step.py runs, and how PyTorch runs them.
STEP_FIXTURE = os.path.join(ROOT, "tests", "fixtures", "gpu_step_graphs.json")
STEP_GRAPHS = {name: (entry["graph"].split(), entry["options"].split())
               for name, entry in json.load(open(STEP_FIXTURE))["graphs"].items()}


def run(command, **kwargs):
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit("error: %s: %s" % (" ".join(command), (result.stderr or result.stdout).strip()))
    return result.stdout


def validation_runs():
    for graph in VALIDATION_GRAPHS:
        for devices in VALIDATION_DEVICES:
            for dtype in VALIDATION_DTYPES:
                yield graph, devices, dtype


def prepare(args, quiet=False):
    os.makedirs(args.dir, exist_ok=True)
    for name, command in VALIDATION_GRAPHS.items():
        graph = os.path.join(args.dir, name + ".json")
        run([args.pase] + command + ["-o", graph])
        for devices in VALIDATION_DEVICES:
            run([args.pase, "solve", graph, "--devices", str(devices), "--cost-model", "calibrated", "--machine",
                 SOLVE_MACHINE, "--dtype", "bf16", "--out", os.path.join(args.dir, "%s-p%d.strategy.json" % (name, devices))])
    for name, (command, _) in STEP_GRAPHS.items():
        run([args.pase] + command + ["-o", os.path.join(args.dir, name + ".json")])
    if not quiet:
        print("prepared %s" % args.dir)


def measure(args):
    profile = os.path.join(args.dir, "measured.json")
    log = open(os.path.join(args.dir, "measure.log"), "a")

    def step(command, out=None):
        print("$ " + " ".join(command), flush=True)
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        result = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True)
        if out:
            with open(out, "w") as f:
                f.write(result.stdout)
        print(result.stdout[-2000:], flush=True)
        return result.returncode == 0

    if not os.path.exists(profile):
        step([args.calibrate, "--out", profile, "--name", args.name] + args.calibrate_options.split())
    # Without a profile (its measurement failed) the GEMMs are still timed, priced by the public-spec one.
    machine = profile if os.path.exists(profile) else SOLVE_MACHINE
    for graph, devices, dtype in validation_runs():
        step([args.calibrate, "--validate", "--graph", os.path.join(args.dir, graph + ".json"), "--strategy",
              os.path.join(args.dir, "%s-p%d.strategy.json" % (graph, devices)), "--devices", str(devices), "--machine",
              machine, "--dtype", dtype], out=os.path.join(args.dir, "validate-%s-p%d-%s.txt" % (graph, devices, dtype)))
    if not args.skip_steps:
        step([sys.executable, os.path.join(ROOT, "scripts", "torch_step.py"), "--out", os.path.join(args.dir, "steps.json"),
              "--kernels", os.path.join(args.dir, "kernels.json")])


# One layer line of pase-calibrate --validate: name, batch, m, n, k, predicted_ms, then measured_ms and error or "-".
LAYER = re.compile(r"^(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s+(\S+)$")


def read_validation(text):
    layers = []
    for line in text.splitlines()[2:]:
        found = LAYER.match(line)
        if found:
            layers.append({"name": found.group(1), "shape": tuple(float(found.group(i)) for i in range(2, 6)),
                           "predicted": float(found.group(6)),
                           "measured": None if found.group(7) == "-" else float(found.group(7))})
    return layers


def validation_row(args, graph, devices, dtype, machine_label, machine):
    measured_file = os.path.join(args.dir, "validate-%s-p%d-%s.txt" % (graph, devices, dtype))
    measured = {l["name"]: l for l in read_validation(open(measured_file).read())}
    predicted = read_validation(run([args.pase_calibrate, "--validate", "--dry-run", "--graph",
                                     os.path.join(args.scratch, graph + ".json"), "--strategy",
                                     os.path.join(args.scratch, "%s-p%d.strategy.json" % (graph, devices)), "--devices",
                                     str(devices), "--machine", machine, "--dtype", dtype]))
    # The strategies are solved again here: they must still give the shapes that were timed.
    for l in predicted:
        if l["name"] not in measured or measured[l["name"]]["shape"] != l["shape"]:
            sys.exit("error: %s: layer '%s' was timed at %s, the strategy now gives %s (solve again and measure again)"
                     % (measured_file, l["name"], measured.get(l["name"], {}).get("shape"), l["shape"]))
    errors = [l["predicted"] / measured[l["name"]]["measured"] - 1 for l in predicted]
    total_p = sum(l["predicted"] for l in predicted)
    total_m = sum(measured[l["name"]]["measured"] for l in predicted)
    worst = max(range(len(errors)), key=lambda i: abs(errors[i]))
    return "| %s | %d | %s | %s | %d | %.3f / %.3f ms (%+.0f%%) | %.0f%% | %+.0f%% (`%s`) |" % (
        graph, devices, dtype, machine_label, len(errors), total_p, total_m, 100 * (total_p / total_m - 1),
        100 * statistics.median(abs(e) for e in errors), 100 * errors[worst], predicted[worst]["name"])


def validation_table(args):
    lines = ["| graph | GPUs | dtype | profile | GEMM layers | total per device: predicted / measured (error) "
             "| median \\|error\\| per layer | worst layer |", "|---|---|---|---|---|---|---|---|"]
    for graph, devices, dtype in validation_runs():
        for label, machine in (("measured", args.profile), (args.machine, args.machine)):
            lines.append(validation_row(args, graph, devices, dtype, label, machine))
    return lines


def predicted_step(args, name, dtype, machine):
    """pase evaluate's JSON for one step, evaluated once (the step and kernel tables share it)."""
    key = (name, dtype, machine)
    if key not in args.evaluated:
        args.evaluated[key] = evaluate_step(args, name, dtype, machine)
    return args.evaluated[key]


def evaluate_step(args, name, dtype, machine):
    _, options = STEP_GRAPHS[name]
    out = run([args.pase, "evaluate", os.path.join(args.scratch, name + ".json"), "--baseline", "data-parallel",
               "--devices", "1", "--cost-model", "calibrated", "--machine", machine, "--dtype", dtype] + options + ["--json"])
    return json.loads(out)


def step_table(args):
    steps = json.load(open(os.path.join(args.dir, "steps.json")))
    lines = ["| model | dtype | batch | measured (median of %d) | predicted, measured profile (error) "
             "| predicted, `%s` (error) |" % (steps["cases"][0]["steps"], args.machine), "|---|---|---|---|---|---|"]
    for case in steps["cases"]:
        m = case["median_ms"]
        cells = []
        for machine in (args.profile, args.machine):
            p = predicted_step(args, case["model"], case["dtype"], machine)["total_cost"] * 1e3
            cells.append("%.1f ms (%+.0f%%)" % (p, 100 * (p / m - 1)))
        lines.append("| %s | %s | %d | %.1f ms | %s | %s |" % (case["model"], case["dtype"], case["batch"], m, cells[0], cells[1]))
    return lines, steps


# What each op kind of the graph, and each kernel PyTorch ran, is counted as.
OP_GROUPS = {"conv2d": "GEMM layers", "fc": "GEMM layers", "einsum": "GEMM layers", "matmul": "GEMM layers",
             "batchnorm": "batchnorm", "norm": "norm", "rmsnorm": "norm", "softmax": "softmax", "softmax_xent": "softmax"}
GROUPS = ("GEMM layers", "batchnorm", "norm", "softmax", "elementwise and other")


def kernel_group(name):
    """The group of a CUDA kernel, by its name: cuBLAS's and cuDNN's GEMM and
    convolution kernels, and the optimizer's (the model prices the update
    inside each GEMM layer), are GEMM layers."""
    lower = name.lower()
    if "batch_norm" in lower or "batchnorm" in lower:
        return "batchnorm"
    if "layer_norm" in lower:
        return "norm"
    if "softmax" in lower:
        return "softmax"
    if re.search(r"gemm|xmma|cutlass|nvjet|conv|fprop|dgrad|wgrad|multi_tensor|fused_adam|fused_sgd|_adam|_sgd", lower):
        return "GEMM layers"
    return "elementwise and other"


def kernel_table(args):
    path = os.path.join(args.dir, "kernels.json")
    if not os.path.exists(path):
        return []
    cases = json.load(open(path))["cases"]
    lines = ["| model | dtype | kernels | " + " | ".join(GROUPS) + " |", "|---|---|---|" + "---|" * len(GROUPS)]
    for case, kernels in cases.items():
        model, dtype = case.split(":")
        measured = dict.fromkeys(GROUPS, 0.0)
        for name, _, us in kernels:
            measured[kernel_group(name)] += us / 1e3
        for label, machine in (("measured", None), ("predicted, measured profile", args.profile),
                               ("predicted, `%s`" % args.machine, args.machine)):
            if machine is None:
                cells = measured
            else:
                cells = dict.fromkeys(GROUPS, 0.0)
                for layer in predicted_step(args, model, dtype, machine)["layers"]:
                    cells[OP_GROUPS.get(layer["op"], "elementwise and other")] += layer["cost"] * 1e3
            lines.append("| %s | %s | %s (%.1f ms) | %s |" % (model, dtype, label, sum(cells.values()),
                                                            " | ".join("%.1f" % cells[g] for g in GROUPS)))
    return lines


def replace_between(text, name, lines):
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    if begin not in text or end not in text:
        sys.exit("error: %s: no %s ... %s markers" % (DOC, begin, end))
    head, rest = text.split(begin, 1)
    return head + begin + "\n" + "\n".join(lines) + "\n" + end + rest.split(end, 1)[1]


def report(args):
    if not args.profile:
        args.profile = os.path.join(args.dir, "measured.json")
    with tempfile.TemporaryDirectory() as scratch:
        # The graphs and strategies, made again by this pase: the measured files alone are kept.
        args.scratch = scratch
        args.evaluated = {}
        prepare(argparse.Namespace(dir=scratch, pase=args.pase), quiet=True)
        validation = validation_table(args)
        steps, raw = step_table(args)
        kernels = kernel_table(args)
    print("\n".join(validation) + "\n\n" + "\n".join(steps) + "\n\n" + "\n".join(kernels))
    print("\nsteps timed on %s, PyTorch %s, CUDA %s" % (raw["device"], raw["torch"], raw["cuda"]))
    if args.write:
        with open(DOC) as f:
            text = f.read()
        text = replace_between(text, "gpu-validation", validation)
        text = replace_between(text, "gpu-steps", steps)
        if kernels:
            text = replace_between(text, "gpu-kernels", kernels)
        with open(DOC, "w") as f:
            f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("prepare", "measure", "report"):
        p = sub.add_parser(name)
        p.add_argument("dir")
        p.add_argument("--pase", default=os.path.join(ROOT, "build", "pase"))
    measure_parser = sub.choices["measure"]
    measure_parser.add_argument("--calibrate", required=True, help="the pase-calibrate binary")
    measure_parser.add_argument("--name", default="h100-measured")
    # One GPU measures no GPU-to-GPU link: the profile is of a node of eight
    # such GPUs (a DGX H100's count) joined as the host link measured, with
    # the DGX H100's network share (docs/calibration.md).
    # Rows reach 131072 (8 sequences of 16384 tokens, 2 images of 256x256
    # pixels): tall, thin GEMMs fill the device as no 8192-row one does.
    measure_parser.add_argument("--calibrate-options", default="--devices-per-node 8 --inter-node-gbps 40 "
                                "--inter-node-latency-us 6 --m-sizes " + ",".join(str(2 ** i) for i in range(4, 14)) +
                                ",32768,131072",
                                help="more pase-calibrate options")
    measure_parser.add_argument("--skip-steps", action="store_true")
    report_parser = sub.choices["report"]
    report_parser.add_argument("--pase-calibrate", default=os.path.join(ROOT, "build", "pase-calibrate"))
    report_parser.add_argument("--machine", default=SOLVE_MACHINE, help="the public-spec profile to compare")
    report_parser.add_argument("--profile", help="the measured profile (default DIR/measured.json)")
    report_parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    args.dir = os.path.abspath(args.dir)
    {"prepare": prepare, "measure": measure, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
