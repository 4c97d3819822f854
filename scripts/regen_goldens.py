#!/usr/bin/env python3
"""Regenerates the golden numbers of tests/expected/ by running the built `pase`.

    python3 scripts/regen_goldens.py [PASE] [--accept]

PASE is the `pase` binary (default: build/pase). Each golden file lists its
entries (graph file, device count, strategy, machine); this script runs every
entry again, `pase solve --json` for the optimum ("pase") and `pase evaluate
--baseline NAME --json` for a baseline, and rewrites the file from the results.

When a number or a recorded configuration differs from the file, the
differences are printed and nothing is written unless --accept is given: a
moved golden is a change of behaviour to justify, not to absorb silently. To
add a golden, add an entry with its keys (file, devices, strategy, machine,
and "layers": [] to record the strategy) and "total_cost": null, then run the
script; filling in a missing number needs no --accept.

Only the Python standard library is used. Exit status: 0 when every file is
up to date or was written, 1 when something changed without --accept or a run
failed.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECTED = os.path.join(ROOT, "tests", "expected")
KINDS = ("zoo_optima", "baseline_costs")
DEFAULT_MACHINE = {"flops_tflops": 10.0, "bandwidth_gbps": 16.0}


def fail(message):
    print("error: " + message, file=sys.stderr)
    sys.exit(1)


def run_pase(pase, entry):
    """The strategy file `pase` prints for one entry, as a dict."""
    machine = entry.get("machine", DEFAULT_MACHINE)
    if entry.get("cost_model", "pase") != "pase":
        fail("%s: only the pase cost model can be regenerated here" % describe(entry))
    if entry["strategy"] == "pase":
        args = [pase, "solve", entry["file"]]
    else:
        args = [pase, "evaluate", entry["file"], "--baseline", entry["strategy"]]
    args += ["--devices", str(entry["devices"]), "--json",
             "--flops", repr(float(machine["flops_tflops"])),
             "--bandwidth", repr(float(machine["bandwidth_gbps"]))]
    done = subprocess.run(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        fail("%s: `%s` failed (status %d): %s" % (describe(entry), " ".join(args[1:]), done.returncode,
                                                  done.stderr.strip()))
    return json.loads(done.stdout)


def batch_of(graph_file):
    """Dim 0 of the graph's first external tensor: the batch of the zoo graphs."""
    with open(os.path.join(ROOT, graph_file)) as f:
        graph = json.load(f)
    tensors = graph.get("tensors", {})
    if not tensors:
        return None
    return next(iter(tensors.values()))[0]


def describe(entry):
    return "%s p=%s %s" % (entry.get("graph") or entry.get("file"), entry.get("devices"), entry.get("strategy"))


def regenerate(pase, entry):
    strategy = run_pase(pase, entry)
    fresh = {
        "graph": strategy["graph"],
        "file": entry["file"],
        "batch": batch_of(entry["file"]),
        "devices": entry["devices"],
        "strategy": entry["strategy"],
        "cost_model": strategy["cost_model"],
        "machine": strategy["machine"],
        "total_cost": strategy["total_cost"],
    }
    if "layers" in entry:
        fresh["layers"] = [{"name": layer["name"], "config": layer["config"]} for layer in strategy["layers"]]
    return fresh


def relative(old, new):
    if old == 0:
        return "new"
    return "%+.3g relative" % ((new - old) / abs(old))


def differences(old, new):
    """Lines describing how `new` moved from `old` (empty: same numbers)."""
    lines = []
    what = describe(new)
    if old.get("total_cost") is not None and old["total_cost"] != new["total_cost"]:
        lines.append("%s: total_cost %r -> %r (%s)" % (what, old["total_cost"], new["total_cost"],
                                                       relative(old["total_cost"], new["total_cost"])))
    for key in ("graph", "batch", "cost_model", "machine"):
        if key in old and old[key] != new[key]:
            lines.append("%s: %s %s -> %s" % (what, key, json.dumps(old[key]), json.dumps(new[key])))
    if old.get("layers"):
        before = {layer["name"]: layer["config"] for layer in old["layers"]}
        after = {layer["name"]: layer["config"] for layer in new["layers"]}
        for name in list(before) + [n for n in after if n not in before]:
            if before.get(name) != after.get(name):
                lines.append("%s: layer %s %s -> %s" % (what, name, json.dumps(before.get(name)),
                                                        json.dumps(after.get(name))))
    return lines


def compact(value):
    return json.dumps(value, separators=(", ", ": "))


def write_golden_file(document):
    """One entry per line (its layers one per line), so diffs show what moved."""
    out = ["{"]
    for key in ("format", "version", "kind", "about"):
        out.append("  %s: %s," % (json.dumps(key), json.dumps(document[key])))
    out.append('  "entries": [')
    entries = document["entries"]
    for i, entry in enumerate(entries):
        head = {k: v for k, v in entry.items() if k != "layers"}
        text = "    " + compact(head)
        if "layers" in entry:
            text = text[:-1] + ', "layers": [\n'
            text += ",\n".join("      " + compact(layer) for layer in entry["layers"])
            text += "\n    ]}"
        out.append(text + ("," if i + 1 < len(entries) else ""))
    out.append("  ]")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pase", nargs="?", default=os.path.join("build", "pase"),
                        help="the pase binary (default: build/pase)")
    parser.add_argument("--accept", action="store_true", help="write the files even where numbers changed")
    options = parser.parse_args()
    pase = os.path.abspath(options.pase)
    if not os.access(pase, os.X_OK):
        fail("%s: not an executable; build it first (cmake --build build --target pase)" % options.pase)

    changed = []
    updates = {}
    for kind in KINDS:
        path = os.path.join(EXPECTED, kind + ".json")
        with open(path) as f:
            document = json.load(f)
        if document.get("format") != "pase-test-goldens" or document.get("kind") != kind:
            fail("%s: expected a pase-test-goldens file of kind %s" % (path, kind))
        fresh_entries = []
        for entry in document["entries"]:
            fresh = regenerate(pase, entry)
            changed += differences(entry, fresh)
            fresh_entries.append(fresh)
        document["entries"] = fresh_entries
        text = write_golden_file(document)
        with open(path) as f:
            if f.read() != text:
                updates[path] = text

    for line in changed:
        print(line)
    if changed and not options.accept:
        print("%d golden value(s) changed; nothing written (rerun with --accept to record them)" % len(changed))
        return 1
    for path, text in updates.items():
        with open(path, "w") as f:
            f.write(text)
        print("wrote " + os.path.relpath(path, ROOT))
    if not updates:
        print("goldens up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
