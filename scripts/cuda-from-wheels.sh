#!/usr/bin/env bash
# A CUDA Toolkit for building pase-calibrate where none is installed, made
# from NVIDIA's wheels on the Python package index: the runtime and cuBLAS
# (headers and shared libraries), the compiler package's crt/ headers that
# cuda_runtime.h includes and CCCL's nv/ headers that cuda_fp16.h includes. pase-calibrate compiles no .cu file, so this is
# all it needs to compile and link; running it still needs a GPU and its
# driver. CI uses it so that pase-calibrate cannot rot unseen.
#
#   scripts/cuda-from-wheels.sh DIR    # prints the toolkit root: DIR/toolkit
#   cmake -S . -B build -DPASE_WITH_CUDA=ON -DCUDAToolkit_ROOT=DIR/toolkit
#
# Needs python3 with venv (Debian: python3-venv; scripts/install-deps.sh
# --cuda installs it). Safe to run again: a complete DIR/toolkit is kept.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/cuda-from-wheels.sh DIR" >&2
  exit 2
fi
dir=$(mkdir -p "$1" && cd "$1" && pwd)
root="$dir/toolkit"
version=12.9
if [ -f "$root/version.txt" ]; then
  echo "$root"
  exit 0
fi
if [ ! -x "$dir/venv/bin/pip" ]; then
  python3 -m venv "$dir/venv" >&2
fi
"$dir/venv/bin/pip" download --quiet --no-deps -d "$dir/wheels" \
  "nvidia-cuda-runtime-cu12==$version.*" "nvidia-cublas-cu12==$version.*" "nvidia-cuda-nvcc-cu12==$version.*" \
  "nvidia-cuda-cccl-cu12==$version.*" >&2
rm -rf "$root.partial"
python3 - "$dir/wheels" "$root.partial" <<'PY'
import glob, os, sys, zipfile
wheels, root = sys.argv[1], sys.argv[2]
os.makedirs(os.path.join(root, "include"))
os.makedirs(os.path.join(root, "lib64"))
wanted_libs = {"libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12"}
runtime_version = None
for wheel in sorted(glob.glob(os.path.join(wheels, "*.whl"))):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            parts = name.split("/")
            if len(parts) < 4 or parts[0] != "nvidia":
                continue
            package, kind, rest = parts[1], parts[2], "/".join(parts[3:])
            if kind == "include" and rest and not rest.endswith("/"):
                # The compiler's crt/ and CCCL's nv/, which the runtime's headers include.
                if package == "cuda_nvcc" and not rest.startswith("crt/"):
                    continue
                if package == "cuda_cccl" and not rest.startswith("nv/"):
                    continue
                target = os.path.join(root, "include", rest)
            elif kind == "lib" and rest in wanted_libs:
                target = os.path.join(root, "lib64", rest)
            else:
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as source, open(target, "wb") as out:
                out.write(source.read())
    if "cuda_runtime_cu12" in os.path.basename(wheel):
        runtime_version = os.path.basename(wheel).split("-")[1]
for lib in wanted_libs:
    if not os.path.exists(os.path.join(root, "lib64", lib)):
        sys.exit("cuda-from-wheels: %s is in none of the wheels" % lib)
    os.symlink(lib, os.path.join(root, "lib64", lib[:-len(".12")]))
# FindCUDAToolkit takes the version from here when there is no nvcc.
with open(os.path.join(root, "version.txt"), "w") as f:
    f.write("CUDA Version %s\n" % runtime_version)
PY
mv "$root.partial" "$root"
rm -rf "$dir/wheels"
echo "$root"
