"""A plan applied to a PyTorch module with DTensor: parameters distributed by
name with the plan's placements, and each weight layer's output
redistributed to the layout the plan gives it.

pase's mesh axes are the DeviceMesh's dimensions in order (x0 first); a
tensor dimension split over several axes is sharded major first, which is
DTensor's order when the axes come in mesh order (see dtensor_placements).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .plan import Plan, PlanError, TensorLayout
from .torch_local import localize, localize_pooling


def dtensor_placements(layout: TensorLayout, mesh_axes: Sequence[str], what: str = "tensor") -> list:
    """One DTensor placement per mesh axis: Shard(d) for the axis that splits
    dimension d, Replicate() for an axis that splits nothing."""
    from torch.distributed.tensor import Replicate, Shard

    placements: list = [Replicate() for _ in mesh_axes]
    for dim, axes in enumerate(layout.spec):
        order = [mesh_axes.index(axis) for axis in axes]
        if order != sorted(order):
            raise PlanError(f"{what}: dimension {dim} is split over {', '.join(axes)} (major first), "
                            f"against the mesh's order {', '.join(mesh_axes)}; DTensor shards in mesh order")
        for index in order:
            placements[index] = Shard(dim)
    return placements


def spec_for_shape(layout: TensorLayout, shape: Sequence[int], axis_size) -> Optional[list]:
    """The layout's spec carried onto `shape`, a view of the same tensor that
    merges or splits consecutive dimensions ([4, 32, 768] for pase's
    [128, 768]); None where the view cannot carry it (a split on a dimension
    that is not the major one of its merge, or one that does not divide)."""
    source, target = list(layout.shape), list(shape)
    if math.prod(source) != math.prod(target):
        return None
    spec: list = [() for _ in target]
    i = j = 0
    while i < len(source) and j < len(target):
        group_i, group_j = [i], [j]
        a, b = source[i], target[j]
        while a != b:  # widen the smaller side until both groups hold the same elements
            if a < b:
                i += 1
                group_i.append(i)
                a *= source[i]
            else:
                j += 1
                group_j.append(j)
                b *= target[j]
        if any(layout.spec[k] for k in group_i[1:]):
            return None  # a split of a minor dimension of the merge is not contiguous in the view
        axes = layout.spec[group_i[0]]
        parts = math.prod(axis_size(axis) for axis in axes)
        if axes and target[group_j[0]] % parts:
            return None
        spec[group_j[0]] = axes
        i, j = i + 1, j + 1
    return spec


@dataclass
class DTensorApplication:
    """What apply_dtensor did: per parameter name its placements, the hooks it
    left on modules, and what it could not carry out (with the reason)."""
    placements: Dict[str, list] = field(default_factory=dict)
    replicated: List[str] = field(default_factory=list)   # parameters the plan does not name
    hooked: Dict[str, str] = field(default_factory=dict)  # module path -> plan layer
    # Convolutions and batchnorms run on each device's pieces (torch_local.py).
    local: List[str] = field(default_factory=list)
    # (plan layer, why) for a layer whose output layout it could not carry;
    # (weight, why) for a weight held replicated because the module holds it
    # in its checkpoint's shape, on which no placement holds the plan's pieces.
    skipped: List[Tuple[str, str]] = field(default_factory=list)
    handles: List[Any] = field(default_factory=list)

    def remove_hooks(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()


def _owners(module) -> Dict[int, List[Tuple[str, Any, str]]]:
    """Per parameter object: every (module path, module, attribute) that holds it (tied weights have several)."""
    owners: Dict[int, List[Tuple[str, Any, str]]] = {}
    for path, sub in module.named_modules(remove_duplicate=False):
        for attribute, parameter in sub.named_parameters(recurse=False):
            owners.setdefault(id(parameter), []).append((path, sub, attribute))
    return owners


def _layer_module(layer, weight, owners):
    """The module whose forward is `layer`: the owner of its first weight, of
    the kind the layer's op is where a tied weight has several owners."""
    import torch

    held = owners.get(id(weight), [])
    if len(held) > 1:
        embedding = layer.op == "embedding"
        held = [owner for owner in held if isinstance(owner[1], torch.nn.Embedding) == embedding]
    if len({path for path, _, _ in held}) != 1:
        return None
    return held[0]


def apply_dtensor(module, plan: Plan, device_mesh) -> DTensorApplication:
    """Distributes `module`'s parameters by name with the plan's placements
    on `device_mesh` (shaped as the plan's mesh), in place, and hooks each
    weight layer's module so that its output leaves in the plan's layout.
    Parameters the plan does not name are replicated, and so is a weight the
    module holds in its checkpoint's shape where the plan's layout does not
    carry onto it (listed in `skipped` with the plan's note). PlanError where
    a weight is missing from the module or has another shape."""
    import torch
    from torch.distributed.tensor import Replicate, distribute_tensor

    if tuple(device_mesh.shape) != tuple(plan.mesh.shape):
        raise PlanError(f"the plan's mesh is {list(plan.mesh.shape)}, the device mesh {list(device_mesh.shape)}")
    axes = list(plan.mesh.axes)
    named = dict(module.named_parameters(remove_duplicate=False))
    owners = _owners(module)
    done = DTensorApplication()
    distributed: Dict[int, torch.nn.Parameter] = {}

    def place(parameter, placements):
        new = torch.nn.Parameter(distribute_tensor(parameter.data, device_mesh, placements),
                                 requires_grad=parameter.requires_grad)
        for _, owner, attribute in owners[id(parameter)]:
            owner.register_parameter(attribute, new)
        distributed[id(parameter)] = new
        if new.requires_grad:
            # The gradient leaves laid out as its weight, where an optimizer
            # needs it: a partial sum over the batch axes is all-reduced here
            # (the gradient all-reduce of data parallelism).
            done.handles.append(new.register_hook(lambda grad: _as_placed(grad, new)))

    layouts = plan.weights()
    views = {w.name: w.checkpoint for layer in plan.layers for w in layer.weights if w.checkpoint is not None}
    for name, layout in layouts.items():
        parameter = named.get(name)
        if parameter is None:
            raise PlanError(f"{plan.source}: weight '{name}' is not a parameter of the module")
        view = views.get(name)
        if view is not None and view.layout is None and tuple(parameter.shape) == view.shape:
            # The module holds the checkpoint's shape, on which no DTensor
            # placement holds the plan's pieces: replicated, and said.
            done.skipped.append((name, view.note))
            place(parameter, [Replicate() for _ in axes])
            continue
        if tuple(parameter.shape) != tuple(layout.shape):
            raise PlanError(f"{plan.source}: weight '{name}' has shape {list(layout.shape)} in the plan but "
                            f"{list(parameter.shape)} in the module")
        if id(parameter) in distributed:
            continue  # a tied weight: held in its first name's layout
        done.placements[name] = dtensor_placements(layout, axes, f"weight '{name}'")
        place(parameter, done.placements[name])
    for name, parameter in named.items():
        if id(parameter) not in distributed:
            done.replicated.append(name)
            place(parameter, [Replicate() for _ in axes])

    for path, sub in module.named_modules():
        pooled = localize_pooling(sub)
        if pooled is not None:
            done.handles.append(pooled)
            done.local.append(path)
    for layer in plan.layers:
        if not layer.weights or len(layer.outputs) != 1:
            continue
        owner = _layer_module(layer, named[layer.weights[0].name], owners)
        if owner is None:
            done.skipped.append((layer.name, "no single module holds its weight"))
            continue
        path, sub, _ = owner
        if path in done.hooked:
            continue
        done.hooked[path] = layer.name
        done.handles.extend(_layer_hooks(sub, layer, plan, device_mesh, done))
        handle, why = localize(sub, layer, plan, device_mesh)
        if handle is not None:
            done.handles.append(handle)
            done.local.append(path)
        elif why is not None:
            done.skipped.append((layer.name, why))
    return done


def _as_placed(grad, parameter):
    from torch.distributed.tensor import DTensor

    if isinstance(grad, DTensor) and tuple(grad.placements) != tuple(parameter.placements):
        return grad.redistribute(parameter.device_mesh, parameter.placements)
    return grad


_PINNED = None


def _pinned(x):
    """x unchanged, with its gradient redistributed to x's placements: the
    plan prices a tensor's gradient in the tensor's own layout, while
    DTensor's propagation lets a gradient arrive in whatever placement the
    op's backward made (a K-split fc hands back its input's gradient sharded
    along K, which then cannot pass the attention's views)."""
    global _PINNED
    if _PINNED is None:
        import torch
        from torch.distributed.tensor import DTensor

        class Pinned(torch.autograd.Function):
            @staticmethod
            def forward(ctx, value):
                ctx.mesh, ctx.placements = value.device_mesh, value.placements
                # A copy, not a view: a module after it may work in place (ReLU(inplace=True)).
                return value.clone()

            @staticmethod
            def backward(ctx, grad):
                if isinstance(grad, DTensor) and tuple(grad.placements) != tuple(ctx.placements):
                    grad = grad.redistribute(ctx.mesh, ctx.placements)
                return grad

        _PINNED = Pinned
    return _PINNED.apply(x)


def _to_layout(value, layout: TensorLayout, layer, plan: Plan, device_mesh, done: DTensorApplication, what: str):
    """A DTensor `value` redistributed to `layout` carried onto its shape, its
    gradient pinned to the same; anything else (a plain tensor, a view that
    cannot carry the layout, recorded in done.skipped) unchanged."""
    from torch.distributed.tensor import DTensor

    if not isinstance(value, DTensor):
        return value
    spec = spec_for_shape(layout, value.shape, plan.mesh.axis_size)
    if spec is None:
        reason = f"its {what} {list(value.shape)} is no view of the plan's {list(layout.shape)} that keeps its split"
        if (layer.name, reason) not in done.skipped:
            done.skipped.append((layer.name, reason))
        return value
    carried = TensorLayout(tuple(value.shape), layout.split, layout.dims, tuple(tuple(a) for a in spec))
    placements = dtensor_placements(carried, list(plan.mesh.axes), f"layer '{layer.name}'")
    if tuple(value.placements) != tuple(placements):
        value = value.redistribute(device_mesh, placements)
    return _pinned(value)


def _layer_hooks(sub, layer, plan: Plan, device_mesh, done: DTensorApplication) -> list:
    """A forward pre-hook that puts the module's first input in the layout of
    the layer's first input, and a forward hook that puts its output in the
    layer's output layout."""
    def before(_module, inputs):
        if not inputs or not layer.inputs:
            return None
        first = _to_layout(inputs[0], layer.inputs[0].layout, layer, plan, device_mesh, done, "input")
        return (first, *inputs[1:])

    def after(_module, _inputs, output):
        return _to_layout(output, layer.outputs[0], layer, plan, device_mesh, done, "output")

    return [sub.register_forward_pre_hook(before), sub.register_forward_hook(after)]


def distribute_inputs(plan: Plan, inputs: Dict[str, Any], device_mesh) -> Dict[str, Any]:
    """Each graph input as a DTensor in the layout of its first reader in the plan."""
    from torch.distributed.tensor import distribute_tensor

    layouts = plan.graph_inputs()
    out = {}
    for name, value in inputs.items():
        if name not in layouts:
            raise PlanError(f"{plan.source}: '{name}' is not a graph input of the plan "
                            f"(its inputs: {', '.join(sorted(layouts))})")
        out[name] = distribute_tensor(value, device_mesh,
                                      dtensor_placements(layouts[name], list(plan.mesh.axes), f"input '{name}'"))
    return out


@dataclass
class ParallelizePlan:
    """`styles` is the argument parallelize_module takes; `replicated` names
    the modules whose weights the plan splits but no style can (a norm
    split along its width): they stay replicated, their values the same."""
    styles: Dict[str, Any]
    replicated: List[str]


def parallelize_plan(plan: Plan, module) -> ParallelizePlan:
    """The plan as a `parallelize_module` plan, where it is one: per module
    path, ColwiseParallel for an nn.Linear whose weight [out, in] the plan
    splits along `out` (an nn.Embedding: along its width), RowwiseParallel
    along `in` (an nn.Embedding: along its vocabulary), with the plan's
    input and output layouts as the styles' layouts and local outputs.
    Modules whose weights the plan replicates are left out. PlanError where
    the plan is not tensor parallelism on a one-axis mesh (a weight layer
    that splits its batch has no style)."""
    import torch
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    if len(plan.mesh.shape) != 1:
        raise PlanError(f"{plan.source}: parallelize_module takes a one-axis mesh; the plan's is "
                        f"{list(plan.mesh.shape)}")
    axes = list(plan.mesh.axes)
    owners = _owners(module)
    named = dict(module.named_parameters(remove_duplicate=False))
    out = ParallelizePlan({}, [])
    produced: Dict[str, Any] = {}  # styled layer -> the placement of the local output it leaves
    # A layer read only by the loss keeps a DTensor output, for the loss to gather (or loss_parallel).
    readers: Dict[str, List[str]] = {}
    for layer in plan.layers:
        for read in layer.inputs:
            readers.setdefault(read.tensor.rpartition(":")[0] or read.tensor, []).append(layer.op)
    for layer in plan.layers:
        if layer.inputs and layer.inputs[0].layout.spec and layer.inputs[0].layout.spec[0]:
            raise PlanError(f"{plan.source}: layer '{layer.name}' splits its batch: parallelize_module "
                            "expresses tensor parallelism only")
    for layer in plan.layers:
        if not layer.weights or layer.weights[0].name not in named:
            continue
        owner = _layer_module(layer, named[layer.weights[0].name], owners)
        if owner is None or owner[0] in out.styles or owner[0] in out.replicated:
            continue
        path, sub, _ = owner
        placement = dtensor_placements(layer.weights[0].held, axes)[0]
        if not placement.is_shard():
            continue
        if not isinstance(sub, (torch.nn.Linear, torch.nn.Embedding)):
            out.replicated.append(path)
            continue
        rowwise = placement.dim == (1 if isinstance(sub, torch.nn.Linear) else 0)
        style = RowwiseParallel if rowwise else ColwiseParallel
        to_loss = set(readers.get(layer.name, [])) == {"softmax_xent"}
        output = _layout_placement(layer.outputs[0], axes)
        out.styles[path] = style(input_layouts=_arriving(plan, layer, produced, axes), output_layouts=output,
                                 use_local_output=not to_loss)
        produced[layer.name] = output
    return out


def _arriving(plan: Plan, layer, produced: Dict[str, Any], axes: List[str]):
    """The placement a styled module's input really has: that of the nearest
    styled module upstream through layers without weights of their own
    (elementwise, attention, reshapes keep a split of the last dimension),
    else Replicate(): an unstyled weight layer (a norm) computes replicated."""
    from torch.distributed.tensor import Replicate

    seen = set()
    name = layer.inputs[0].tensor if layer.inputs else ""
    while name and name not in seen:
        seen.add(name)
        producer = name.rpartition(":")[0] or name
        if producer in produced:
            return produced[producer]
        try:
            source = plan.layer(producer)
        except KeyError:
            return Replicate()  # a graph input
        if source.weights or not source.inputs:
            return Replicate()
        name = source.inputs[0].tensor
    return Replicate()


def _layout_placement(layout: TensorLayout, axes: List[str]):
    """A one-axis layout as the one placement a style takes (a split of the last dimension as Shard(-1))."""
    from torch.distributed.tensor import Shard

    placement = dtensor_placements(layout, axes)[0]
    if placement.is_shard() and placement.dim == len(layout.shape) - 1:
        return Shard(-1)
    return placement
