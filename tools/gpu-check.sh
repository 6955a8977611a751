#!/usr/bin/env bash
# tools/gpu-check.sh — the whole GPU check on a machine with a CUDA device,
# in one command and under five minutes (one H200): build ncc (release),
# run the op conformance suite and every generated block on `cuda` against
# the reference interpreter, benchmark SGEMM n=4096 against cuBLAS and the
# blocks at batch 1 and 64, and print one summary (also written as JSON).
#
#   tools/gpu-check.sh [--build-dir DIR] [--no-build] [--quick] [--target T]
#   tools/gpu-check.sh --build-cublas-only DIR   (build the cuBLAS bench only;
#                                                 ctest checks this here)
#
# --target opencl runs the same flow on the OpenCL device (a dry run of the
# script on a machine without a GPU; no cuBLAS); --quick shrinks the sizes.
# Environment: CUDA_HOME (default /usr/local/cuda), CC, NCC_CUDA_ARCH.
# Exit status: 0 all checks pass, 1 a check failed, 3 no usable CUDA device.
# The benchmarks report numbers and fail the check only when they cannot run.
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NCC_GPU_BUILD:-/tmp/ncc-gpu-check}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
JOBS=$(nproc 2>/dev/null || echo 4)
DO_BUILD=1
QUICK=0
T=cuda
PY=${PYTHON:-python3}

build_cublas() { # DIR: compile tests/gpu/cublas_sgemm.c against the toolkit
  mkdir -p "$1" || return 1
  "${CC:-cc}" -O2 -std=c11 -Wall -Werror "$SRC/tests/gpu/cublas_sgemm.c" \
    -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" \
    -Wl,-rpath,"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib" \
    -lcublas -lcudart -o "$1/cublas_sgemm"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --build-cublas-only) build_cublas "${2:?--build-cublas-only needs a directory}"; exit $? ;;
    --build-dir) BUILD=${2:?}; shift ;;
    --no-build) DO_BUILD=0 ;;
    --quick) QUICK=1 ;;
    --target) T=${2:?}; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
  shift
done

START=$(date +%s)
LOG="$BUILD/gpu-check.log"
mkdir -p "$BUILD/work"
: > "$LOG"
SUMMARY=()   # "name|status|detail"
FAILED=0
note() { SUMMARY+=("$1|$2|$3"); [ "$2" = FAIL ] && FAILED=1; printf '%-28s %-7s %s\n' "$1" "$2" "$3"; }
elapsed() { echo $(( $(date +%s) - START ))s; }
json_field() { # FILE KEY: a top-level number of a one-line JSON object
  "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null
}

# ---- build ----
NCC="$BUILD/ncc"
if [ $DO_BUILD = 1 ]; then
  echo "== build (release, $JOBS jobs) in $BUILD"
  if ! cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNCC_SANITIZE=OFF >>"$LOG" 2>&1; then
    echo "gpu-check: cmake failed (see $LOG)" >&2; exit 1
  fi
  if ! make -C "$BUILD" -j"$JOBS" ncc_cli test_backend_ops ncc_gpu_sgemm >>"$LOG" 2>&1; then
    echo "gpu-check: build failed (see $LOG)" >&2; exit 1
  fi
  note build ok "$(elapsed)"
fi
TEST_BIN=$(find "$BUILD" -name test_backend_ops -type f -perm -u+x | head -1)
SGEMM_BIN=$(find "$BUILD" -name ncc_gpu_sgemm -type f -perm -u+x | head -1)

# ---- the device ----
TARGETS=$("$NCC" targets 2>&1)
if ! echo "$TARGETS" | grep -qE "^$T +yes"; then
  echo "$TARGETS" | grep "^$T" >&2
  echo "gpu-check: the $T target is not usable here" >&2
  exit 3
fi
note device ok "$(echo "$TARGETS" | grep "^$T" | sed 's/  */ /g')"

# ---- conformance: every op, every block, against ref ----
if timeout 150 "$TEST_BIN" --target=$T >>"$LOG" 2>&1; then
  note ops-vs-ref ok "test_backend_ops --target=$T"
else
  note ops-vs-ref FAIL "test_backend_ops --target=$T (see $LOG)"
fi
if "$PY" -c 'import numpy, onnx' 2>/dev/null; then
  if NCC="$NCC" NCC_SRC="$SRC" timeout 150 "$PY" "$SRC/tests/gpu/gpu_blocks.py" --target $T \
      --batches 1,7 >>"$LOG" 2>&1; then
    note blocks-vs-ref ok "6 block types, batch 1 and 7"
  else
    note blocks-vs-ref FAIL "gpu_blocks.py --target $T (see $LOG)"
  fi
else
  note blocks-vs-ref skipped "python3 lacks numpy/onnx"
fi

# ---- SGEMM n=4096: ncc's kernel vs cuBLAS (device time, FP32) ----
N=4096
ITERS=20
[ $QUICK = 1 ] && N=2048
[ $T != cuda ] && N=256
if timeout 60 "$SGEMM_BIN" --target $T --n $N --iters $ITERS >"$BUILD/work/ncc_sgemm.json" 2>>"$LOG"; then
  NCC_GF=$(json_field "$BUILD/work/ncc_sgemm.json" gflops)
  NCC_MS=$(json_field "$BUILD/work/ncc_sgemm.json" ms)
  note sgemm-ncc ok "n=$N ${NCC_MS} ms ${NCC_GF} GFLOP/s"
else
  NCC_GF=""
  note sgemm-ncc FAIL "ncc_gpu_sgemm (see $LOG)"
fi
if [ $T = cuda ] && build_cublas "$BUILD/work" >>"$LOG" 2>&1 &&
   timeout 60 "$BUILD/work/cublas_sgemm" $N $ITERS >"$BUILD/work/cublas.json" 2>>"$LOG"; then
  CB_GF=$(json_field "$BUILD/work/cublas.json" gflops)
  CB_MS=$(json_field "$BUILD/work/cublas.json" ms)
  RATIO=""
  [ -n "$NCC_GF" ] && RATIO=$("$PY" -c "print('%.2f' % ($NCC_GF / $CB_GF))")
  note sgemm-cublas ok "n=$N ${CB_MS} ms ${CB_GF} GFLOP/s; ncc/cuBLAS = ${RATIO:-n/a}"
elif [ $T = cuda ]; then
  note sgemm-cublas FAIL "the cuBLAS bench did not build or run (see $LOG)"
else
  note sgemm-cublas skipped "cuBLAS only with --target cuda"
fi

# ---- blocks at batch 1 and 64: ncc cuda (and cpu, side by side) ----
BENCH_JSON="$BUILD/work/blocks_bench.jsonl"
: > "$BENCH_JSON"
if "$PY" -c 'import numpy, onnx' 2>/dev/null; then
  BLOCKS="eltwise mlp conv resblock dwsep transformer"
  [ $QUICK = 1 ] && BLOCKS="mlp resblock transformer"
  printf '%-12s %6s %12s %12s %9s\n' block batch ${T}_ms cpu_ms cpu/$T
  for b in $BLOCKS; do
    M="$BUILD/work/$b.onnx"
    SIZE=""
    [ $T != cuda ] && SIZE="--width 16 --spatial 8x8 --seq 8"
    "$PY" "$SRC/bench/blocks.py" $b --depth 2 $SIZE -o "$M" >>"$LOG" 2>&1 ||
      { note "bench-$b" FAIL "blocks.py"; continue; }
    BATCHES="1 64"
    [ $T != cuda ] && BATCHES="1 4"
    for batch in $BATCHES; do
      row=()
      for t in $T cpu; do
        out="$BUILD/work/$b-$batch-$t.json"
        if timeout 60 "$NCC" bench "$M" --target=$t --batch $batch --warmup 3 --iters 20 --json \
            >"$out" 2>>"$LOG"; then
          cat "$out" >>"$BENCH_JSON"
          row+=("$("$PY" -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["latency_ms"]["median"])' "$out")")
        else
          row+=("err")
        fi
      done
      ratio=$("$PY" -c "import sys; a,b=sys.argv[1:]; print('%.2f' % (float(b)/float(a)) if a!='err' and b!='err' else 'n/a')" "${row[0]}" "${row[1]}")
      printf '%-12s %6s %12s %12s %9s\n' $b $batch "${row[0]}" "${row[1]}" "$ratio"
      [ "${row[0]}" = err ] && note "bench-$b-b$batch" FAIL "ncc bench --target=$T (see $LOG)"
    done
  done
  note blocks-bench ok "depth 2${SIZE:+ ($SIZE)}; batches $BATCHES; medians in $BENCH_JSON"
else
  note blocks-bench skipped "python3 lacks numpy/onnx"
fi

# ---- summary ----
echo
echo "==== ncc GPU check: $(elapsed) ===="
for s in "${SUMMARY[@]}"; do
  IFS='|' read -r name status detail <<<"$s"
  printf '%-28s %-7s %s\n' "$name" "$status" "$detail"
done
"$PY" - "$BUILD/gpu-check.json" "${SUMMARY[@]}" <<'EOF' 2>/dev/null
import json, sys
rows = [dict(zip(("check", "status", "detail"), s.split("|", 2))) for s in sys.argv[2:]]
json.dump({"checks": rows}, open(sys.argv[1], "w"), indent=1)
EOF
echo "(log: $LOG, JSON: $BUILD/gpu-check.json)"
exit $FAILED
