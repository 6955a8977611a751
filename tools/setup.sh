#!/usr/bin/env bash
# tools/setup.sh — install every system and Python package ncc needs to build,
# test and benchmark on Debian 12, and the vendor compilers the experiment
# harness compares ncc with (bench/requirements-vendors.txt: onnxruntime,
# OpenVINO, jax, TVM, IREE, torch for TorchInductor, onnx2torch), all from
# Debian's archive and the default PyPI index.  Idempotent: skips what is
# already present.  Run as root (CI and the dev machines are root); uses sudo
# otherwise.
#
#   bash tools/setup.sh                # everything
#   bash tools/setup.sh --no-vendors   # without the vendor compilers and the
#                                      # model zoo's torch/transformers: enough
#                                      # to build ncc and compare it with
#                                      # onnxruntime (a fast look; the test
#                                      # suite, tools/test.sh, wants it all)
#
# Python: $PYTHON, else python3.  Debian's own python3 is "externally
# managed" (PEP 668): pip refuses to install into it unless told
# --break-system-packages, which is what a root set-up of a dedicated
# machine wants; inside a virtual environment or another Python (pyenv) the
# flag is not needed and not passed.
set -euo pipefail

VENDORS=1
for a in "$@"; do
  case "$a" in
    --no-vendors) VENDORS=0 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "setup: unknown option $a (try --help)" >&2; exit 1 ;;
  esac
done
if [ "${NCC_NO_VENDORS:-0}" = 1 ]; then VENDORS=0; fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
here=$(cd "$(dirname "$0")" && pwd)

DEB_PKGS=(
  build-essential cmake pkg-config git
  python3-dev python3-pip
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
PIP=($PY -m pip install -q)
if $PY - <<'PY'
import os, sys, sysconfig
venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
marker = os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")
sys.exit(0 if os.path.exists(marker) and not venv else 1)
PY
then
  PIP+=(--break-system-packages)
fi
# A pip install runs as root; pip's warning about that is expected here.
export PIP_ROOT_USER_ACTION=ignore

# True when every module named imports (found, without importing it: fast).
have() {
  $PY -c 'import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)' "$@" 2>/dev/null
}

if ! $PY -c "import numpy, onnx, onnxruntime, matplotlib" 2>/dev/null; then
  echo "setup: installing Python packages (tools/requirements.txt)"
  "${PIP[@]}" -r "$here/requirements.txt"
fi
if [ "$VENDORS" = 1 ]; then
  # The model zoo (tests/zoo, ctest label zoo): torch, torchvision, transformers.
  # torch from the default PyPI index (~3 min; its CUDA libraries come along).
  if ! have torch torchvision transformers; then
    echo "setup: installing Python packages (tools/requirements-zoo.txt)"
    "${PIP[@]}" -r "$here/requirements-zoo.txt"
  fi
  # Every vendor compiler of the experiment harness (bench/harness/adapters);
  # the test suite needs them too (layers.bench_layers reads OpenVINO's
  # profiles, harness.vendors runs each one), and strict CI (tools/test.sh)
  # fails a test skipped for a missing package.
  if ! have onnxruntime openvino jax jaxlib tvm iree.compiler iree.runtime torch onnx2torch; then
    echo "setup: installing the vendor compilers (bench/requirements-vendors.txt)"
    "${PIP[@]}" -r "$here/../bench/requirements-vendors.txt"
  fi
else
  echo "setup: --no-vendors: the vendor compilers and the model zoo's packages are not installed"
fi
echo "setup: ok"
