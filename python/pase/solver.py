"""Solving through the `pase` binary: the package never reimplements the solver."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import Optional, Sequence, Union

from .plan import Plan, read_plan


class SolveError(RuntimeError):
    """`pase solve` refused: its one-line error and exit status (docs/formats.md lists them)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def find_pase(pase: Optional[str] = None) -> str:
    """The binary: `pase` if given, else $PASE_EXE, else `pase` on the PATH."""
    found = pase or os.environ.get("PASE_EXE") or shutil.which("pase")
    if not found:
        raise SolveError("no pase binary: pass pase=PATH, set PASE_EXE, or put pase on the PATH", 2)
    return found


def solve(graph: Union[str, os.PathLike], devices: int, options: Sequence[str] = (),
          pase: Optional[str] = None) -> Plan:
    """`pase solve GRAPH --devices N OPTIONS --out FILE`, read back as a Plan.

    `options` are the command's own (["--mesh", "dp=2,tp=4"], ["--cost-model",
    "calibrated", "--machine", "dgx-a100"], ...); the default mesh places the
    answer, `--no-plan` leaves no plan to read and is refused here.
    """
    if "--no-plan" in options:
        raise SolveError("solve: --no-plan leaves no plan to read", 2)
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "plan.json")
        command = [find_pase(pase), "solve", os.fspath(graph), "--devices", str(devices), *options, "--out", out]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            raise SolveError(lines[-1] if lines else f"pase exited with status {result.returncode}", result.returncode)
        return read_plan(out)
