#!/usr/bin/env bash
# tools/setup.sh — install every system and Python package ncc needs to build,
# test and benchmark on Debian 12. Idempotent: skips what is already present.
# Run as root (CI and the dev machines are root); uses sudo otherwise.
set -euo pipefail

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

DEB_PKGS=(
  build-essential cmake pkg-config git
  llvm-19-dev llvm-19-tools clang-19 libclang-rt-19-dev
  zlib1g-dev libzstd-dev libxml2-dev libedit-dev libffi-dev libncurses-dev
  libcmocka-dev
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
  qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  libopenblas-dev libdnnl-dev
  slurm-wlm munge   # tests/slurm: a one-node cluster runs the sharded sweep
)

missing=()
for p in "${DEB_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

PY=${PYTHON:-python3}
if ! $PY -c "import numpy, onnx, onnxruntime, matplotlib" 2>/dev/null; then
  echo "setup: installing Python packages (tools/requirements.txt)"
  $PY -m pip install -q -r "$(dirname "$0")/requirements.txt"
fi
# The model zoo (tests/zoo, ctest label zoo): torch, torchvision, transformers.
if ! $PY -c "import torch, torchvision, transformers" 2>/dev/null; then
  echo "setup: installing Python packages (tools/requirements-zoo.txt)"
  $PY -m pip install -q -r "$(dirname "$0")/requirements-zoo.txt"
fi
# layers.bench_layers (tests/py/test_layers.py) reads OpenVINO's profiles:
# strict CI (tools/test.sh) fails a test skipped for a missing package.
if ! $PY -c "import openvino" 2>/dev/null; then
  echo "setup: installing OpenVINO (bench/requirements-vendors.txt)"
  $PY -m pip install -q "$(grep -o '^openvino[^ ]*' "$(dirname "$0")/../bench/requirements-vendors.txt")"
fi
echo "setup: ok"
