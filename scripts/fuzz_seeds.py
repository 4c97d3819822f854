#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora into fuzz/corpus/<harness>/ (docs/fuzzing.md).

Seeds are the example files under data/ and every JSON document written
inline in tests/*.cc (a raw string that parses as JSON), sorted by format:
a graph ("nodes"), a strategy ("layers"), a machine profile ("peak_tflops"
or "pase-machine"). Strategy files also come from `pase solve --json` on a
small graph when a built pase is given. ONNX seeds are the small models of
data/onnx (under 20 KiB). Each seed is named by its content's hash, so
running this again adds nothing twice. Usage:

  scripts/fuzz_seeds.py [--pase build/pase]
"""
import argparse
import hashlib
import json
import pathlib
import re
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
MAX_JSON_SEED = 40 * 1024
MAX_ONNX_SEED = 20 * 1024


def put(harness, data):
    if isinstance(data, str):
        data = data.encode()
    folder = CORPUS / harness
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def kind_of(doc):
    if not isinstance(doc, dict):
        return None
    if "nodes" in doc:
        return "fuzz_graph_reader"
    if doc.get("format") == "pase-machine" or "peak_tflops" in doc:
        return "fuzz_machine_profile"
    if "layers" in doc and isinstance(doc["layers"], list):
        return "fuzz_strategy_reader"
    return None


def inline_documents():
    raw = re.compile(r'R"([a-z]*)\((.*?)\)\1"', re.S)
    for source in sorted((ROOT / "tests").glob("*.cc")):
        for match in raw.finditer(source.read_text()):
            text = match.group(2)
            try:
                doc = json.loads(text)
            except ValueError:
                continue
            yield text, doc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pase", help="a built pase, to write strategy seeds with `pase solve --json`")
    args = parser.parse_args()

    for path in sorted((ROOT / "data" / "graphs").glob("*.json")):
        if path.stat().st_size <= MAX_JSON_SEED:
            put("fuzz_graph_reader", path.read_bytes())
    for path in sorted((ROOT / "data" / "machines").glob("*.json")):
        put("fuzz_machine_profile", path.read_bytes())
    for path in sorted((ROOT / "data" / "onnx").glob("*.onnx")):
        if path.stat().st_size <= MAX_ONNX_SEED:
            put("fuzz_onnx_import", path.read_bytes())
    for text, doc in inline_documents():
        kind = kind_of(doc)
        if kind:
            put(kind, text)
    if args.pase:
        with tempfile.TemporaryDirectory() as tmp:
            graph = pathlib.Path(tmp) / "alexnet.json"
            subprocess.run([args.pase, "models", "export", "alexnet", "--batch", "8", "-o", str(graph)], check=True)
            for extra in ([], ["--mesh", "auto"]):
                out = subprocess.run([args.pase, "solve", str(graph), "--devices", "4", "--json", *extra],
                                     check=True, capture_output=True, text=True).stdout
                put("fuzz_strategy_reader", out)
                if extra:
                    put("fuzz_plan_reader", out)
            # A one-layer plan on 64 devices: small, and every tensor replicated.
            tiny = pathlib.Path(tmp) / "tiny.json"
            tiny.write_text('{"format": "pase-graph", "version": 1, "name": "tiny", "tensors": {"x": [8, 16]}, '
                            '"nodes": [{"name": "fc1", "op": "fc", "inputs": ["x"], "units": 16}]}')
            for devices in ("8", "64"):
                out = subprocess.run([args.pase, "solve", str(tiny), "--devices", devices, "--mesh", "auto", "--json"],
                                     check=True, capture_output=True, text=True).stdout
                put("fuzz_plan_reader", out)


if __name__ == "__main__":
    main()
