#!/usr/bin/env python3
"""The simulated step against the additive one, and the simulator's speed, on
demand (not part of the tests; docs/simulate.md).

Part 1: `pase solve G --simulate` on the zoo and the ONNX fixtures (8 GPUs of
a dgx-a100, bf16, 2 micro-batches, every gradient all-reduce listed whole:
--gradient-overlap off, so the simulator has something to hide), and on the
language-model presets with pipeline stages. Each row: the tasks, the
simulated step, the additive one (or the pipeline's formula), their
difference, the simulation's tasks a second and the command's seconds.

Part 2: FlexFlow's search on the simulated step (`compare --simulate`, the
mcmc-simulated row) with the delta simulation and with the full one, the
same chain either way: the tasks re-timed a move and the search's seconds.

    bench/simulate_bench.py [--pase build/pase] [--parts zoo,onnx,llm,mcmc] [--timeout 600]
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MACHINE = ["--machine", "dgx-a100", "--dtype", "bf16"]

# name: (model export arguments, devices, solve options)
LLM_CASES = {
    "gpt3-175b 1024 GPUs, 8 stages 1f1b": (["gpt3-175b", "--batch", "1536"], 1024,
                                          ["--pipeline-stages", "8", "--micro-batches", "96", "--zero", "1",
                                           "--recompute", "full"]),
    "gpt3-175b 1024 GPUs, 8 stages interleaved:4": (["gpt3-175b", "--batch", "1536"], 1024,
                                                    ["--pipeline-stages", "8", "--schedule", "interleaved:4",
                                                     "--micro-batches", "24", "--zero", "1", "--recompute", "full"]),
    "llama2-70b 64 GPUs, 4 stages": (["llama2-70b", "--batch", "512"], 64,
                                     ["--pipeline-stages", "4", "--micro-batches", "64", "--zero", "1",
                                      "--recompute", "full", "--memory-per-device", "machine"]),
    "gpt3-13b 64 GPUs, ZeRO-3, no stages": (["gpt3-13b", "--batch", "256"], 64,
                                            ["--micro-batches", "4", "--zero", "3", "--gradient-overlap", "off"]),
}


def run(command, timeout):
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    return done, time.monotonic() - started


def number_after(text, label):
    match = re.search(re.escape(label) + r"\s*([0-9.eE+-]+)", text)
    return float(match.group(1)) if match else float("nan")


def simulated_row(name, done, seconds):
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        print(f"{name:44s} refused: {last[:100]}")
        return
    out = done.stdout
    tasks = re.search(r": (\d+) tasks, ", out)
    simulated = number_after(out, "simulated step")
    additive = number_after(out, "the additive model's")
    if additive != additive:  # NaN: a pipeline
        additive = number_after(out, "the pipeline's formula (docs/pipeline.md)")
    rate = re.search(r"\(([0-9.e+]+) tasks a second\)", out)
    print(f"{name:44s} {int(tasks.group(1)) if tasks else 0:8d} {simulated:12.6g} {additive:12.6g} "
          f"{100 * (simulated - additive) / additive:+7.2f}% {float(rate.group(1)) if rate else 0:10.3g} {seconds:8.2f}")


def header():
    print(f"{'case':44s} {'tasks':>8s} {'simulated':>12s} {'additive':>12s} {'diff':>8s} {'tasks/s':>10s} {'seconds':>8s}")


def zoo(pase, timeout):
    print("\nzoo, 8 GPUs (dgx-a100, bf16, 2 micro-batches, --gradient-overlap off), the optimum simulated")
    header()
    for name in ["alexnet", "inception3", "resnet101", "rnnlm", "transformer"]:
        graph = os.path.join(ROOT, "data", "graphs", name + ".json")
        done, seconds = run([pase, "solve", graph, "--devices", "8", *MACHINE, "--micro-batches", "2",
                             "--gradient-overlap", "off", "--simulate"], timeout)
        simulated_row(name, done, seconds)


def onnx(pase, timeout):
    print("\nONNX fixtures, 8 GPUs (dgx-a100, bf16, --gradient-overlap off), the optimum simulated")
    header()
    folder = os.path.join(ROOT, "data", "onnx")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".onnx"):
            continue
        done, seconds = run([pase, "solve", os.path.join(folder, name), "--devices", "8", *MACHINE,
                             "--gradient-overlap", "off", "--simulate"], timeout)
        simulated_row(name, done, seconds)


def llm(pase, timeout, scratch):
    print("\nlanguage models (dgx-a100, bf16, 80 GB), the plan simulated")
    header()
    for name, (export, devices, options) in LLM_CASES.items():
        graph = os.path.join(scratch, export[0] + "-" + export[2] + ".json")
        if not os.path.exists(graph):
            subprocess.run([pase, "models", "export", *export, "-o", graph], check=True, capture_output=True)
        done, seconds = run([pase, "solve", graph, "--devices", str(devices), *MACHINE, *options, "--simulate"],
                            timeout)
        simulated_row(name, done, seconds)


def mcmc(pase, timeout, scratch):
    print("\nFlexFlow's search on the simulated step (compare --simulate, 20000 moves, seed 1)")
    print(f"{'case':44s} {'tasks':>8s} {'re-timed (delta)':>17s} {'delta s':>9s} {'full s':>9s} {'speed-up':>9s} {'same':>5s}")
    gpt = os.path.join(scratch, "gpt8.json")
    subprocess.run([pase, "models", "export", "gpt", "--layers", "8", "--d-model", "1024", "--heads", "16",
                    "--seq", "1024", "--vocab", "50257", "--batch", "64", "-o", gpt], check=True, capture_output=True)
    cases = {"alexnet, 8 GPUs, 2 micro-batches": (os.path.join(ROOT, "data", "graphs", "alexnet.json"), "2"),
             "transformer, 8 GPUs, 2 micro-batches": (os.path.join(ROOT, "data", "graphs", "transformer.json"), "2"),
             "gpt 8 x 1024, 8 GPUs, 8 micro-batches": (gpt, "8")}
    for name, (graph, micro_batches) in cases.items():
        rows = {}
        for mode in ["delta", "full"]:
            out = os.path.join(scratch, f"compare-{mode}.json")
            done, _ = run([pase, "compare", graph, "--devices", "8", *MACHINE, "--micro-batches", micro_batches,
                           "--gradient-overlap", "off", "--simulate", "--mcmc-simulation", mode,
                           "--mcmc-iterations", "20000", "--timings", "--json", out], timeout)
            if done.returncode != 0:
                print(f"{name:44s} refused: {done.stderr.strip()[:100]}")
                break
            for row in json.load(open(out))["results"][0]["strategies"]:
                if row["name"] == "mcmc-simulated":
                    rows[mode] = row
        if len(rows) < 2:
            continue
        note = rows["delta"]["note"]
        tasks = re.search(r"; (\d+) tasks, (\d+) re-timed", note)
        delta_s, full_s = rows["delta"]["search_seconds"], rows["full"]["search_seconds"]
        same = rows["delta"]["simulated_step"] == rows["full"]["simulated_step"]
        print(f"{name:44s} {tasks.group(1):>8s} {tasks.group(2):>17s} {delta_s:9.3f} {full_s:9.3f} "
              f"{full_s / delta_s:8.2f}x {'yes' if same else 'NO':>5s}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pase", default=os.path.join(ROOT, "build", "pase"))
    parser.add_argument("--parts", default="zoo,onnx,llm,mcmc")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    parts = args.parts.split(",")
    with tempfile.TemporaryDirectory() as scratch:
        if "zoo" in parts:
            zoo(args.pase, args.timeout)
        if "onnx" in parts:
            onnx(args.pase, args.timeout)
        if "llm" in parts:
            llm(args.pase, args.timeout, scratch)
        if "mcmc" in parts:
            mcmc(args.pase, args.timeout, scratch)


if __name__ == "__main__":
    main()
