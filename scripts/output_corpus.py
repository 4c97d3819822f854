#!/usr/bin/env python3
"""Runs every case of tests/expected/corpus.json with a built `pase` and
compares what it prints with what was recorded: the same bytes (by SHA-256),
and what moved where not.

    python3 scripts/output_corpus.py [PASE] [--accept] [--only SUBSTRING] [--jobs N]

PASE is the `pase` binary (default: build/pase). Each case is a command line
(a solve, a capped or bounded solve, a placed plan and its exports, an
evaluate, an explain, a compare, a frontier or a batch) whose output (a strategy file on stdout, or the document it writes)
is recorded in tests/expected/output_corpus.json: its SHA-256 and length,
its top-level fields but `layers` and `solver`, every layer's configuration
(in layer order),
and the whole text when it is under 16 KiB. The corpus is what every
refactoring is held to: a strategy file is the product, so each must stay the
same bytes. An argument "@NAME" names a file in the case's scratch folder: a
case may first run other command lines ("prepare": write a built-in model
with `pase models export`, a plan with `pase solve`), and may record a file
its command writes ("output": "@NAME") instead of what it prints.

When an output differs, the script prints which case moved and how (the
total cost, the layers whose configuration moved, else the first differing
line) and exits 1 without writing anything, unless given --accept, which
records the new outputs (a moved output is a change of behaviour to explain
in the commit that makes it). Missing records are written without --accept.

Only the Python standard library is used. Exit status: 0 when every case
matches (or was written), 1 when one differs or fails, 2 on a bad command line.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "tests", "expected", "corpus.json")
RECORDS = os.path.join(ROOT, "tests", "expected", "output_corpus.json")


def load_cases():
    with open(CASES) as f:
        document = json.load(f)
    if document.get("format") != "pase-output-corpus" or document.get("version") != 1:
        raise SystemExit("error: %s: expected a pase-output-corpus file of version 1" % CASES)
    names = set()
    for case in document["cases"]:
        if case["name"] in names:
            raise SystemExit("error: %s: case '%s' is listed twice" % (CASES, case["name"]))
        names.add(case["name"])
    return document["cases"]


def run(pase, args, cwd):
    done = subprocess.run([pase] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def produce(pase, case):
    """The text a case records, or raises RuntimeError saying why none.

    Commands run in a scratch folder of the case's own, where data/ is the
    repository's: an argument "@NAME" is the file NAME there (written as
    NAME, so outputs that echo a path are the same on every run). The case's
    "prepare" command lines run first (`models export`, a solve that writes a
    plan), and "output": "@NAME" records that file instead of what the
    command prints."""
    with tempfile.TemporaryDirectory(prefix="pase-corpus-") as scratch:
        os.symlink(os.path.join(ROOT, "data"), os.path.join(scratch, "data"))

        def resolved(args):
            return [a[1:] if a.startswith("@") else a for a in args]

        for step in case.get("prepare", []):
            status, _, err = run(pase, resolved(step), scratch)
            if status != 0:
                raise RuntimeError("`pase %s` failed (%d): %s" % (" ".join(step), status, err.strip()))
        status, out, err = run(pase, resolved(case["args"]), scratch)
        if status != case.get("status", 0):
            raise RuntimeError("`pase %s` exited %d (expected %d): %s" % (" ".join(case["args"]), status,
                                                                         case.get("status", 0), err.strip()))
        output = case.get("output", "stdout")
        if output == "stdout":
            return out
        with open(os.path.join(scratch, output[1:])) as f:
            return f.read()


FULL_TEXT_BELOW = 16 * 1024  # outputs this small are recorded whole


def digest(text):
    """What the corpus records of one output."""
    record = {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "bytes": len(text.encode("utf-8"))}
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict):
        record["fields"] = {k: v for k, v in document.items() if k not in ("layers", "solver")}
        layers = document.get("layers")
        if isinstance(layers, list) and all(isinstance(layer, dict) and "config" in layer for layer in layers):
            record["configs"] = ";".join(",".join(str(c) for c in layer["config"]) for layer in layers)
    if record["bytes"] < FULL_TEXT_BELOW:
        record["text"] = text
        record.pop("fields", None)
    return record


def layer_names(text):
    """The names of a strategy file's layers, in order (empty if it has none)."""
    try:
        return [layer.get("name") for layer in json.loads(text).get("layers", [])]
    except (ValueError, AttributeError):
        return []


def describe_move(old, new, text):
    """One or a few lines saying how record `new` (of output `text`) moved from record `old`."""
    lines = []
    if "text" in old and "text" in new:
        old_lines, new_lines = old["text"].splitlines(), new["text"].splitlines()
        for i, (x, y) in enumerate(zip(old_lines, new_lines)):
            if x != y:
                lines.append("line %d: %s -> %s" % (i + 1, x[:200], y[:200]))
                break
        else:
            lines.append("%d lines -> %d lines" % (len(old_lines), len(new_lines)))
        return lines
    a, b = old.get("fields", {}), new.get("fields", {})
    for key in list(a) + [k for k in b if k not in a]:
        if a.get(key) != b.get(key):
            lines.append("%s %s -> %s" % (key, json.dumps(a.get(key))[:200], json.dumps(b.get(key))[:200]))
    before, after = old.get("configs", "").split(";"), new.get("configs", "").split(";")
    moved = [i for i in range(max(len(before), len(after)))
             if i >= len(before) or i >= len(after) or before[i] != after[i]]
    if moved:
        i, names = moved[0], layer_names(text)
        name = names[i] if i < len(names) else "#%d" % i
        lines.append("%d layer(s) moved, the first '%s' (%s) -> (%s)" % (
            len(moved), name, before[i] if i < len(before) else "none", after[i] if i < len(after) else "none"))
    if not lines:
        lines.append("same fields and configurations, other bytes (%d -> %d)" % (old["bytes"], new["bytes"]))
    return lines


def write_records(records, path):
    """One case per line (its configurations on the next), so a diff shows which moved."""
    out = ["{", '  "format": "pase-output-digests",', '  "version": 1,',
           '  "about": "what scripts/output_corpus.py records of each case of tests/expected/corpus.json",',
           '  "cases": {']
    names = sorted(records)
    for i, name in enumerate(names):
        record = dict(records[name])
        configs = record.pop("configs", None)
        text = "    %s: %s" % (json.dumps(name), json.dumps(record, sort_keys=True, separators=(",", ":")))
        if configs is not None:
            text = text[:-1] + ',\n      "configs":%s}' % json.dumps(configs)
        out.append(text + ("," if i + 1 < len(names) else ""))
    out += ["  }", "}"]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pase", nargs="?", default=os.path.join("build", "pase"))
    parser.add_argument("--accept", action="store_true", help="record the new outputs where they moved")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--records", default=RECORDS, help="the record file (default: tests/expected/output_corpus.json)")
    options = parser.parse_args()
    pase = os.path.abspath(options.pase)
    if not os.access(pase, os.X_OK):
        print("error: %s: not an executable; build it first" % options.pase, file=sys.stderr)
        return 2
    cases = [case for case in load_cases() if options.only in case["name"]]

    def one(case):
        try:
            return case, produce(pase, case), None
        except RuntimeError as error:
            return case, None, str(error)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        results = list(pool.map(one, cases))

    records = {}
    if os.path.exists(options.records):
        with open(options.records) as f:
            records = json.load(f)["cases"]
    failed, moved, written = 0, 0, 0
    for case, text, error in results:
        if error is not None:
            print("%s: failed: %s" % (case["name"], error))
            failed += 1
            continue
        fresh = digest(text)
        old = records.get(case["name"])
        if old == fresh:
            continue
        if old is not None:
            moved += 1
            for line in describe_move(old, fresh, text):
                print("%s: moved: %s" % (case["name"], line))
            if not options.accept:
                continue
        records[case["name"]] = fresh
        written += 1
    if written:
        write_records(records, options.records)
    print("corpus: %d cases, %d failed, %d moved, %d written" % (len(results), failed, moved, written))
    if failed or (moved and not options.accept):
        if moved and not options.accept:
            print("nothing written for the moved cases (rerun with --accept to record them)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
