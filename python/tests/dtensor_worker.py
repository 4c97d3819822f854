"""One rank of a DTensor check (test_dtensor.py): the model with the plan
applied, one forward and backward step, and rank 0's results on disk."""
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.experimental import implicit_replication

import pase
import torch_models


def step(rank, world, folder, name, plan_path, device="cpu", attention="eager"):
    """On `device` "cuda", every rank uses the one GPU there is (gloo copies through the host)."""
    dist.init_process_group("gloo", rank=rank, world_size=world, init_method=f"file://{folder}/store")
    try:
        if device == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.cuda.set_device(0)
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
        grads = {n: p.grad.full_tensor().cpu() for n, p in model.named_parameters()}
        if rank == 0:
            torch.save({"loss": loss.item(), "grads": grads, "skipped": applied.skipped,
                        "hooked": applied.hooked, "replicated": applied.replicated,
                        "placements": {n: [repr(p) for p in ps] for n, ps in applied.placements.items()}},
                       os.path.join(folder, "rank0.pt"))
        dist.barrier()  # no rank leaves while another may still talk to it
    finally:
        dist.destroy_process_group()


def step_parallelized(rank, world, folder, name, plan_path):
    """The same step with the plan as parallelize_module styles (pase.parallelize_plan)."""
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor.parallel import parallelize_module

    dist.init_process_group("gloo", rank=rank, world_size=world, init_method=f"file://{folder}/store")
    try:
        model = torch_models.build(name)
        plan = pase.read_plan(plan_path)
        mesh = init_device_mesh("cpu", plan.mesh.shape, mesh_dim_names=plan.mesh.axes)
        tp = pase.parallelize_plan(plan, model)
        parallelize_module(model, mesh, tp.styles)
        loss = torch_models.loss(model, torch_models.inputs(name))
        loss.backward()
        grads = {n: p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad
                 for n, p in model.named_parameters()}
        if rank == 0:
            torch.save({"loss": loss.item(), "grads": grads, "skipped": [], "styles": {
                path: type(style).__name__ for path, style in tp.styles.items()}, "replicated": tp.replicated},
                os.path.join(folder, "rank0.pt"))
        dist.barrier()
    finally:
        dist.destroy_process_group()
