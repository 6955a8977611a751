#!/usr/bin/env bash
# tests/install/run.sh — `cmake --install` into a temporary prefix, build
# tests/install/embed.c against it with pkg-config only, run it on the
# bundled example and compare its whole output, element by element, with
# onnxruntime's on the same model and input (and with the recorded
# examples/resblock_expected.npy). Exit 77 without numpy/onnxruntime.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$PYTHON" -c "import numpy, onnxruntime" 2>/dev/null; then
  echo "skipped: numpy or onnxruntime missing (pip install -r tools/requirements.txt)"
  exit 77
fi
cmake --install "$NCC_BUILD" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# shellcheck disable=SC2086,SC2046
"$CC" $SAN_FLAGS "$NCC_SRC/tests/install/embed.c" -o "$tmp/embed" \
  $(pkg-config --cflags --libs --static ncc)
model="$NCC_SRC/examples/resblock.onnx" x="$NCC_SRC/examples/resblock_input.npy"
out=$("$tmp/embed" "$model" "$x" "$tmp/y.npy")
echo "embed: $out"
"$PYTHON" - "$out" "$model" "$x" "$tmp/y.npy" "$NCC_SRC/examples/resblock_expected.npy" <<'PY'
import sys
import numpy as np
import onnxruntime as ort
line, model, xpath, ypath, recorded = sys.argv[1:]
name, n = line.split()
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
want = sess.run(None, {sess.get_inputs()[0].name: np.load(xpath)})[0]
got = np.load(ypath)
assert name == sess.get_outputs()[0].name, (name, sess.get_outputs()[0].name)
assert int(n) == want.size, (n, want.size)
for label, ref in (("onnxruntime", want), ("recorded", np.load(recorded))):
    assert got.dtype == ref.dtype and got.shape == ref.shape, \
        (label, got.dtype, got.shape, ref.dtype, ref.shape)
    bad = ~np.isclose(got, ref, rtol=1e-4, atol=1e-5)
    if bad.any():
        i = np.unravel_index(np.argmax(np.abs(got - ref)), got.shape)
        sys.exit("install: %d of %d elements differ from %s; worst at %s: %r vs %r"
                 % (bad.sum(), got.size, label, list(i), got[i], ref[i]))
print("1 passed, 0 failed")
PY
