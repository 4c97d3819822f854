#!/usr/bin/env python3
"""Times one training step of a GPT and of ResNet-50 in PyTorch, the steps
docs/calibration.md compares with the calibrated model's predictions.

    python3 scripts/torch_step.py --out steps.json [--device cuda] [--steps 20]
                                  [--cases gpt2-small:fp32,resnet50:bf16,...]

Each case is MODEL:DTYPE. The models are the ones `pase` prices:

- gpt2-small: the graph of `pase models export gpt --layers 12 --d-model 768
  --heads 12 --ff 3072 --seq 1024 --vocab 50304 --batch 8`, module for module:
  pre-norm blocks with biases, the fused q/k/v projection, attention
  materialised as two einsums and a softmax (with the causal mask and the
  1/sqrt(head size) scale applied in eager PyTorch, as GPT-2's own code does),
  GELU (tanh form, one fused kernel), learned positions, the output
  projection tied to the token table, and cross-entropy over every token.
  Adam (fused). gpt2-small-50257 is the same with GPT-2's own vocabulary,
  unpadded (`--vocab 50257`).
- resnet50: torchvision's ResNet-50 (`data/onnx/resnet50.onnx` was exported
  from it), batch 256 at 224x224, channels-last, SGD with momentum (fused),
  as NVIDIA's recipe trains it.

Dtypes: fp32 (TF32 off for both cuBLAS and cuDNN), tf32 (on for both), bf16
(autocast to bfloat16 around the forward pass, FP32 weights, no loss scaling:
bfloat16 needs none). Each case runs --warmup steps (cuDNN's autotuner
included), then --steps steps each timed with CUDA events; the median is
kept. Eager mode, no torch.compile: the model prices one kernel per op.

The result is JSON: {"device": ..., "torch": ..., "cases": [{"model",
"dtype", "batch", "median_ms", "min_ms", "max_ms", "peak_memory_gb"}, ...]}.
With `--kernels FILE` each case then runs --profiled steps more under
torch.profiler, and FILE gets the GPU kernels of one step (their mean):
{"about": ..., "cases": {"MODEL:DTYPE": [[kernel name, launches per step,
microseconds per step], ...]}}, longest first.
`--device cpu --tiny` runs every case at toy sizes, to check the script
without a GPU.
"""
import argparse
import collections
import json
import math
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

GPT2_SMALL = dict(layers=12, d_model=768, heads=12, ff=3072, seq=1024, vocab=50304, batch=8)
# GPT-2's own vocabulary, not padded to a multiple of 64: 16-bit tensor-core
# GEMMs need every leading dimension a multiple of 8 elements.
GPT2_SMALL_50257 = dict(GPT2_SMALL, vocab=50257)
GPT_TINY = dict(layers=2, d_model=64, heads=4, ff=256, seq=32, vocab=100, batch=2)


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, ff)
        self.mlp_proj = nn.Linear(ff, d)

    def forward(self, x, causal):
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        logits = torch.einsum("blhk,bmhk->bhlm", q, k) * (1.0 / math.sqrt(d // self.heads))
        weights = logits.masked_fill(causal, float("-inf")).softmax(-1)
        context = torch.einsum("bhlm,bmhk->blhk", weights, v).reshape(b, s, d)
        x = x + self.c_proj(context)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, layers, d_model, heads, ff, seq, vocab, batch):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(seq, d_model)
        self.h = nn.ModuleList(Block(d_model, heads, ff) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.register_buffer("causal", torch.ones(seq, seq, dtype=torch.bool).triu(1), persistent=False)
        self.register_buffer("positions", torch.arange(seq), persistent=False)

    def forward(self, ids, targets):
        x = self.wte(ids) + self.wpe(self.positions)
        for block in self.h:
            x = block(x, self.causal)
        logits = F.linear(self.ln_f(x), self.wte.weight)  # tied with the token table
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def gpt_case(device, tiny, size=GPT2_SMALL):
    size = GPT_TINY if tiny else size
    model = Gpt(**size).to(device)
    ids = torch.randint(0, size["vocab"], (size["batch"], size["seq"]), device=device)
    targets = torch.randint(0, size["vocab"], (size["batch"], size["seq"]), device=device)
    optimizer = make_optimizer(torch.optim.Adam, model, lr=1e-4)
    return model, (ids, targets), optimizer, size["batch"]


class Classifier(nn.Module):
    """A vision model and its loss, taking (images, labels) like the GPT."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, images, labels):
        return F.cross_entropy(self.net(images).float(), labels)


def resnet50_case(device, tiny):
    import torchvision

    batch, side = (2, 64) if tiny else (256, 224)
    model = Classifier(torchvision.models.resnet50()).to(device).to(memory_format=torch.channels_last)
    images = torch.randn(batch, 3, side, side, device=device).to(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (batch,), device=device)
    optimizer = make_optimizer(torch.optim.SGD, model, lr=0.1, momentum=0.9)
    return model, (images, labels), optimizer, batch


def make_optimizer(kind, model, **options):
    # The fused optimizers step every weight in one pass, as the model prices
    # it; older PyTorch or the CPU may lack them.
    try:
        return kind(model.parameters(), fused=True, **options)
    except (TypeError, RuntimeError, ValueError):
        return kind(model.parameters(), **options)


CASES = {"gpt2-small": gpt_case, "gpt2-small-50257": lambda device, tiny: gpt_case(device, tiny, GPT2_SMALL_50257),
         "resnet50": resnet50_case}


def set_dtype(dtype):
    allow = dtype == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = allow
    torch.backends.cudnn.allow_tf32 = allow
    torch.backends.cudnn.benchmark = True


def step(model, inputs, optimizer, dtype, device):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=dtype == "bf16"):
        loss = model(*inputs)
    loss.backward()
    optimizer.step()
    return loss


def time_steps(model, inputs, optimizer, dtype, device, warmup, steps):
    for _ in range(warmup):
        step(model, inputs, optimizer, dtype, device)
    times = []
    for _ in range(steps):
        if device.type == "cuda":
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step(model, inputs, optimizer, dtype, device)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        else:
            began = time.perf_counter()
            step(model, inputs, optimizer, dtype, device)
            times.append((time.perf_counter() - began) * 1e3)
    return times


def kernel_table(model, inputs, optimizer, dtype, device, steps):
    """The kernels of `steps` steps under torch.profiler, per step, read from
    its Chrome trace (the one format every recent PyTorch writes alike)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as profiler:
        for _ in range(steps):
            step(model, inputs, optimizer, dtype, device)
        if device.type == "cuda":
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "trace.json")
        profiler.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    wanted = ("kernel",) if device.type == "cuda" else ("cpu_op", None)  # without a GPU: the operators
    kernels = collections.defaultdict(lambda: [0, 0.0])
    for event in events:
        if event.get("cat") in wanted and "dur" in event:
            kernels[event["name"]][0] += 1
            kernels[event["name"]][1] += event["dur"]
    rows = [[name, count / steps, round(us / steps, 1)] for name, (count, us) in kernels.items()]
    return sorted(rows, key=lambda row: -row[2])


def run_case(name, dtype, device, args, kernels):
    set_dtype(dtype)
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    model, inputs, optimizer, batch = CASES[name](device, args.tiny)
    times = time_steps(model, inputs, optimizer, dtype, device, args.warmup, args.steps)
    peak = torch.cuda.max_memory_allocated() / 1e9 if device.type == "cuda" else None
    if args.kernels:
        kernels[name + ":" + dtype] = kernel_table(model, inputs, optimizer, dtype, device, args.profiled)
    del model, inputs, optimizer
    return {"model": name, "dtype": dtype, "batch": batch, "median_ms": statistics.median(times),
            "min_ms": min(times), "max_ms": max(times), "steps": len(times), "peak_memory_gb": peak}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--cases", default="gpt2-small:fp32,gpt2-small:tf32,gpt2-small:bf16,gpt2-small-50257:bf16,"
                                           "resnet50:fp32,resnet50:tf32,resnet50:bf16")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--tiny", action="store_true", help="toy sizes, to check the script")
    parser.add_argument("--kernels", help="also write the kernels of one step of each case here")
    parser.add_argument("--profiled", type=int, default=3, help="--kernels: steps profiled (default 3)")
    args = parser.parse_args()
    device = torch.device(args.device)
    result = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              "torch": torch.__version__, "cuda": torch.version.cuda, "cases": []}
    kernels = {}
    for case in args.cases.split(","):
        name, dtype = case.split(":")
        if name not in CASES or dtype not in ("fp32", "tf32", "bf16"):
            sys.exit("error: --cases: unknown case '%s' (models: %s; dtypes: fp32, tf32, bf16)" % (case, ", ".join(CASES)))
        row = run_case(name, dtype, device, args, kernels)
        print("%-16s %-4s batch %3d: median %8.2f ms (min %.2f, max %.2f)" % (
            name, dtype, row["batch"], row["median_ms"], row["min_ms"], row["max_ms"]), flush=True)
        result["cases"].append(row)
        with open(args.out, "w") as f:  # after every case: a later failure keeps the earlier ones
            json.dump(result, f, indent=1)
        if args.kernels:
            with open(args.kernels, "w") as f:
                json.dump({"about": "GPU kernels of one training step (the mean of %d, after the timed ones) under "
                                    "torch.profiler: [name, launches per step, microseconds per step]; "
                                    "scripts/torch_step.py on %s" % (args.profiled, result["device"]),
                           "cases": kernels}, f, indent=0)


if __name__ == "__main__":
    main()
