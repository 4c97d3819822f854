"""pase's plans as Python objects, and the shardings JAX and PyTorch's DTensor apply them with.

The package reads the strategy files `pase solve --out FILE` writes (with a
plan: a mesh and each tensor's layout) and drives the `pase` binary to solve;
it reimplements nothing of the solver. docs/python.md in the repository is
its reference.
"""
from .plan import Checkpoint, Input, Layer, Mesh, Plan, PlanError, TensorLayout, Weight, WeightReshard, read_plan
from .solver import SolveError, find_pase, solve
from .jax_plan import JaxShardings, jax_shardings, partition_spec_entries
from .torch_plan import (DTensorApplication, ParallelizePlan, apply_dtensor, distribute_inputs, dtensor_placements,
                         parallelize_plan, spec_for_shape)

__all__ = [
    "Checkpoint", "DTensorApplication", "Input", "ParallelizePlan", "JaxShardings", "Layer", "Mesh", "Plan", "PlanError", "SolveError", "TensorLayout", "Weight",
    "WeightReshard",
    "apply_dtensor", "distribute_inputs", "dtensor_placements", "find_pase", "jax_shardings",
    "parallelize_plan", "partition_spec_entries", "read_plan", "solve", "spec_for_shape",
]
