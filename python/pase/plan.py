"""A plan as objects: the mesh, and per layer the layouts of its tensors.

The fields are those of the strategy file's plan (docs/plans.md, "Plan fields
of the strategy file"); nothing is recomputed here, only read and checked for
what a framework needs: one layout per weight.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union


class PlanError(ValueError):
    """A file that is not a plan, or a plan a framework cannot apply as it is."""


@dataclass(frozen=True)
class Mesh:
    shape: Tuple[int, ...]
    axes: Tuple[str, ...]
    devices_per_node: int

    @property
    def devices(self) -> int:
        return math.prod(self.shape)

    def device_ids(self) -> list:
        """Device ids nested as the mesh's array: row-major, the last axis fastest."""
        ids: list = list(range(self.devices))
        for size in reversed(self.shape[1:]):
            ids = [ids[i:i + size] for i in range(0, len(ids), size)]
        return ids

    def axis_size(self, axis: str) -> int:
        return self.shape[self.axes.index(axis)]


@dataclass(frozen=True)
class TensorLayout:
    """A tensor on the mesh: per dimension, the mesh axes that split it, major first."""
    shape: Tuple[int, ...]
    split: Tuple[int, ...]
    dims: Tuple[str, ...]
    spec: Tuple[Tuple[str, ...], ...]


@dataclass(frozen=True)
class Input:
    tensor: str  # a graph input's name, or the layer (and output port) it reads
    layout: TensorLayout


@dataclass(frozen=True)
class Checkpoint:
    """A weight the graph declares in more dimensions than its checkpoint holds
    it in (LLaMA's q_proj.weight: [kv heads, group, head dim, model] in the
    graph, [heads · head dim, model] in the checkpoint): the checkpoint's shape,
    the graph dimensions each of its dimensions merges, and the weight's
    layout on it, or None (with the note) where no layout of that shape holds
    the same pieces."""
    shape: Tuple[int, ...]
    merges: Tuple[Tuple[int, ...], ...]
    layout: Optional[TensorLayout]
    note: str = ""


@dataclass(frozen=True)
class Weight:
    name: str
    layout: TensorLayout       # on the graph's shape
    grad_allreduce_axes: Tuple[str, ...]
    checkpoint: Optional[Checkpoint] = None

    @property
    def held(self) -> TensorLayout:
        """The layout a framework holds the weight in: on its checkpoint's shape
        where the layout carries over, else on the graph's (a view of it)."""
        if self.checkpoint is not None and self.checkpoint.layout is not None:
            return self.checkpoint.layout
        return self.layout


@dataclass(frozen=True)
class WeightReshard:
    weight: str             # the parameter's name
    layer: str              # the layer that reads it in another layout
    held_by: str            # its first reader, whose layout it is held in
    layout: TensorLayout    # the layout `layer` reads it in


@dataclass(frozen=True)
class Layer:
    name: str
    op: str
    dims: str
    config: Tuple[int, ...]
    mesh_axes: Dict[str, Tuple[str, ...]]
    inputs: Tuple[Input, ...]
    outputs: Tuple[TensorLayout, ...]
    weights: Tuple[Weight, ...]


@dataclass(frozen=True)
class Plan:
    graph: str
    devices: int
    mesh: Mesh
    layers: Tuple[Layer, ...]
    total_cost: float
    realized_total_cost: float
    source: str = ""  # the file it was read from, for messages

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise KeyError(f"the plan has no layer '{name}'")

    def weights(self) -> Dict[str, TensorLayout]:
        """Each weight's one layout, as a framework holds it (Weight.held: on the
        checkpoint's shape where it has one): its first reader's (a later reader
        in another layout reshards it: weight_reshards()). PlanError where two
        layers read a weight with different shapes, the line `pase export` prints."""
        out: Dict[str, TensorLayout] = {}
        for layer in self.layers:
            for weight in layer.weights:
                out.setdefault(weight.name, weight.held)
        self.weight_reshards()  # refuses a weight read with two shapes
        return out

    def weight_reshards(self) -> List["WeightReshard"]:
        """Every later read of a weight in another layout than its first reader
        holds it in (a tied weight: GPT's token table in lm_head), in layer order."""
        out: List[WeightReshard] = []
        first: Dict[str, Tuple[str, Weight]] = {}
        for layer in self.layers:
            for weight in layer.weights:
                holder_name, holder = first.setdefault(weight.name, (layer.name, weight))
                # Shapes as the graph declares them, as `pase export` compares them.
                if holder.layout.shape != weight.layout.shape:
                    raise PlanError(f"{self.source}: weight '{weight.name}' has shape "
                                    f"{_shape_text(holder.layout.shape)} in layer '{holder_name}' but "
                                    f"{_shape_text(weight.layout.shape)} in layer '{layer.name}'; a framework "
                                    "holds one tensor per weight")
                if holder.held.spec == weight.held.spec:  # the first read itself, or the same layout
                    continue
                out.append(WeightReshard(weight.name, layer.name, holder_name, weight.held))
        return out

    def graph_inputs(self) -> Dict[str, TensorLayout]:
        """The tensors no layer writes and that are not weights (an einsum reads
        its weight as an input too), each with the layout of its first reader."""
        produced = {layer.name for layer in self.layers}
        weights = {weight.name for layer in self.layers for weight in layer.weights}
        out: Dict[str, TensorLayout] = {}
        for layer in self.layers:
            for read in layer.inputs:
                if _producer(read.tensor) not in produced and read.tensor not in weights and read.tensor not in out:
                    out[read.tensor] = read.layout
        return out

    def outputs(self) -> Dict[str, List[TensorLayout]]:
        """Per layer name, the layout of each of its outputs."""
        return {layer.name: list(layer.outputs) for layer in self.layers}


def _producer(tensor: str) -> str:
    # "layer:1" reads output port 1 of "layer" (docs/formats.md).
    head, sep, port = tensor.rpartition(":")
    return head if sep and port.isdigit() else tensor


def _shape_text(shape: Tuple[int, ...]) -> str:
    return "[" + ", ".join(str(extent) for extent in shape) + "]"


def read_plan(source: Union[str, os.PathLike, dict]) -> Plan:
    """The plan in a strategy file (a path, or the parsed document)."""
    if isinstance(source, dict):
        return _plan_of(source, "the document")
    path = os.fspath(source)
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as error:
        raise PlanError(f"{path}: cannot read it ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise PlanError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    return _plan_of(document, path)


def _plan_of(document: dict, where: str) -> Plan:
    if not isinstance(document, dict) or document.get("format") != "pase-strategy":
        raise PlanError(f"{where}: field 'format': expected \"pase-strategy\"")
    if "stage_meshes" in document:
        raise PlanError(f"{where}: has a mesh per pipeline stage; this package reads plans of one mesh "
                        "(`pase export --format jax` writes each stage's layouts)")
    if "mesh" not in document:
        raise PlanError(f"{where}: has no plan (solve with --mesh to make one)")
    try:
        m = document["mesh"]
        mesh = Mesh(tuple(m["shape"]), tuple(m["axes"]), int(m.get("devices_per_node", 0)))
        layers = tuple(_layer(layer) for layer in document["layers"])
        return Plan(str(document.get("graph", "")), int(document["devices"]), mesh, layers,
                    float(document["total_cost"]), float(document.get("realized_total_cost", document["total_cost"])),
                    where)
    except (KeyError, TypeError, ValueError) as error:
        raise PlanError(f"{where}: not a plan pase wrote ({type(error).__name__}: {error})") from None


def _layout(tensor: dict) -> TensorLayout:
    return TensorLayout(tuple(tensor["shape"]), tuple(tensor["split"]), tuple(tensor["dims"]),
                        tuple(tuple(axes) for axes in tensor["layout"]["spec"]))


def _layer(layer: dict) -> Layer:
    return Layer(
        name=layer["name"], op=layer["op"], dims=layer["dims"], config=tuple(layer["config"]),
        mesh_axes={letter: tuple(axes) for letter, axes in layer["mesh_axes"].items()},
        inputs=tuple(Input(read["tensor"], _layout(read)) for read in layer.get("inputs", [])),
        outputs=tuple(_layout(out) for out in layer.get("outputs", [])),
        weights=tuple(Weight(w["name"], _layout(w), tuple(w.get("grad_allreduce_axes", [])),
                             _checkpoint(w["checkpoint"]) if "checkpoint" in w else None)
                      for w in layer.get("weights", [])))


def _checkpoint(view: dict) -> Checkpoint:
    layout = _layout(view) if view["layout"] is not None else None
    return Checkpoint(tuple(view["shape"]), tuple(tuple(group) for group in view["merges"]), layout,
                      view.get("note", ""))
