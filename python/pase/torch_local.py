"""Convolutions, batchnorms and poolings run on each device's pieces, as the
plan splits them, where DTensor cannot run them: DTensor's convolution
handles only inputs split along the width (a halo exchange), and it has no
rule for batchnorm or max pooling at all.

The layer's forward becomes a `local_map`: each device computes the layer
on the tiles it holds, which is the op itself on smaller tensors as long as
the plan splits no spatial dimension. A tensor's placements follow the
plan's layout: Shard(d) for the mesh axes of its dimension d, Partial() for
the layer's axes that it lacks (the output of a convolution whose input
channels are split is a partial sum; so is the gradient of a weight over
the batch axes, and of the input over the output-channel axes), Replicate()
for the rest. A batchnorm on a split batch reduces its statistics over the
batch axes (the mean and the mean square, with a differentiable all-reduce),
so it normalises as the unsplit layer does: SyncBatchNorm, which is what
pase's model of a batchnorm prices.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from .plan import Layer, Plan, TensorLayout


class _LocalForward:
    """A module's forward replaced by a local one; remove() puts the module's own back."""

    def __init__(self, module, forward: Callable):
        self.module = module
        module.forward = forward

    def remove(self) -> None:
        if "forward" in vars(self.module):
            del self.module.forward


def _layer_axes(layer: Layer) -> List[str]:
    return [axis for axes in layer.mesh_axes.values() for axis in axes]


def _placements(spec: Sequence[Sequence[str]], partial: Sequence[str], mesh_axes: Sequence[str]) -> list:
    """Shard(d) for the axes of dimension d, Partial() for `partial`, Replicate() otherwise."""
    from torch.distributed.tensor import Partial, Replicate, Shard

    out = []
    for axis in mesh_axes:
        dim = next((d for d, axes in enumerate(spec) if axis in axes), None)
        out.append(Shard(dim) if dim is not None else Partial() if axis in partial else Replicate())
    return out  # a list: local_map reads a tuple as one placement list per output


def _missing(layer: Layer, spec: Sequence[Sequence[str]]) -> List[str]:
    """The layer's axes a tensor of layout `spec` lacks: the sum over them is partial."""
    held = {axis for axes in spec for axis in axes}
    return [axis for axis in _layer_axes(layer) if axis not in held]


def _in_mesh_order(spec: Sequence[Sequence[str]], mesh_axes: Sequence[str]) -> bool:
    return all([mesh_axes.index(a) for a in axes] == sorted(mesh_axes.index(a) for a in axes) for axes in spec)


def localize(module, layer: Layer, plan: Plan, device_mesh) -> Tuple[Optional[_LocalForward], Optional[str]]:
    """For an nn.Conv2d or a training nn.BatchNorm2d with its weight: its
    forward replaced by the local form (the handle puts it back); else, or
    where the plan's split cannot be run so, no handle, and why not (None
    for a module of another kind, which DTensor runs)."""
    import torch

    if isinstance(module, torch.nn.Conv2d):
        return _local_conv2d(module, layer, plan)
    if isinstance(module, torch.nn.BatchNorm2d):
        return _local_batchnorm(module, layer, plan, device_mesh)
    return None, None


_POOLS = ("MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d")


def localize_pooling(module) -> Optional[_LocalForward]:
    """A 2-D pooling module (DTensor has no rule for max_pool2d): its forward
    on a DTensor split only along the batch and the channels runs on each
    device's piece, which pools each image and channel as the whole does;
    any other input is left to DTensor. None for a module of another kind."""
    from torch.distributed.tensor import DTensor, Shard
    from torch.distributed.tensor.experimental import local_map

    if type(module).__name__ not in _POOLS:
        return None

    def forward(value):
        if not isinstance(value, DTensor) or any(
                not (p.is_replicate() or isinstance(p, Shard) and p.dim in (0, 1)) for p in value.placements):
            return type(module).forward(module, value)
        placements = list(value.placements)
        return local_map(lambda piece: type(module).forward(module, piece), out_placements=placements,
                         in_placements=(placements,), in_grad_placements=(placements,))(value)

    return _LocalForward(module, forward)


def _local_conv2d(module, layer: Layer, plan: Plan):
    x, weight, out = layer.inputs[0].layout, layer.weights[0].layout, layer.outputs[0]
    why = _unsupported(x, plan) or _unsupported(out, plan)
    if why:
        return None, why
    if module.bias is not None and weight.spec[1]:
        return None, "its input channels are split, and each piece would add the bias"
    return _replace(module, layer, plan, x, weight, out, lambda xs, ws, bs: module._conv_forward(xs, ws, bs)), None


def _local_batchnorm(module, layer: Layer, plan: Plan, device_mesh):
    x, out = layer.inputs[0].layout, layer.outputs[0]
    why = _unsupported(x, plan) or _unsupported(out, plan)
    if why:
        return None, why
    if x.spec != out.spec:
        return None, "its output is laid out otherwise than its input"
    if not (module.affine and module.training):
        return None, "it is not an affine batchnorm in training"
    groups = [device_mesh.get_group(axis) for axis in x.spec[0]]
    # The scale and shift, per channel: split as the channels are.
    channel = TensorLayout((x.shape[1],), (1,), ("",), (tuple(x.spec[1]),))
    return _replace(module, layer, plan, x, channel, out,
                    lambda xs, ws, bs: _synced_batch_norm(xs, ws, bs, module.eps, groups)), None


def _unsupported(layout: TensorLayout, plan: Plan) -> Optional[str]:
    if len(layout.spec) != 4:
        return f"a {len(layout.spec)}-dimensional tensor where an image is expected"
    if layout.spec[2] or layout.spec[3]:
        return "the plan splits the image's height or width, which needs halos"
    if not _in_mesh_order(layout.spec, plan.mesh.axes):
        return "a dimension is split against the mesh's order"
    return None


def _replace(module, layer: Layer, plan: Plan, x: TensorLayout, weight: TensorLayout, out: TensorLayout,
             compute: Callable) -> _LocalForward:
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor.experimental import local_map

    axes = plan.mesh.axes
    x_at = _placements(x.spec, (), axes)
    w_at = _placements(weight.spec, (), axes)
    out_at = _placements(out.spec, _missing(layer, out.spec), axes)
    # A gradient is partial over the layer's axes its tensor lacks.
    x_grad = _placements(x.spec, _missing(layer, x.spec), axes)
    w_grad = _placements(weight.spec, _missing(layer, weight.spec), axes)
    has_bias = getattr(module, "bias", None) is not None

    in_at = (x_at, w_at, w_at if has_bias else None)
    in_grad = (x_grad, w_grad, w_grad if has_bias else None)
    mapped = local_map(compute, out_placements=out_at, in_placements=in_at, in_grad_placements=in_grad)

    def forward(value):
        if not isinstance(value, DTensor):
            return type(module).forward(module, value)
        return mapped(value, module.weight, module.bias if has_bias else None)

    return _LocalForward(module, forward)


def _synced_batch_norm(x, weight, bias, eps: float, groups):
    """BatchNorm2d in training on a device's piece of the batch: each
    channel's sum and sum of squares, and the count, summed over the devices
    that hold the rest of the batch (a differentiable all_reduce per batch
    axis), then normalised locally."""
    import torch
    import torch.distributed as dist
    import torch.distributed.nn.functional as collective

    count = torch.full((1,), float(x.shape[0] * x.shape[2] * x.shape[3]), dtype=x.dtype, device=x.device)
    sums = torch.cat([x.sum((0, 2, 3)), (x * x).sum((0, 2, 3)), count])
    for group in groups:
        sums = collective.all_reduce(sums, op=dist.ReduceOp.SUM, group=group)
    channels = x.shape[1]
    mean = sums[:channels] / sums[-1]
    variance = sums[channels:2 * channels] / sums[-1] - mean * mean
    shape = (1, channels, 1, 1)
    scale = torch.rsqrt(variance + eps) * weight
    return (x - mean.reshape(shape)) * scale.reshape(shape) + bias.reshape(shape)
