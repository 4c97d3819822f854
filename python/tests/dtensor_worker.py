"""One rank of a DTensor check (test_dtensor.py): the model with the plan
applied, one forward and backward step, and rank 0's results on disk."""
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.experimental import implicit_replication

import pase
import torch_models


def step(rank, world, folder, name, plan_path):
    dist.init_process_group("gloo", rank=rank, world_size=world, init_method=f"file://{folder}/store")
    try:
        model = torch_models.build(name)
        plan = pase.read_plan(plan_path)
        mesh = init_device_mesh("cpu", plan.mesh.shape, mesh_dim_names=plan.mesh.axes)
        applied = pase.apply_dtensor(model, plan, mesh)
        batch = pase.distribute_inputs(plan, torch_models.inputs(name), mesh)
        # Tensors the model makes in forward (positions, masks) are plain:
        # replicated, as the plan has them.
        with implicit_replication():
            loss = torch_models.loss(model, batch)
            loss.backward()
        grads = {n: p.grad.full_tensor() for n, p in model.named_parameters()}
        if rank == 0:
            torch.save({"loss": loss.item(), "grads": grads, "skipped": applied.skipped,
                        "hooked": applied.hooked, "replicated": applied.replicated,
                        "placements": {n: [repr(p) for p in ps] for n, ps in applied.placements.items()}},
                       os.path.join(folder, "rank0.pt"))
        dist.barrier()  # no rank leaves while another may still talk to it
    finally:
        dist.destroy_process_group()
