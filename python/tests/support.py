"""What the package's tests share: the pase binary, and small graphs it writes."""
import json
import os
import subprocess
import tempfile
import unittest

# A small LLaMA (2 layers, grouped-query attention) that the binary exports.
LLAMA = ["llama", "--layers", "2", "--d-model", "256", "--heads", "8", "--kv-heads", "2", "--ff", "512",
         "--seq", "32", "--vocab", "512", "--batch", "16"]


# A small GPT-2 whose optimum at 200 GB/s holds the token table in one layout
# (transformer/wte) and reads it in another in lm_head: a tied weight resharded.
GPT_TIED = ["gpt", "--layers", "2", "--d-model", "256", "--heads", "8", "--ff", "1024", "--seq", "32",
            "--vocab", "4096", "--batch", "16"]


# The zoo's CNNs at small images: AlexNet at 67x67 (the least its pools
# leave a pixel at; fc6 reads 256 features) and ResNet-101 at 8x8, batch 32
# (the least batch a data-parallel 8 may split under the zoo's cutoff of 4).
ALEXNET = ["alexnet", "--image", "67", "--batch", "32"]
RESNET = ["resnet101", "--image", "8", "--batch", "32"]


def pase_exe():
    exe = os.environ.get("PASE_EXE")
    if not exe:
        raise unittest.SkipTest("PASE_EXE is not set (ctest sets it to the built binary)")
    return exe


def run_pase(*args, check=True):
    result = subprocess.run([pase_exe(), *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"pase {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


class Scratch:
    """A folder of files the binary writes, removed with the test class."""

    def __init__(self):
        self._folder = tempfile.TemporaryDirectory()

    def path(self, name):
        return os.path.join(self._folder.name, name)

    def model(self, name, args):
        path = self.path(name)
        run_pase("models", "export", *args, "-o", path)
        return path

    def export(self, plan_path, framework):
        out = self.path(os.path.basename(plan_path) + "." + framework + ".json")
        run_pase("export", plan_path, "--format", framework, "-o", out)
        with open(out, encoding="utf-8") as f:
            return json.load(f)

    def close(self):
        self._folder.cleanup()
