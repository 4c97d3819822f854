#!/usr/bin/env python3
"""What XLA's SPMD partitioner really communicates for pase's plans, against
what pase prices (run on demand; docs/plans.md, "Checked against XLA's
collectives", has the last table).

For the seven plans of python/tests/test_jax.py (a small LLaMA and a GPT,
AlexNet and ResNet-101 at small images, on 8 host devices) it compiles the training step with the plan's shardings,
reads every collective of the compiled HLO and attributes it to the layer
whose ops it serves (python/tests/hlo_collectives.py), and sets beside it,
layer by layer, what `pase explain --all --json` prices for that layer: its
all-reduces and its in-edges' redistribution, in elements moved per device
(a cost over r = 8000·F/B FLOP per word, docs/formats.md). Forward and
backward are kept apart: half of each edge is forward and half backward; a
term that `explain` calls a gradient's (input-, weight- and a norm's
parameter-gradient all-reduces) is backward, the others (an output
all-reduce, a softmax's reductions, the loss's transfer) forward.

    PASE_EXE=build/pase python scripts/hlo_comparison.py [--layers]

Needs the Python of scripts/python-env.sh (JAX).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "python"), os.path.join(HERE, "..", "python", "tests")]

import jax  # noqa: E402
import pase  # noqa: E402
import graph_jax  # noqa: E402
import hlo_collectives  # noqa: E402
from support import ALEXNET, GPT_TIED, LLAMA, run_pase  # noqa: E402

# ResNet-101 at 16x16 (the JAX check runs it at 8x8): the image the table in docs/plans.md was made at.
RESNET = ["resnet101", "--image", "16", "--batch", "32"]

FLOPS_TFLOPS = 10.0  # pase's default peak, which these runs keep

# (graph, label, command, options): the plans of test_jax.py, each with its bandwidth stated.
PLANS = [("llama", "optimum at 200 GB/s", "solve", ["--bandwidth", "200"]),
         ("llama", "Megatron", "evaluate", ["--baseline", "megatron", "--bandwidth", "16"]),
         ("llama", "Megatron + SP", "evaluate", ["--baseline", "megatron", "--sequence-parallel", "--bandwidth", "16"]),
         ("gpt", "optimum at 200 GB/s", "solve", ["--bandwidth", "200"]),
         ("gpt", "Megatron", "evaluate", ["--baseline", "megatron", "--bandwidth", "16"]),
         ("alexnet", "optimum at 16 GB/s", "solve", ["--bandwidth", "16"]),
         ("resnet", "data parallel", "evaluate", ["--baseline", "data-parallel", "--bandwidth", "16"])]


def priced(graph_path, plan_path, options):
    """Per layer, what pase prices: forward and backward elements moved per device."""
    bandwidth = float(options[options.index("--bandwidth") + 1])
    r = 8000 * FLOPS_TFLOPS / bandwidth
    explain = json.loads(run_pase("explain", graph_path, "--strategy", plan_path, "--all", "--json",
                                  "--bandwidth", str(bandwidth)).stdout)
    out = collections.defaultdict(lambda: [0.0, 0.0])
    for layer in explain["layers"]:
        for term in layer["chosen"]["terms"]:
            words = term["cost"] / r
            if term["kind"] == "in-edge":
                out[layer["name"]][0] += words / 2
                out[layer["name"]][1] += words / 2
            elif term["kind"] in ("all-reduce", "transfer"):
                backward = "gradient" in term["what"]
                out[layer["name"]][1 if backward else 0] += words
    return out


def measured(graph, plan):
    """Per layer (None: no layer's scope), XLA's forward and backward elements moved per device."""
    shardings = pase.jax_shardings(plan)
    params = {n: jax.device_put(v, shardings.params[n]) for n, v in graph_jax.random_params(plan).items()}
    inputs = {n: jax.device_put(v, shardings.inputs[n])
              for n, v in graph_jax.random_inputs(graph).items()}
    replicated = jax.sharding.NamedSharding(shardings.mesh, jax.sharding.PartitionSpec())
    step = jax.jit(jax.value_and_grad(lambda p, i: graph_jax.run(graph, p, i, shardings)),
                   out_shardings=(replicated, shardings.params))
    text = step.lower(params, inputs).compile().as_text()
    out = collections.defaultdict(lambda: [0.0, 0.0])
    kinds = collections.Counter()
    for c in hlo_collectives.collectives(text, [node["name"] for node in graph["nodes"]]):
        out[c.layer][1 if c.backward else 0] += c.moved
        kinds[c.kind] += c.moved
    return out, kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", action="store_true", help="also print the per-layer table of each plan")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        graphs = {}
        for name, model in (("llama", LLAMA), ("gpt", GPT_TIED), ("alexnet", ALEXNET), ("resnet", RESNET)):
            path = os.path.join(folder, name + ".json")
            run_pase("models", "export", *model, "-o", path)
            with open(path, encoding="utf-8") as f:
                graphs[name] = (path, json.load(f))
        for k, (name, label, command, options) in enumerate(PLANS):
            graph_path, graph = graphs[name]
            plan_path = os.path.join(folder, f"plan{k}.json")
            run_pase(command, graph_path, "--devices", "8", *options, "--mesh", "auto", "--out", plan_path)
            plan = pase.read_plan(plan_path)
            model = priced(graph_path, plan_path, options)
            xla, kinds = measured(graph, plan)
            rows.append((f"{name}, {label}", model, xla, kinds))
    print("| plan | pase forward | XLA forward | pase backward | XLA backward | XLA by kind |")
    print("|---|---|---|---|---|---|")
    for label, model, xla, kinds in rows:
        sums = [sum(v[d] for v in model.values()) for d in (0, 1)], [sum(v[d] for v in xla.values()) for d in (0, 1)]
        by_kind = ", ".join(f"{kind} {moved / 1e3:.0f}k" for kind, moved in kinds.most_common())
        print(f"| {label} | {sums[0][0] / 1e3:.0f}k | {sums[1][0] / 1e3:.0f}k | {sums[0][1] / 1e3:.0f}k | "
              f"{sums[1][1] / 1e3:.0f}k | {by_kind} |")
    if args.layers:
        for label, model, xla, _ in rows:
            print(f"\n{label}\n| layer | pase fwd | XLA fwd | pase bwd | XLA bwd |\n|---|---|---|---|---|")
            for layer in sorted(set(model) | set(xla), key=lambda n: (n is None, str(n))):
                m, x = model.get(layer, [0, 0]), xla.get(layer, [0, 0])
                if any(m) or any(x):
                    print(f"| {layer or '(no layer)'} | {m[0]:.0f} | {x[0]:.0f} | {m[1]:.0f} | {x[1]:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
