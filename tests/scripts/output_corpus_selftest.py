#!/usr/bin/env python3
"""Checks that scripts/output_corpus.py reports a moved output and fails:
one case's record is altered (a configuration and the digest) in a copy of
the record file, and the script must name the case, the layer and exit 1.

    python3 tests/scripts/output_corpus_selftest.py PASE
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "output_corpus.py")
RECORDS = os.path.join(ROOT, "tests", "expected", "output_corpus.json")
CASE = "solve-gpt2-xl-p64"  # recorded as digest and configurations (too large for its text)


def main():
    pase = sys.argv[1]
    with open(RECORDS) as f:
        document = json.load(f)
    record = document["cases"][CASE]
    configs = record["configs"].split(";")
    configs[1] = configs[1] + "0"
    record["configs"] = ";".join(configs)
    record["sha256"] = "0" * 64
    with tempfile.TemporaryDirectory() as scratch:
        altered = os.path.join(scratch, "records.json")
        with open(altered, "w") as f:
            json.dump(document, f)
        done = subprocess.run([sys.executable, SCRIPT, pase, "--only", CASE, "--records", altered],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with open(altered) as f:
            unchanged = json.load(f)["cases"][CASE]["sha256"] == "0" * 64
    expected = "%s: moved: 1 layer(s) moved, the first " % CASE
    problems = []
    if done.returncode != 1:
        problems.append("exit status %d, expected 1" % done.returncode)
    if expected not in done.stdout:
        problems.append("no line starting %r" % expected)
    if not unchanged:
        problems.append("the record file was rewritten without --accept")
    if problems:
        print("output_corpus.py did not report the move: " + "; ".join(problems) + "\n" + done.stdout)
        return 1
    print("reported: " + next(line for line in done.stdout.splitlines() if expected in line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
