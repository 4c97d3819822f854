#!/usr/bin/env python3
"""The Python package's framework checks on a machine with a GPU (run on
demand; CI has no GPU and never runs it). docs/python.md, "On a GPU", has the
last results.

It runs, with whatever JAX and PyTorch that machine has:
1. the three ctest checks of python/tests as they are (JAX on 8 host CPU
   devices, DTensor on 4 gloo ranks on the CPU);
2. the same four DTensor plans with every rank's model on the one GPU
   (gloo passes the collectives through the host), with eager attention and
   with Hugging Face's default `sdpa`, against the single-process step on
   the GPU (TF32 off);
3. the JAX checks' unsharded step on the GPU against the same step on the CPU.

    PASE_EXE=build/pase python3 scripts/gpu_framework_checks.py [--out DIR]

Prints a table last; writes the full log lines to DIR/gpu_framework_checks.json.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "python", "tests")
sys.path[:0] = [os.path.join(HERE, "..", "python"), TESTS]

TOLERANCE = 1e-4


def unittest_module(module, extra_env):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path[:2]), PYTHONDONTWRITEBYTECODE="1", **extra_env)
    started = time.time()
    result = subprocess.run([sys.executable, "-m", "unittest", module], cwd=TESTS, env=env, capture_output=True,
                            text=True)
    tail = [line for line in result.stderr.splitlines() if line.startswith(("Ran ", "OK", "FAILED"))]
    if result.returncode != 0:
        print(result.stderr[-4000:], file=sys.stderr)
    return {"check": f"ctest's {module}", "ok": result.returncode == 0, "seconds": round(time.time() - started, 1),
            "detail": " ".join(tail)}


def dtensor_plans(folder):
    """The four plans of test_dtensor.py, solved from the models' ONNX exports."""
    import torch_models
    from support import run_pase

    cases = [("gpt2", "solve", ["--bandwidth", "1000", "--mesh", "tp=4"]),
             ("gpt2", "solve", ["--bandwidth", "200", "--mesh", "tp=4"]),
             ("llama", "solve", ["--bandwidth", "1000", "--mesh", "tp=4"]),
             ("llama", "evaluate", ["--baseline", "data-parallel", "--mesh", "dp=4"])]
    exported, plans = {}, []
    for k, (name, command, options) in enumerate(cases):
        if name not in exported:
            exported[name] = os.path.join(folder, name + ".onnx")
            torch_models.export(name, exported[name])
        path = os.path.join(folder, f"plan{k}.json")
        run_pase(command, exported[name], "--devices", "4", *options, "--out", path)
        plans.append((name, " ".join([command] + options), path))
    return plans


def dtensor_on_gpu(name, label, plan_path, attention, folder):
    import torch
    import torch.multiprocessing as mp
    import dtensor_worker
    import torch_models

    run = tempfile.mkdtemp(dir=folder)
    check = {"check": f"DTensor on the GPU: {name} {label}, {attention} attention"}
    started = time.time()
    try:
        report_path = os.path.join(run, "rank0.pt")
        mp.spawn(dtensor_worker.run, args=(4, os.path.join(run, "store"), [(name, plan_path, "dtensor", report_path)],
                                           "cuda", attention), nprocs=4)
        report = torch.load(report_path)
        torch.backends.cuda.matmul.allow_tf32 = False
        model = torch_models.build(name, attention).cuda()
        inputs = {n: v.cuda() for n, v in torch_models.inputs(name).items()}
        loss = torch_models.loss(model, inputs)
        loss.backward()
        worst = max(float((report["grads"][n] - p.grad.cpu()).abs().max() / p.grad.abs().max())
                    for n, p in model.named_parameters())
        loss_error = abs(report["loss"] - loss.item()) / abs(loss.item())
        check.update(ok=worst <= TOLERANCE and loss_error <= TOLERANCE and not report["skipped"],
                     detail=f"loss error {loss_error:.1e}, worst gradient error {worst:.1e} of its largest entry")
    except Exception as error:  # a library that refuses: its last line is the finding
        check.update(ok=False, detail=last_line(error))
    check["seconds"] = round(time.time() - started, 1)
    return check


def jax_on_gpu(name, args):
    """The JAX checks' unsharded step of a graph on the GPU against the CPU."""
    import jax
    import jax.numpy as jnp
    import graph_jax
    import pase
    from support import Scratch

    check = {"check": f"JAX's unsharded step on the GPU: {name}"}
    started = time.time()
    try:
        jax.config.update("jax_default_matmul_precision", "highest")
        scratch = Scratch()
        graph_path = scratch.model(name + ".json", args)
        with open(graph_path, encoding="utf-8") as f:
            graph = json.load(f)
        plan = pase.solve(graph_path, 1, [])
        results = {}
        for platform in ("cpu", "gpu"):
            device = jax.devices(platform)[0]
            params = jax.device_put(graph_jax.random_params(plan), device)
            inputs = jax.device_put(graph_jax.random_inputs(graph, graph["nodes"][0]["vocab"]), device)
            step = jax.jit(jax.value_and_grad(lambda p, i: graph_jax.run(graph, p, i)))
            results[platform] = jax.device_get(step(params, inputs))
        (loss_cpu, grads_cpu), (loss_gpu, grads_gpu) = results["cpu"], results["gpu"]
        worst = max(float(jnp.max(jnp.abs(grads_gpu[n] - grads_cpu[n])) / jnp.max(jnp.abs(grads_cpu[n])))
                    for n in grads_cpu)
        loss_error = abs(float(loss_gpu) - float(loss_cpu)) / abs(float(loss_cpu))
        check.update(ok=worst <= TOLERANCE and loss_error <= TOLERANCE,
                     detail=f"on {jax.devices('gpu')[0].device_kind}: loss error {loss_error:.1e}, "
                            f"worst gradient error {worst:.1e}")
        scratch.close()
    except Exception as error:
        check.update(ok=False, detail=last_line(error))
    check["seconds"] = round(time.time() - started, 1)
    return check


def last_line(error):
    traceback.print_exc()
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[-1] if lines else ''}"[:300]


def versions():
    import importlib.metadata as metadata
    out = {}
    for package in ("torch", "jax", "jaxlib", "transformers", "onnx", "onnxscript", "numpy"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    import torch
    out["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    import support

    found = versions()
    print(json.dumps(found), flush=True)
    checks = [unittest_module("test_plan", {}),
              unittest_module("test_jax", {"JAX_PLATFORMS": "cpu", "PASE_REQUIRE_JAX": "1",
                                           "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}),
              unittest_module("test_dtensor", {"PASE_REQUIRE_TORCH": "1"})]
    with tempfile.TemporaryDirectory() as folder:
        for name, label, path in dtensor_plans(folder):
            for attention in ("eager", "sdpa"):
                checks.append(dtensor_on_gpu(name, label, path, attention, folder))
                print(json.dumps(checks[-1]), flush=True)
    for name, graph_args in (("llama", support.LLAMA), ("gpt", support.GPT_TIED)):
        checks.append(jax_on_gpu(name, graph_args))
    with open(os.path.join(args.out, "gpu_framework_checks.json"), "w", encoding="utf-8") as f:
        json.dump({"versions": found, "checks": checks}, f, indent=1)
    print("\n| check | result | seconds | detail |\n|---|---|---|---|")
    for check in checks:
        print(f"| {check['check']} | {'ok' if check['ok'] else 'FAILED'} | {check['seconds']} | {check['detail']} |")
    return 0 if all(check["ok"] for check in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
