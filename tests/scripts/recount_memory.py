#!/usr/bin/env python3
"""Recounts every plan's bytes per device from its strategy file alone.

An independent check of docs/memory.md and docs/training.md: it reads only
the strategy file (each layer's configuration, the shape and split of each
tensor it holds, its `recompute` and `zero`, and the file's dtype and
optimizer) and counts, as the documents state them:

  weights      per weight of every layer: its tile of t elements, held
               whole (16 bytes with Adam, 12 with SGD, the dtype's alone
               without an optimizer) or, under ZeRO stage z, its sharded
               parts over r replicas, r = the layer's devices over the
               weight's pieces, x/r rounded up per weight;
  activations  every output of a layer that does not recompute and makes
               no scores inside a fused attention kernel (not a reshape's
               inner `NAME/ravel` view), and every data input a
               layer reads (an external tensor that is no weight), once
               per layer, x 4 bytes (fp32, tf32) or 2 (bf16, fp16).

It never imports or calls pase's code. Usage: recount_memory.py PASE
(runs pase on the zoo and a language model preset with each training
option, and checks every file's memory object).
"""
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Bytes per element of each part of a weight's state: (weight, gradient, master copy, optimizer moments).
def parts(dtype, optimizer):
    weight = 4 if dtype in ("fp32", "tf32") else 2
    if optimizer == "none":
        return weight, 0, 0, 0
    master = 4 if weight == 2 else 0
    return weight, weight, master, 8 if optimizer == "adam" else 4


def tile(shape, split):
    return math.prod(-(-size // parts_) for size, parts_ in zip(shape, split))


def weight_bytes(t, replicas, zero, state):
    weight, gradient, master, moments = state
    sharded = (master + moments if zero >= 1 else 0) + (gradient if zero >= 2 else 0) + (weight if zero >= 3 else 0)
    whole = weight + gradient + master + moments - sharded
    if replicas <= 1 or sharded == 0:
        return (whole + sharded) * t
    return whole * t + -(-(sharded * t) // replicas)


def recount(strategy):
    memory = strategy["memory"]
    state = parts(memory["dtype"], memory["optimizer"])
    a = state[0]
    zero_default = strategy.get("training", {}).get("zero", 0)
    outputs = {layer["name"] for layer in strategy["layers"]}
    weights = activations = 0
    for layer in strategy["layers"]:
        devices = math.prod(layer["config"])
        names = {w["name"] for w in layer["weights"]}
        for w in layer["weights"]:
            pieces = math.prod(w["split"])
            weights += weight_bytes(tile(w["shape"], w["split"]), devices // pieces, layer.get("zero", zero_default), state)
        view = layer["op"] == "reshape" and layer["name"].endswith("/ravel")
        if not view and not layer.get("recompute", False) and not layer.get("fused_attention", False):
            activations += a * sum(tile(o["shape"], o["split"]) for o in layer["outputs"])
        seen = set()
        for i in layer["inputs"]:
            ref = i["tensor"]
            produced = ref in outputs or ref.rsplit(":", 1)[0] in outputs
            if produced or ref in names or ref in seen:
                continue
            seen.add(ref)
            activations += a * tile(i["shape"], i["split"])
    return weights, activations


def run(pase, args):
    result = subprocess.run([pase] + args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("pase " + " ".join(args) + " failed: " + result.stderr)
    return result.stdout


def main():
    pase = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        gpt = os.path.join(tmp, "gpt2-xl.json")
        with open(gpt, "w") as f:
            f.write(run(pase, ["models", "export", "gpt2-xl", "--batch", "16"]))
        llama = os.path.join(tmp, "llama.json")
        with open(llama, "w") as f:
            f.write(run(pase, ["models", "export", "llama", "--layers", "4", "--d-model", "1024", "--heads", "16",
                               "--kv-heads", "4", "--ff", "2816", "--seq", "512", "--vocab", "32000", "--batch", "16"]))
        graphs = [os.path.join(ROOT, "data/graphs", g) for g in ("alexnet.json", "transformer.json", "rnnlm.json")]
        options = [[], ["--zero", "1"], ["--zero", "3", "--dtype", "bf16"],
                   ["--micro-batches", "2", "--recompute", "full", "--zero", "2", "--optimizer", "sgd"],
                   ["--recompute", "full", "--optimizer", "none", "--zero", "3"],
                   ["--attention", "fused", "--micro-batches", "2", "--dtype", "bf16"]]
        cases = [(g, 8, o) for g in graphs + [gpt, llama] for o in options]
        cases.append((gpt, 64, ["--cost-model", "calibrated", "--machine", "dgx-a100", "--dtype", "bf16", "--zero", "1",
                                "--micro-batches", "4", "--recompute", "full", "--memory-per-device", "machine"]))
        # Each layer's recomputation and stage chosen by the solver, under caps that make them differ.
        cases.append((graphs[1], 8, ["--dtype", "bf16", "--zero", "auto", "--recompute", "auto",
                                     "--memory-per-device", "1GiB", "--cap-gap", "0.01"]))
        cases.append((gpt, 64, ["--cost-model", "calibrated", "--machine", "dgx-a100", "--dtype", "bf16", "--zero", "auto",
                                "--micro-batches", "4", "--recompute", "auto", "--memory-per-device", "machine"]))
        failed = 0
        for graph, devices, extra in cases:
            strategy = json.loads(run(pase, ["solve", graph, "--devices", str(devices), "--json", "--no-plan"] + extra))
            memory = strategy["memory"]
            weights, activations = recount(strategy)
            name = os.path.basename(graph) + " p=" + str(devices) + " " + " ".join(extra)
            if (weights, activations) != (memory["weights_bytes"], memory["activations_bytes"]):
                failed += 1
                print("MISMATCH " + name + ": recounted weights " + str(weights) + ", activations " + str(activations) +
                      "; the file says " + str(memory["weights_bytes"]) + ", " + str(memory["activations_bytes"]))
            else:
                print("ok " + name + ": " + str(weights + activations) + " bytes")
        print(str(len(cases)) + " plans recounted, " + str(failed) + " differ")
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
