#!/usr/bin/env bash
# tools/test.sh — the whole test suite from a clean clone: installs what is
# missing, builds ncc with clang-19 + ASan/UBSan (+ libFuzzer targets), runs
# every ctest test, and checks that the gcc release build compiles too
# (-Werror with both compilers).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)

bash "$root/tools/setup.sh"

rel=${NCC_RELEASE_BUILD:-$root/build}
cmake -S "$root" -B "$rel" -DCMAKE_BUILD_TYPE=Release -DNCC_TESTS=OFF >/dev/null
cmake --build "$rel" -j"$jobs"

san=${NCC_TEST_BUILD:-$root/build-test}
cmake -S "$root" -B "$san" -DCMAKE_C_COMPILER=clang-19 -DCMAKE_BUILD_TYPE=Debug \
  -DNCC_SANITIZE=ON -DNCC_FUZZ=ON >/dev/null
cmake --build "$san" -j"$jobs"

cd "$san"
ctest --output-on-failure -j"$jobs" "$@"
