#!/usr/bin/env bash
# tools/quickstart.sh — from a clean clone: install what is missing (with
# every vendor compiler, tools/setup.sh), build the release tree, check ncc on
# the bundled example model (import, run against the recorded onnxruntime
# output, bench), then run the main job: the `quick` block-level experiment
# sweep (bench/experiment), writing out/quick/.
#
#   bash tools/quickstart.sh               # ncc against every vendor
#   bash tools/quickstart.sh --no-vendors  # a fast look: no vendor installed,
#                                          # ncc and onnxruntime only, out/quick-ncc/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

vendors=1
for a in "$@"; do
  case "$a" in
    --no-vendors) vendors=0 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "quickstart: unknown option $a (try --help)" >&2; exit 1 ;;
  esac
done

if [ "$vendors" = 1 ]; then
  bash tools/setup.sh
  out=out/quick
  sweep=()
else
  bash tools/setup.sh --no-vendors
  out=out/quick-ncc
  sweep=(--compilers ncc,onnxruntime)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNCC_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"

mkdir -p out
model=examples/resblock.onnx
echo "== ncc import $model"
build/ncc import "$model" -o out/resblock.nir
echo "   wrote out/resblock.nir ($(wc -l <out/resblock.nir) lines)"
echo "== ncc run $model --target=ref"
build/ncc run "$model" --target=ref --input examples/resblock_input.npy --output-dir out
${PYTHON:-python3} - <<'PY'
import numpy as np
got = np.load("out/y.npy"); want = np.load("examples/resblock_expected.npy")
err = float(np.max(np.abs(got - want)))
print(f"   out/y.npy {got.shape}: max |ncc - onnxruntime| = {err:.2e}")
assert err < 1e-3, "ncc disagrees with the recorded onnxruntime output"
PY
echo "== ncc bench $model --target=ref"
build/ncc bench "$model" --target=ref --batch 4 --warmup 2 --iters 10

echo "== bench/experiment quick --out $out ${sweep[*]}  (the main job; a few minutes)"
NCC="$root/build/ncc" ${PYTHON:-python3} bench/experiment quick --out "$out" "${sweep[@]}"
echo "== report: $out/report.md"
