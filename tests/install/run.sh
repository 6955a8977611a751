#!/usr/bin/env bash
# tests/install/run.sh — `cmake --install` into a temporary prefix, build
# tests/install/embed.c against it with pkg-config only, run it on the
# bundled example and compare with numpy's sum of the recorded output.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$NCC_BUILD" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# shellcheck disable=SC2086
"$CC" $SAN_FLAGS "$NCC_SRC/tests/install/embed.c" -o "$tmp/embed" \
  $(pkg-config --cflags --libs --static ncc)
out=$("$tmp/embed" "$NCC_SRC/examples/resblock.onnx" "$NCC_SRC/examples/resblock_input.npy")
echo "embed: $out"
"$PYTHON" - "$out" "$NCC_SRC/examples/resblock_expected.npy" <<'PY'
import sys, numpy as np
name, n, s = sys.argv[1].split()
want = np.load(sys.argv[2]).astype(np.float64)
assert name == "y" and int(n) == want.size, sys.argv[1]
assert abs(float(s) - want.sum()) <= 1e-3 * max(1.0, abs(want).sum()), (s, want.sum())
print("1 passed, 0 failed")
PY
