#!/usr/bin/env python3
"""Checks that check_design.py finds what it is there to find, on a small
tree made for it: a wrong-way include, a link the table does not allow, a
folder the table leaves out, a cycle, and a function of 101 lines.

    python3 tests/scripts/check_design_selftest.py
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "check_design.py")

TABLE = """# Architecture
| folder | targets | owns | may use |
|---|---|---|---|
| `low/` | `pase_low` | the bottom | nothing |
| `high/` | `pase_high` | the top | `low/` |
%s
"""


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


def run(root, what):
    done = subprocess.run([sys.executable, SCRIPT, what, "--root", root], stdout=subprocess.PIPE, text=True)
    return done.returncode, done.stdout


def tree(root, extra_row="", low_include="", high_links="pase_low", stray=False, long_body=10):
    write(root, "docs/architecture.md", TABLE % extra_row)
    write(root, "low/CMakeLists.txt", "pase_library(pase_low low SOURCES low.cc)\n")
    write(root, "low/low.cc", low_include + "int low() {\n" + "  int x = 0;\n" * long_body + "  return 0;\n}\n")
    write(root, "high/CMakeLists.txt", "pase_library(pase_high high SOURCES high.cc USES %s)\n" % high_links)
    write(root, "high/high.cc", '#include "low/low.h"\nint high() { return 1; }\n')
    if stray:
        write(root, "stray/CMakeLists.txt", "add_library(pase_stray stray.cc)\n")


def expect(problems, name, status, output, needle):
    if status != 1 or needle not in output:
        problems.append("%s: expected exit 1 and %r, got %d:\n%s" % (name, needle, status, output))


def main():
    problems = []
    with tempfile.TemporaryDirectory() as root:
        tree(root)
        for what in ("layers", "functions"):
            status, output = run(root, what)
            if status != 0:
                problems.append("clean tree: %s exited %d:\n%s" % (what, status, output))
    cases = [
        ("wrong-way include", dict(low_include='#include "high/high.h"\n'), "layers",
         "low/low.cc:1: includes high/, which low/ may not use"),
        ("link the table does not allow", dict(high_links="pase_low pase_other"), "layers",
         "high/CMakeLists.txt: pase_high links ?pase_other/"),
        ("folder missing from the table", dict(stray=True), "layers", "stray/: a folder with a CMakeLists.txt"),
        ("cycle", dict(extra_row="| `loop/` | `pase_loop` | a loop | `loop2/` |\n| `loop2/` | `pase_loop2` | a loop | `loop/` |"),
         "layers", "form a cycle"),
        ("long function", dict(long_body=99), "functions", "low/low.cc:1: low is 102 lines (at most 100)"),
    ]
    for name, settings, what, needle in cases:
        with tempfile.TemporaryDirectory() as root:
            tree(root, **settings)
            status, output = run(root, what)
            expect(problems, name, status, output, needle)
    for problem in problems:
        print(problem)
    print("check_design self-test: %d case(s), %d problem(s)" % (len(cases) + 1, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
