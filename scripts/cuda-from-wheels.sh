#!/usr/bin/env bash
# A CUDA Toolkit for building pase-calibrate where none is installed, made
# from NVIDIA's wheels on the Python package index: the runtime and cuBLAS
# (headers and shared libraries), the crt/ headers that cuda_runtime.h
# includes (CUDA 12: in the compiler's wheel; 13: a wheel of their own) and
# CCCL's nv/ headers that cuda_fp16.h includes. pase-calibrate compiles no .cu
# file, so this is all it needs to compile and link; running it still needs a
# GPU and its driver. CI uses it so that pase-calibrate cannot rot unseen.
#
#   scripts/cuda-from-wheels.sh DIR [12|13]   # prints the toolkit root: DIR/toolkit
#   cmake -S . -B build -DPASE_WITH_CUDA=ON -DCUDAToolkit_ROOT=DIR/toolkit
#
# 12 (default) makes CUDA 12.9, whose libraries run on any driver of CUDA 12
# or later; 13 makes CUDA 13.0 (libcudart.so.13, libcublas.so.13), the
# libraries a CUDA 13 PyTorch ships, for a host that has those and not 12's.
#
# Needs python3 with venv (Debian: python3-venv; scripts/install-deps.sh
# --cuda installs it). Safe to run again: a complete DIR/toolkit is kept.
set -euo pipefail
major=${2:-12}
case "$#:$major" in
  1:12 | 2:12) version=12.9 suffix=-cu12 crt=nvcc ;;
  # CUDA 13's wheels drop the -cu12 from their names, and its crt/ headers
  # have a wheel of their own.
  2:13) version=13.0 suffix= crt=crt ;;
  *) echo "usage: scripts/cuda-from-wheels.sh DIR [12|13]" >&2; exit 2 ;;
esac
dir=$(mkdir -p "$1" && cd "$1" && pwd)
root="$dir/toolkit"
if [ -f "$root/version.txt" ] && grep -q "CUDA Version $version" "$root/version.txt"; then
  echo "$root"
  exit 0
fi
if [ ! -x "$dir/venv/bin/pip" ]; then
  python3 -m venv "$dir/venv" >&2
fi
rm -rf "$dir/wheels"
"$dir/venv/bin/pip" download --quiet --no-deps -d "$dir/wheels" \
  "nvidia-cuda-runtime$suffix==$version.*" "nvidia-cublas$suffix==$version.*" "nvidia-cuda-$crt$suffix==$version.*" \
  "nvidia-cuda-cccl$suffix==$version.*" >&2
rm -rf "$root.partial"
python3 - "$dir/wheels" "$root.partial" "$major" <<'PY'
import glob, os, sys, zipfile
wheels, root, major = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.join(root, "include"))
os.makedirs(os.path.join(root, "lib64"))
wanted_libs = {"libcudart.so." + major, "libcublas.so." + major, "libcublasLt.so." + major}
runtime_version = None
for wheel in sorted(glob.glob(os.path.join(wheels, "*.whl"))):
    package = os.path.basename(wheel).split("-")[0]  # nvidia_cuda_nvcc_cu12, nvidia_cuda_nvcc
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            # CUDA 12: nvidia/<package>/{include,lib}/...; CUDA 13: nvidia/cu13/{include,lib}/...
            parts = name.split("/")
            if len(parts) < 4 or parts[0] != "nvidia":
                continue
            kind, rest = parts[2], "/".join(parts[3:])
            if kind == "include" and rest and not rest.endswith("/"):
                # The compiler's crt/ and CCCL's nv/, which the runtime's headers include.
                if package.startswith(("nvidia_cuda_nvcc", "nvidia_cuda_crt")) and not rest.startswith("crt/"):
                    continue
                if package.startswith("nvidia_cuda_cccl") and not rest.startswith("nv/"):
                    continue
                target = os.path.join(root, "include", rest)
            elif kind == "lib" and rest in wanted_libs:
                target = os.path.join(root, "lib64", rest)
            else:
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as source, open(target, "wb") as out:
                out.write(source.read())
    if package.startswith("nvidia_cuda_runtime"):
        runtime_version = os.path.basename(wheel).split("-")[1]
for lib in wanted_libs:
    if not os.path.exists(os.path.join(root, "lib64", lib)):
        sys.exit("cuda-from-wheels: %s is in none of the wheels" % lib)
    os.symlink(lib, os.path.join(root, "lib64", lib[:-len("." + major)]))
# FindCUDAToolkit takes the version from here when there is no nvcc.
with open(os.path.join(root, "version.txt"), "w") as f:
    f.write("CUDA Version %s\n" % runtime_version)
PY
rm -rf "$root"
mv "$root.partial" "$root"
rm -rf "$dir/wheels"
echo "$root"
