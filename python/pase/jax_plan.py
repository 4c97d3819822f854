"""A plan's layouts as JAX shardings: one NamedSharding per weight, graph
input and layer output, over a Mesh of the plan's shape and axis names."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from .plan import Plan, PlanError, TensorLayout


def partition_spec_entries(layout: TensorLayout) -> list:
    """PartitionSpec's entries: None, an axis name, or a tuple of names major first."""
    return [None if not axes else axes[0] if len(axes) == 1 else tuple(axes) for axes in layout.spec]


@dataclass
class JaxShardings:
    mesh: Any                          # jax.sharding.Mesh
    params: Dict[str, Any]             # weight name -> NamedSharding
    inputs: Dict[str, Any]             # graph input name -> NamedSharding
    outputs: Dict[str, List[Any]]      # layer name -> a NamedSharding per output
    # layer name -> {weight name: NamedSharding}: a tied weight that layer reads
    # in another layout than it is held in; constrain the weight to it there.
    reshards: Dict[str, Dict[str, Any]]


def jax_shardings(plan: Plan, devices: Optional[Sequence[Any]] = None) -> JaxShardings:
    """The plan's shardings over `devices` (default jax.devices()): plan device
    id i is devices[i], so the mesh keeps the plan's row-major order and its
    node grouping (docs/plans.md, "Plan fields of the strategy file")."""
    import numpy as np
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = list(jax.devices() if devices is None else devices)
    needed = plan.mesh.devices
    if len(devices) < needed:
        raise PlanError(f"the plan's mesh has {needed} devices, {len(devices)} given")
    grid = np.empty(needed, dtype=object)
    grid[:] = devices[:needed]
    mesh = Mesh(grid.reshape(plan.mesh.shape), plan.mesh.axes)

    def sharding(layout: TensorLayout) -> Any:
        return NamedSharding(mesh, PartitionSpec(*partition_spec_entries(layout)))

    reshards: Dict[str, Dict[str, Any]] = {}
    for reshard in plan.weight_reshards():
        reshards.setdefault(reshard.layer, {})[reshard.weight] = sharding(reshard.layout)
    return JaxShardings(
        mesh=mesh,
        params={name: sharding(layout) for name, layout in plan.weights().items()},
        inputs={name: sharding(layout) for name, layout in plan.graph_inputs().items()},
        outputs={name: [sharding(layout) for layout in layouts] for name, layouts in plan.outputs().items()},
        reshards=reshards)
