"""One rank of the DTensor checks (test_dtensor.py): for each job, the model
with a plan applied, one forward and backward step, and rank 0's results on
disk. One set of processes runs every job: starting PyTorch and
transformers four times over is most of a job's time."""
import datetime
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.experimental import implicit_replication
from torch.distributed.tensor.parallel import parallelize_module

import pase
import torch_models


def run(rank, world, store, jobs, device="cpu", attention="eager"):
    """Runs `jobs`, each (model name, plan path, "dtensor" or "parallelize", report path).
    On `device` "cuda", every rank uses the one GPU there is (gloo copies through the host)."""
    dist.init_process_group("gloo", rank=rank, world_size=world, init_method=f"file://{store}",
                            timeout=datetime.timedelta(seconds=300))
    try:
        if device == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.cuda.set_device(0)
        for name, plan_path, mode, report_path in jobs:
            report = (applied_step if mode == "dtensor" else parallelized_step)(name, plan_path, device, attention)
            if rank == 0:
                torch.save(report, report_path)
            dist.barrier()  # no rank starts the next job, or leaves, while another may still talk to it
    finally:
        dist.destroy_process_group()


def applied_step(name, plan_path, device, attention):
    """The step with pase.apply_dtensor."""
    model = torch_models.build(name, attention).to(device)
    plan = pase.read_plan(plan_path)
    mesh = init_device_mesh(device, plan.mesh.shape, mesh_dim_names=plan.mesh.axes)
    applied = pase.apply_dtensor(model, plan, mesh)
    inputs = {n: value.to(device) for n, value in torch_models.inputs(name).items()}
    batch = pase.distribute_inputs(plan, inputs, mesh)
    # Tensors the model makes in forward (positions, masks) are plain:
    # replicated, as the plan has them.
    with implicit_replication():
        loss = torch_models.loss(model, batch)
        loss.backward()
    return {"loss": loss.item(), "grads": gathered_grads(model), "skipped": applied.skipped,
            "hooked": applied.hooked, "replicated": applied.replicated, "local": applied.local,
            "placements": {n: [repr(p) for p in ps] for n, ps in applied.placements.items()}}


def parallelized_step(name, plan_path, device, attention):
    """The step with the plan as parallelize_module styles (pase.parallelize_plan)."""
    model = torch_models.build(name, attention).to(device)
    plan = pase.read_plan(plan_path)
    mesh = init_device_mesh(device, plan.mesh.shape, mesh_dim_names=plan.mesh.axes)
    tp = pase.parallelize_plan(plan, model)
    parallelize_module(model, mesh, tp.styles)
    inputs = {n: value.to(device) for n, value in torch_models.inputs(name).items()}
    loss = torch_models.loss(model, inputs)
    loss.backward()
    return {"loss": loss.item(), "grads": gathered_grads(model), "skipped": [], "replicated": tp.replicated,
            "styles": {path: type(style).__name__ for path, style in tp.styles.items()}}


def gathered_grads(model):
    return {n: (p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad).cpu()
            for n, p in model.named_parameters()}
