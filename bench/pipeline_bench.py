#!/usr/bin/env python3
"""Pipeline plans for the largest language models, on demand (not part of the
tests; docs/pipeline.md).

For each case it exports the graph, runs `pase solve --pipeline-stages` with
the case's options on a dgx-a100 in bf16 under the machine's memory, and
prints the plan (stages, tensor x data x context of the weight layers, read
back by `pase export --format megatron`), the step time, its lower bound and
gap, the largest stage's memory, the solve's seconds and the process's peak
resident memory. Beside it, the Megatron-style baseline priced by the same
model: `pase evaluate --baseline megatron` in Megatron-LM's equal stages
(`--pipeline-stages` and micro-batches of the plan found, tensor parallel 8
inside a node, ZeRO-1 and full recomputation where the case leaves them to
the search), and the ratio of the two steps. Cases over --timeout are printed as such.
The -layouts case prices every stage on its mesh's layouts (--mesh auto):
its plan is the step as priced. The -mb-auto case searches the micro-batch
count too (every divisor of the batch), -techniques-auto each layer's ZeRO
stage and recomputation, -all-auto all of them. The -splits cases search
every split of the GPUs among the stages in whole nodes (--stage-devices
auto): 256 GPUs in 3 stages (465 splits), 1024 in 8 (8.94e10, bounded
before any is listed).

    bench/pipeline_bench.py [--pase build/pase] [--cases 175b-1024,175b-1024-layouts,175b-1024-auto,175b-1024-mb-auto,
                            175b-1024-techniques-auto,175b-1024-all-auto,175b-3072-all-auto,1t-3072-all-auto,
                            175b-256-splits,175b-1024-splits,175b-1024-chunks,175b-3072,1t-3072]
                            [--timeout 1800]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (model export arguments, devices, solve options)
CASES = {
    "175b-1024": (["gpt3-175b", "--batch", "1536"], 1024,
                  ["--micro-batches", "96", "--zero", "1", "--recompute", "full", "--pipeline-stages", "8"]),
    "175b-1024-layouts": (["gpt3-175b", "--batch", "1536"], 1024,
                          ["--micro-batches", "96", "--zero", "1", "--recompute", "full", "--pipeline-stages", "8",
                           "--mesh", "auto"]),
    "175b-1024-auto": (["gpt3-175b", "--batch", "1536"], 1024,
                       ["--micro-batches", "96", "--zero", "1", "--recompute", "full", "--pipeline-stages", "auto"]),
    "175b-1024-mb-auto": (["gpt3-175b", "--batch", "1536"], 1024,
                          ["--micro-batches", "auto", "--zero", "1", "--recompute", "full", "--pipeline-stages", "auto"]),
    "175b-1024-techniques-auto": (["gpt3-175b", "--batch", "1536"], 1024,
                                  ["--micro-batches", "96", "--zero", "auto", "--recompute", "auto",
                                   "--pipeline-stages", "auto"]),
    "175b-1024-all-auto": (["gpt3-175b", "--batch", "1536"], 1024,
                           ["--micro-batches", "auto", "--zero", "auto", "--recompute", "auto",
                            "--pipeline-stages", "auto"]),
    "175b-3072-all-auto": (["gpt3-175b", "--batch", "1536"], 3072,
                           ["--micro-batches", "auto", "--zero", "auto", "--recompute", "auto",
                            "--pipeline-stages", "auto"]),
    "1t-3072-all-auto": (["gpt", "--layers", "128", "--d-model", "25600", "--heads", "160", "--ff", "102400", "--seq",
                          "2048", "--vocab", "50257", "--batch", "3072"], 3072,
                         ["--micro-batches", "auto", "--zero", "auto", "--recompute", "auto",
                          "--pipeline-stages", "auto"]),
    "175b-256-splits": (["gpt3-175b", "--batch", "1536"], 256,
                        ["--micro-batches", "64", "--zero", "1", "--recompute", "full", "--pipeline-stages", "3",
                         "--stage-devices", "auto"]),
    "175b-1024-splits": (["gpt3-175b", "--batch", "1536"], 1024,
                         ["--micro-batches", "96", "--zero", "1", "--recompute", "full", "--pipeline-stages", "8",
                          "--stage-devices", "auto"]),
    "175b-1024-chunks": (["gpt3-175b", "--batch", "1536"], 1024,
                         ["--micro-batches", "48", "--zero", "auto", "--recompute", "auto", "--pipeline-stages", "8",
                          "--schedule", "interleaved:2", "--chunks", "auto"]),
    "175b-3072": (["gpt3-175b", "--batch", "1536"], 3072,
                  ["--micro-batches", "96", "--zero", "1", "--recompute", "full", "--pipeline-stages", "auto"]),
    "1t-3072": (["gpt", "--layers", "128", "--d-model", "25600", "--heads", "160", "--ff", "102400", "--seq", "2048",
                 "--vocab", "50257", "--batch", "3072"], 3072,
                ["--micro-batches", "192", "--zero", "1", "--recompute", "full", "--pipeline-stages", "auto"]),
}
MACHINE = ["--machine", "dgx-a100", "--dtype", "bf16", "--memory-per-device", "machine"]


def run(cmd, timeout):
    """stdout, stderr and seconds of a command, or an exception past the timeout."""
    start = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-f", "peak-kb %M"] + cmd, capture_output=True, text=True,
                            timeout=timeout)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip().splitlines()[-2 if len(result.stderr.strip().splitlines()) > 1 else -1])
    return result.stdout, result.stderr, seconds


def peak_gb(stderr):
    for line in stderr.splitlines():
        if line.startswith("peak-kb "):
            return int(line.split()[1]) / 1e6
    return float("nan")


def plan_words(pase, strategy_file):
    flags = subprocess.run([pase, "export", strategy_file, "--format", "megatron"], capture_output=True, text=True,
                           check=True).stdout
    sizes = {}
    for line in flags.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].startswith("--") and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
        if line.startswith("# data parallel: "):
            sizes["data"] = int(line.split()[3])
    return "PP {} x TP {} x DP {}{}".format(sizes.get("--pipeline-model-parallel-size", 1),
                                           sizes.get("--tensor-model-parallel-size", 1), sizes.get("data", 1),
                                           " x CP {}".format(sizes["--context-parallel-size"])
                                           if "--context-parallel-size" in sizes else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pase", default=os.path.join(ROOT, "build", "pase"))
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            model, devices, options = CASES[name]
            graph = os.path.join(tmp, name + ".json")
            subprocess.run([args.pase, "models", "export"] + model + ["-o", graph], check=True)
            found = os.path.join(tmp, name + ".strategy.json")
            try:
                _, err, seconds = run([args.pase, "solve", graph, "--devices", str(devices), "-o", found] + MACHINE +
                                      options, args.timeout)
            except subprocess.TimeoutExpired:
                print("{}: over {:.0f} s".format(name, args.timeout))
                continue
            except RuntimeError as error:
                print("{}: {}".format(name, error))
                continue
            doc = json.load(open(found))
            pipeline = doc["training"].get("pipeline", {"stages": 1})
            step, bound = doc["total_cost"], doc["memory"]["lower_bound_cost"]
            print("{}: {} devices, {} micro-batches of {}: {}; step {:.4f} s, bound {:.4f} s (gap {:.3f}%), "
                  "largest stage {:.1f} GiB; solved in {:.1f} s, peak {:.2f} GB".format(
                      name, devices, doc["training"]["micro_batches"], doc["training"]["micro_batch_size"],
                      plan_words(args.pase, found), step, bound, 100 * (step - bound) / bound,
                      doc["memory"]["per_device_bytes"] / 2**30, seconds, peak_gb(err)))
            baseline = os.path.join(tmp, name + ".megatron.json")
            base_options = list(options)
            for searched in ("--stage-devices", "--chunks"):  # a baseline's stages and chunks are equal, not searched
                if searched in base_options:
                    del base_options[base_options.index(searched):base_options.index(searched) + 2]
            # Megatron-LM's equal stages: the plan's count, or the next that divides the devices.
            base_stages = pipeline["stages"]
            while devices % base_stages:
                base_stages += 1
            base_options[base_options.index("--pipeline-stages") + 1] = str(base_stages)
            # The plan's micro-batch count; Megatron-LM's distributed optimizer and full recomputation where the
            # search chose each layer's.
            base_options[base_options.index("--micro-batches") + 1] = str(doc["training"]["micro_batches"])
            for option, megatron in (("--zero", "1"), ("--recompute", "full")):
                if base_options[base_options.index(option) + 1] == "auto":
                    base_options[base_options.index(option) + 1] = megatron
            try:
                run([args.pase, "evaluate", graph, "--devices", str(devices), "--baseline", "megatron",
                     "--tensor-parallel", "8", "-o", baseline, "--json"] + MACHINE[:4] + base_options, args.timeout)
                base = json.load(open(baseline))
                print("    Megatron-style (PP {}, TP 8, equal stages): step {:.4f} s, largest stage {:.1f} GiB; "
                      "pase's plan is {:.2f}x faster".format(base_stages, base["total_cost"],
                                                             base["memory"]["per_device_bytes"] / 2**30,
                                                             base["total_cost"] / step))
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                print("    Megatron-style baseline: {}".format(error))


if __name__ == "__main__":
    main()
