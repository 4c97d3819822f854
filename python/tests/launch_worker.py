"""One rank of the launch recipe's check (test_launch.py): the recipe pase
wrote, imported as a module, applied to stage_gpt's model under its mesh,
one step of its schedule, and the step's loss and gradients on disk."""
import datetime
import importlib.util

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor

import stage_gpt

# What checkpoint_wrapper puts into a parameter's name.
WRAPPED = "_checkpoint_wrapped_module."


def load_recipe(path):
    spec = importlib.util.spec_from_file_location("recipe", path)
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    return recipe


def run(rank, world, store, jobs):
    """Runs `jobs`, each (recipe path, report path prefix)."""
    dist.init_process_group("gloo", rank=rank, world_size=world, init_method=f"file://{store}",
                            timeout=datetime.timedelta(seconds=300))
    try:
        for recipe_path, report_prefix in jobs:
            step(load_recipe(recipe_path), report_prefix)
            dist.barrier()
    finally:
        dist.destroy_process_group()


def step(recipe, report_prefix):
    mesh = recipe.make_mesh("cpu")
    module, stage = recipe.parallelize(stage_gpt.build(), mesh)
    pp, last = mesh["pp"].get_local_rank(), recipe.PIPELINE_STAGES - 1
    batch = recipe.local_batch(stage_gpt.tokens(), mesh)
    losses = []
    if stage is None:  # one stage: accumulate the micro-batches by hand
        for micro_batch in batch.chunk(recipe.MICRO_BATCHES):
            loss = stage_gpt.loss_fn(module(micro_batch), micro_batch) / recipe.MICRO_BATCHES
            loss.backward()
            losses.append(loss.detach() * recipe.MICRO_BATCHES)
    else:
        schedule = recipe.schedule(stage, stage_gpt.loss_fn)
        if pp == 0:
            schedule.step(batch)
        elif pp == last:
            schedule.step(target=batch, losses=losses)
        else:
            schedule.step()
    # Every rank of the stage gathers (a collective), one writes.
    grads = {name.replace(WRAPPED, ""): (p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad)
             for name, p in module.named_parameters()}
    loss = torch.stack(losses).mean() if losses else torch.zeros(())
    dist.all_reduce(loss, group=mesh["dp"].get_group())
    if mesh["dp"].get_local_rank() == 0 and mesh["tp"].get_local_rank() == 0:
        report = {"grads": grads, "styles": {}}
        if pp == last:
            report["loss"] = loss.item() / recipe.DATA_PARALLEL
        torch.save(report, f"{report_prefix}.stage{pp}.pt")
