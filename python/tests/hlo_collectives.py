"""The collectives of a compiled XLA HLO module, each attributed to the pase
layer whose ops it serves, for scripts/hlo_comparison.py.

graph_jax.run scopes each layer's ops with the layer's name, so an op's
metadata reads `jit(f)/jvp(LAYER)/...` (forward) or
`jit(f)/transpose(jvp(LAYER))/...` (backward). XLA's combiners merge several
collectives into one with a tuple result and an op_name that keeps their
common prefix once: `PREFIX(SUFFIX1:SUFFIX2:...)`; it is split back here, one
name per tuple element.

Sizes are elements moved per device, as a ring moves them (the model's
accounting): an all-reduce of w elements over q devices moves 2(q-1)/q · w,
an all-gather with a result of w and a reduce-scatter with an operand of w
move (q-1)/q · w, an all-to-all (q-1)/q · w, a collective-permute w.
"""
import math
import re
from dataclasses import dataclass
from typing import List, Optional

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(?P<shape>.+?)\s+(?P<kind>" + "|".join(KINDS) +
                          r")(?P<start>-start)?\((?P<rest>.*)$")
_ARRAY = re.compile(r"\b[a-z]+\d*\[([\d,]*)\]")


@dataclass
class Collective:
    kind: str
    elements: int      # the buffer: an all-reduce's result, an all-gather's result, ...
    group: int         # devices in each replica group
    layer: Optional[str]
    backward: bool

    @property
    def moved(self) -> float:
        """Elements moved per device by a ring."""
        q = self.group
        if q <= 1:
            return 0.0
        if self.kind == "all-reduce":
            return 2 * (q - 1) / q * self.elements
        if self.kind == "collective-permute":
            return float(self.elements)
        return (q - 1) / q * self.elements


def group_size(rest: str) -> int:
    """The replica groups' size, in any of XLA's three spellings."""
    explicit = re.search(r"replica_groups=\{\{([\d,]*)\}", rest)
    if explicit:
        return len([d for d in explicit.group(1).split(",") if d])
    iota = re.search(r"replica_groups=\[(\d+),(\d+)\]<=", rest)
    if iota:
        return int(iota.group(2))
    # mesh['axis_0'=4,'axis_1'=2] {'axis_1'}, perhaps with device_ids=([2,4]T(1,0)) before the braces.
    mesh = re.search(r"replica_groups=mesh\[([^\]]*)\](?:,\s*device_ids=\([^)]*\)[^{]*)?\s*\{([^}]*)\}", rest)
    if mesh:
        sizes = dict(re.findall(r"'([^']+)'=(\d+)", mesh.group(1)))
        return math.prod(int(sizes[axis]) for axis in re.findall(r"'([^']+)'", mesh.group(2)))
    pairs = re.search(r"source_target_pairs=\{(.*?)\}\s*(?:,|$)", rest)
    return 2 if pairs else 1


def split_op_names(op_name: str, count: int) -> List[str]:
    """The names a combined collective's op_name stands for, one per tuple element."""
    if count <= 1 or not op_name.endswith(")"):
        return [op_name] * max(count, 1)
    for i in range(len(op_name) - 1, -1, -1):
        if op_name[i] != "(":
            continue
        parts = _split_top(op_name[i + 1:-1])
        names = [op_name[:i] + part for part in parts]
        if len(parts) == count and all(_balanced(name) for name in names):
            return names
    return [op_name] * count


def _split_top(text: str) -> List[str]:
    return text.split(":")


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += (c == "(") - (c == ")")
        if depth < 0:
            return False
    return depth == 0


def layer_of(op_name: str, layers) -> Optional[str]:
    """The layer named in `jvp(LAYER)`, the longest of `layers` that matches."""
    found = [name for name in re.findall(r"jvp\(([^()]*)\)", op_name) if name in layers]
    return max(found, key=len) if found else None


def collectives(hlo_text: str, layers) -> List[Collective]:
    """Every collective of the module, a tuple-valued one split per element."""
    out = []
    layers = set(layers)
    for line in hlo_text.splitlines():
        match = _INSTRUCTION.match(line)
        if not match or "-done(" in line:
            continue
        sizes = [math.prod(int(d) for d in dims.split(",") if d) for dims in _ARRAY.findall(match["shape"])]
        if match["start"] and match["kind"] != "all-reduce":
            sizes = sizes[-1:]  # an async start's result is (operand, result): the result is the buffer
        op_name = re.search(r'op_name="([^"]*)"', match["rest"])
        names = split_op_names(op_name.group(1) if op_name else "", len(sizes))
        group = group_size(match["rest"])
        for elements, name in zip(sizes, names):
            out.append(Collective(match["kind"], elements, group, layer_of(name, layers), "transpose(" in name))
    return out
